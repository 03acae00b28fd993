#!/usr/bin/env bash
# Compare `kvrender build catalog/` with the least a kustomize pipeline does for the same output:
# `kubectl kustomize` on a kustomization that only lists the 244 rendered objects as plain
# resources. Prints both medians and the ratio. Works from a clean clone; needs kubectl (or a
# standalone kustomize) and uses hyperfine when it is installed.
#
#   bench/catalog.sh            # 30 runs each
#   RUNS=100 bench/catalog.sh
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-3}"

cargo build --release --locked --quiet
KVRENDER="$PWD/target/release/kvrender"

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

if command -v hyperfine >/dev/null 2>&1; then
    json="$work/hyperfine.json"
    hyperfine --style basic -N --warmup "$WARMUP" --runs "$RUNS" \
        --command-name "kvrender build catalog/" "$KV_CMD" \
        --command-name "${KUSTOMIZE[*]} (244 plain resources)" "$KZ_CMD" \
        --export-json "$json" >&2
    # The two medians, in seconds, in command order.
    mapfile -t medians < <(grep -o '"median": *[0-9.e+-]*' "$json" | sed 's/.*: *//')
    kv_ms="$(awk -v s="${medians[0]}" 'BEGIN { printf "%.2f", s * 1000 }')"
    kz_ms="$(awk -v s="${medians[1]}" 'BEGIN { printf "%.2f", s * 1000 }')"
else
    sample() { # run "$@" RUNS times, print each duration in nanoseconds
        for _ in $(seq "$WARMUP"); do "$@" >/dev/null 2>&1; done
        for _ in $(seq "$RUNS"); do
            start="$(date +%s%N)"
            "$@" >/dev/null 2>&1
            echo $(($(date +%s%N) - start))
        done
    }
    kv_ms="$(sample "$KVRENDER" build catalog/ | median_ms)"
    kz_ms="$(sample "${KUSTOMIZE[@]}" "$work/kustomization" | median_ms)"
fi

ratio="$(awk -v a="$kz_ms" -v b="$kv_ms" 'BEGIN { printf "%.1f", a / b }')"
echo "kvrender build catalog/:          median ${kv_ms} ms"
echo "${KUSTOMIZE[*]} (plain resources): median ${kz_ms} ms"
echo "ratio: ${ratio}x (target: at least 50x)"
