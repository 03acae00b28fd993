#!/usr/bin/env bash
# Compare `kvrender build catalog/` with the least a kustomize pipeline does for the same output:
# `kubectl kustomize` on a kustomization that only lists the 244 rendered objects as plain
# resources. Prints both medians and the ratio. Works from a clean clone; needs kubectl (or a
# standalone kustomize) and uses hyperfine (with python3 to read its exports) when installed.
#
#   bench/catalog.sh            # 30 runs each, in 5 alternating rounds, 10 uncounted at each start
#   RUNS=100 ROUNDS=10 bench/catalog.sh
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-10}"

cargo build --release --locked --quiet

if command -v kubectl >/dev/null 2>&1; then
    KUSTOMIZE=(kubectl kustomize)
elif command -v kustomize >/dev/null 2>&1; then
    KUSTOMIZE=(kustomize build)
else
    echo "bench/catalog.sh: needs kubectl or kustomize on PATH" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/kvrender-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Time a copy of the binary, as `cargo install` places it, not the file the linker just wrote:
# on kernels that cache files in large pages, a file written in small pieces (as a linker
# writes) stays cached in small ones, and the same bytes start measurably slower from it
# (bench/NOTES.md, "A copy of the binary"). kubectl is timed as installed, too.
KVRENDER="$work/kvrender"
cp target/release/kvrender "$KVRENDER"

# The kustomization: one file per rendered object, listed as plain resources.
"$KVRENDER" build catalog/ -o "$work/kustomization" 2>/dev/null
(
    cd "$work/kustomization"
    echo "resources:"
    for f in *.yaml; do echo "- $f"; done
) >"$work/kustomization.yaml.tmp"
mv "$work/kustomization.yaml.tmp" "$work/kustomization/kustomization.yaml"

# Both sides must produce the same 244 objects, or the comparison means nothing.
count() { grep -c '^kind: ' || true; }
ours="$("$KVRENDER" build catalog/ | count)"
theirs="$("${KUSTOMIZE[@]}" "$work/kustomization" | count)"
if [ "$ours" != "$theirs" ]; then
    echo "bench/catalog.sh: kvrender printed $ours objects, kustomize $theirs" >&2
    exit 1
fi
echo "objects: $ours (kvrender) / $theirs (${KUSTOMIZE[*]})"

KV_CMD="$KVRENDER build catalog/"
KZ_CMD="${KUSTOMIZE[*]} $work/kustomization"

median_ms() { # median of nanosecond samples on stdin, in milliseconds
    sort -n | awk '{ a[NR] = $1 } END {
        m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        printf "%.2f", m / 1e6 }'
}

# The two commands are timed in ROUNDS alternating rounds, each of RUNS / ROUNDS runs of one
# and then of the other: kvrender's runs alone last well under a second, and a slow moment on
# a shared machine would otherwise fall on one side only. Each round begins with WARMUP runs
# (10) that are not counted, for both commands alike: on a virtual machine, a short command's
# first runs after anything else (the other command, a pause, a script's own steps) take up to
# twice as long as the runs that follow, which settle after about ten (bench/NOTES.md).
ROUNDS="${ROUNDS:-5}"
per_round=$(((RUNS + ROUNDS - 1) / ROUNDS))

if command -v hyperfine >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
    # -N: no shell in between; for a command of a few milliseconds hyperfine's correction for
    # a shell's start-up is coarser than the command.
    hyperfine -N --style none --warmup "$WARMUP" --runs 1 --output null "$KV_CMD" "$KZ_CMD" >/dev/null
    for round in $(seq "$ROUNDS"); do
        hyperfine -N --style none --warmup "$WARMUP" --runs "$per_round" --output null \
            --export-json "$work/kv-$round.json" "$KV_CMD" >/dev/null
        hyperfine -N --style none --warmup "$WARMUP" --runs "$per_round" --output null \
            --export-json "$work/kz-$round.json" "$KZ_CMD" >/dev/null
    done
    times_ns() { # every run's wall time from the JSON exports named by a glob, in nanoseconds
        python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    for t in json.load(open(path))["results"][0]["times"]:
        print(int(t * 1e9))
PY
    }
    kv_ms="$(times_ns "$work"/kv-*.json | median_ms)"
    kz_ms="$(times_ns "$work"/kz-*.json | median_ms)"
else
    now_us() { # set NOW_US to the wall clock in microseconds, without a process on bash 5
        if [ -n "${EPOCHREALTIME:-}" ]; then
            NOW_US=${EPOCHREALTIME//[^0-9]/}
        else
            NOW_US=$(($(date +%s%N) / 1000))
        fi
    }
    time_once() { # run "$@" once, print its duration in nanoseconds
        local start
        now_us
        start=$NOW_US
        "$@" >/dev/null 2>&1
        now_us
        echo $(((NOW_US - start) * 1000))
    }
    warm() { for _ in $(seq "$WARMUP"); do "$@" >/dev/null 2>&1 || true; done; }
    for _ in $(seq "$ROUNDS"); do
        warm "$KVRENDER" build catalog/
        for _ in $(seq "$per_round"); do time_once "$KVRENDER" build catalog/ >>"$work/kv.ns"; done
        warm "${KUSTOMIZE[@]}" "$work/kustomization"
        for _ in $(seq "$per_round"); do time_once "${KUSTOMIZE[@]}" "$work/kustomization" >>"$work/kz.ns"; done
    done
    kv_ms="$(median_ms <"$work/kv.ns")"
    kz_ms="$(median_ms <"$work/kz.ns")"
fi
echo "runs: $((ROUNDS * per_round)) of each, in $ROUNDS alternating rounds"

ratio="$(awk -v a="$kz_ms" -v b="$kv_ms" 'BEGIN { printf "%.1f", a / b }')"
echo "kvrender build catalog/:          median ${kv_ms} ms"
echo "${KUSTOMIZE[*]} (plain resources): median ${kz_ms} ms"
echo "ratio: ${ratio}x (target: at least 50x)"
