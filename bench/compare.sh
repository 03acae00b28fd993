#!/usr/bin/env bash
# Whole-command benchmarks, side by side in one run, with the ratios issue 7 asks for:
#
#   kvrender expand on 1k/2k/10k/100k generated VMs, the parse+emit floor on the same files,
#   `kubectl kustomize` merely listing the same VMs (1k and 2k: it grows with the square of the
#   count), `kvrender build catalog/` against kustomize listing the 244 catalog objects, peak
#   memory, and the speed-up from 1 to 2 threads.
#
# Usage: bench/compare.sh [--quick]     (--quick: fewer runs, no 100k)
# Needs: cargo; python3; hyperfine (else a loop timed with bash's clock is used); kubectl (else
# the kustomize rows are skipped); GNU time at /usr/bin/time for peak memory.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
QUICK=0
[[ "${1:-}" == "--quick" ]] && QUICK=1
RUNS=$((QUICK ? 3 : 10))
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kvrender-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

say() { printf '%s\n' "$*" >&2; }

say "building (release) ..."
(cd "$ROOT" && cargo build --release --quiet --bin kvrender --example gen_vms --example floor)
# Copies of the binaries, as `cargo install` places them: a file the linker just wrote can stay
# cached in small pages and start slower than the same bytes copied (bench/NOTES.md, "A copy
# of the binary"). Both sides of every ratio are timed from copies.
cp "$ROOT/target/release/kvrender" "$WORK/kvrender"
cp "$ROOT/target/release/examples/floor" "$WORK/floor"
KV="$WORK/kvrender"
FLOOR="$WORK/floor"
GEN="$ROOT/target/release/examples/gen_vms"
BUNDLE="$ROOT/testdata/anchors/common-instancetypes-bundle.yaml"

COUNTS=(1000 2000 10000 100000)
((QUICK)) && COUNTS=(1000 2000 10000)
for n in "${COUNTS[@]}"; do
  "$GEN" "$n" > "$WORK/vms-$n.yaml"
done

# Resolve against the embedded catalog when the binary has one, else against the bundle.
CATALOG=()
if ! "$KV" expand "$WORK/vms-1000.yaml" > /dev/null 2>&1; then
  CATALOG=(--catalog "$BUNDLE")
  say "note: the embedded catalog does not resolve the generated VMs; using --catalog $BUNDLE"
fi
if ! "$KV" expand "${CATALOG[@]}" "$WORK/vms-1000.yaml" > /dev/null; then
  say "error: kvrender expand fails on the generated VMs"; exit 1
fi

HAVE_HYPERFINE=0
if command -v hyperfine > /dev/null; then
  HAVE_HYPERFINE=1
else
  say "NOTE: hyperfine is not installed (apt-get install hyperfine); falling back to a loop"
  say "      timed with bash's microsecond clock: the same medians, no spread statistics."
fi

declare -A MEDIAN RSS
# Runs per command, where the default is too few: a catalog build lasts milliseconds, and a
# moment of noise on a shared machine moves the median of 10 of them.
declare -A RUNS_OF=([build-catalog]=$((QUICK ? 10 : 60)))
WARMUP=1

# now_us: set NOW_US to the wall clock in microseconds, from bash's EPOCHREALTIME (bash 5)
# without starting a process, or from date(1) on an older bash.
now_us() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    NOW_US=${EPOCHREALTIME//[^0-9]/}
  else
    NOW_US=$(($(date +%s%N) / 1000))
  fi
}

# median NAME CMD...: the median wall time in seconds of CMD (stdout to /dev/null).
median() {
  local name="$1"; shift
  local m
  if ((HAVE_HYPERFINE)); then
    # -N: no shell in between. For a command of a few milliseconds, hyperfine's correction
    # for the shell's own start-up is coarser than the command's time.
    hyperfine -N --style none --warmup "$WARMUP" --runs "${RUNS_OF[$name]:-$RUNS}" \
      --output null --export-json "$WORK/$name.json" -- "$(printf '%q ' "$@")" > /dev/null
    m=$(python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$WORK/$name.json")
  else
    # Timed with bash's own microsecond clock: no process but the command's own is started
    # per run (GNU time's elapsed time has a 10 ms step, coarser than a catalog build).
    local times=() start end
    for ((i = 0; i < WARMUP; i++)); do "$@" > /dev/null 2>> "$WORK/stderr" || true; done
    for ((i = 0; i < ${RUNS_OF[$name]:-$RUNS}; i++)); do
      now_us
      start=$NOW_US
      "$@" > /dev/null 2>> "$WORK/stderr" || true
      now_us
      end=$NOW_US
      times+=($((end - start)))
    done
    m=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.4f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) / 1e6}')
  fi
  MEDIAN[$name]=$m
  /usr/bin/time -v -o "$WORK/rss" "$@" > /dev/null 2>> "$WORK/stderr" || true
  RSS[$name]=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$WORK/rss")
  printf '  %-28s %9.3f s  %8s MiB\n' "$name" "$m" "${RSS[$name]}" >&2
}

say "timing ($RUNS runs each) ..."
for n in "${COUNTS[@]}"; do
  median "expand-$n" "$KV" expand "${CATALOG[@]}" "$WORK/vms-$n.yaml"
  median "floor-$n" "$FLOOR" "$WORK/vms-$n.yaml"
done
median "expand-10000-t1" "$KV" --threads 1 expand "${CATALOG[@]}" "$WORK/vms-10000.yaml"
median "expand-10000-t2" "$KV" --threads 2 expand "${CATALOG[@]}" "$WORK/vms-10000.yaml"

# The speed-up from 1 to 2 threads, measured with the two runs interleaved (1, 2, 1, 2, ...) so
# that load drifting on a shared machine hits both sides alike: median of 1-thread times over
# median of 2-thread times, over PAIRS pairs after one warm-up pair.
PAIRS=$((QUICK ? 5 : 15))
SPEEDUP=$(python3 - "$PAIRS" "$KV" "$WORK/vms-10000.yaml" "${CATALOG[@]}" <<'PY'
import statistics, subprocess, sys, time
pairs, kv, vms, catalog = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
def run(threads):
    start = time.perf_counter()
    subprocess.run([kv, "--threads", str(threads), "expand", *catalog, vms],
                   stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start
run(1); run(2)
one, two = [], []
for _ in range(pairs):
    one.append(run(1))
    two.append(run(2))
print("%.2f" % (statistics.median(one) / statistics.median(two)))
PY
)
say "  speed-up 1 -> 2 threads (interleaved, $PAIRS pairs): $SPEEDUP"

HAVE_KUBECTL=0
if command -v kubectl > /dev/null; then
  HAVE_KUBECTL=1
  for n in 1000 2000; do
    mkdir -p "$WORK/kust-$n"
    cp "$WORK/vms-$n.yaml" "$WORK/kust-$n/"
    printf 'resources:\n- vms-%s.yaml\n' "$n" > "$WORK/kust-$n/kustomization.yaml"
    median "kustomize-$n" kubectl kustomize "$WORK/kust-$n"
  done
  mkdir -p "$WORK/kust-catalog"
  cp "$BUNDLE" "$WORK/kust-catalog/bundle.yaml"
  printf 'resources:\n- bundle.yaml\n' > "$WORK/kust-catalog/kustomization.yaml"
  median "kustomize-catalog" kubectl kustomize "$WORK/kust-catalog"
else
  say "NOTE: kubectl is not installed; the kustomize comparisons are skipped"
fi

HAVE_BUILD=0
if [[ -d "$ROOT/catalog" ]] && "$KV" build "$ROOT/catalog" > /dev/null 2>&1; then
  HAVE_BUILD=1
  median "build-catalog" "$KV" build "$ROOT/catalog"
else
  say "NOTE: \`kvrender build catalog/\` is not available in this tree; its row is skipped"
fi

ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
FAILED=0
# check LABEL VALUE OP LIMIT
check() {
  local ok
  ok=$(python3 -c "import sys; v,l=float(sys.argv[1]),float(sys.argv[3]); print('PASS' if (v<=l if sys.argv[2]=='<=' else v>=l) else 'FAIL')" "$2" "$3" "$4")
  [[ $ok == FAIL ]] && FAILED=1
  printf '%-58s %8s  (target %s %s)  %s\n' "$1" "$2" "$3" "$4" "$ok"
}

echo
echo "kvrender $("$KV" --version | awk '{print $2}') on $(nproc) cores, $RUNS runs, medians"
echo
printf '%-28s %10s %10s\n' command "median s" "peak MiB"
for k in $(printf '%s\n' "${!MEDIAN[@]}" | sort -V); do
  printf '%-28s %10s %10s\n' "$k" "${MEDIAN[$k]}" "${RSS[$k]}"
done
echo
check "expand 10k / parse+emit floor 10k" "$(ratio "${MEDIAN[expand-10000]}" "${MEDIAN[floor-10000]}")" "<=" 1.5
check "expand 10k / expand 1k (linearity)" "$(ratio "${MEDIAN[expand-10000]}" "${MEDIAN[expand-1000]}")" "<=" 12
if [[ -n "${MEDIAN[expand-100000]:-}" ]]; then
  check "expand 100k / expand 10k (linearity)" "$(ratio "${MEDIAN[expand-100000]}" "${MEDIAN[expand-10000]}")" "<=" 12
fi
check "peak memory, expand 10k (MiB)" "${RSS[expand-10000]}" "<=" 100
check "speed-up 1 -> 2 threads, expand 10k (interleaved)" "$SPEEDUP" ">=" 1.7
if ((HAVE_KUBECTL)); then
  printf '%-58s %8s\n' "kustomize 1k / expand 1k (no target)" "$(ratio "${MEDIAN[kustomize-1000]}" "${MEDIAN[expand-1000]}")"
  check "kustomize 2k / expand 2k" "$(ratio "${MEDIAN[kustomize-2000]}" "${MEDIAN[expand-2000]}")" ">=" 30
  if ((HAVE_BUILD)); then
    check "kustomize 244 objects / build catalog/" "$(ratio "${MEDIAN[kustomize-catalog]}" "${MEDIAN[build-catalog]}")" ">=" 50
  fi
fi
exit $FAILED
