#!/usr/bin/env bash
# Benchmarks heapest against jeprof and go tool pprof on the same inputs in
# the same run, and prints a Markdown report (docs/benchmarks.md is its
# output: bench/run.sh > docs/benchmarks.md).
#
# Inputs, generated fresh into a temporary directory:
#   - synthetic jemalloc heap_v2 dumps (bench/gendump): 5,000 stacks x 24
#     frames x 16 threads (~1.5 MB) and 20,000 stacks (~6 MB), prof_unbias
#     encoding (the jemalloc 5.3 default) and a raw-mode variant, whose
#     frames point into a real binary (a copy of heapest) and libjemalloc;
#   - a real Go heap profile with >= 100,000 samples (bench/gengoheap).
# Needs: go, jeprof (libjemalloc-dev), python3, GNU time (/usr/bin/time);
# hyperfine when present (else a date-based loop). RUNS sets the number of
# timed runs of the slow tools (default 5); heapest gets 4x as many.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

for tool in jeprof python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 2; }
done

log() { echo "bench: $*" >&2; }

log "building heapest and the generators"
go build -o "$W/heapest" ./cmd/heapest
go build -o "$W/gendump" ./bench/gendump
go build -o "$W/gengoheap" ./bench/gengoheap
# The dumps' frames point into this copy; jeprof reads it with nm/addr2line.
cp "$W/heapest" "$W/target"

log "generating inputs"
"$W/gendump" -binary "$W/target" -stacks 5000 -unbias -seed 1 -o "$W/je-5k.heap"
"$W/gendump" -binary "$W/target" -stacks 5000 -seed 2 -o "$W/je-5k-raw.heap"
"$W/gendump" -binary "$W/target" -stacks 20000 -unbias -seed 3 -o "$W/je-20k.heap"
"$W/gendump" -binary "$W/target" -stacks 20000 -seed 4 -o "$W/je-20k-raw.heap"
"$W/gengoheap" -o "$W/go-heap.pb.gz"

# measure NAME RUNS CMD...: prints "WALL CPU", the median wall time and the
# mean user+system CPU time (children included) of CMD over RUNS runs after
# one warm-up, in seconds; stdout and stderr are discarded. The median and
# CPU time are the steadier figures on a shared machine.
measure() {
  local name=$1 runs=$2; shift 2
  if command -v hyperfine >/dev/null; then
    hyperfine -N --style none --warmup 1 --runs "$runs" --export-json "$W/$name.json" \
      -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["median"], r["user"]+r["system"])' "$W/$name.json"
  else
    "$@" >/dev/null 2>&1
    local t0 t1 cpu times=()
    /usr/bin/time -o "$W/$name.cpu" -f "%U %S" "$@" >/dev/null 2>&1
    cpu=$(tail -1 "$W/$name.cpu")
    for ((i = 0; i < runs; i++)); do
      t0=$(date +%s%N)
      "$@" >/dev/null 2>&1
      t1=$(date +%s%N)
      times+=($((t1 - t0)))
    done
    python3 -c 'import statistics,sys; u,s=sys.argv[1].split(); print(statistics.median(map(int,sys.argv[2:]))/1e9, float(u)+float(s))' "$cpu" "${times[@]}"
  fi
}

# peak_kib CMD...: peak resident set size of CMD in KiB (GNU time -v).
peak_kib() {
  /usr/bin/time -v "$@" 2>"$W/time.txt" >/dev/null
  sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$W/time.txt"
}

# Fail loudly (not with a made-up number) when a tool cannot read an input.
check() {
  if ! "$@" >/dev/null 2>"$W/err.txt"; then
    log "failed: $*"; cat "$W/err.txt" >&2; exit 1
  fi
}

rows=()
for dump in je-5k je-5k-raw je-20k je-20k-raw; do
  f="$W/$dump.heap"
  check "$W/heapest" report --by func "$f"
  check jeprof --text --show_bytes "$W/target" "$f"
  log "timing $dump"
  h=$(measure "h-$dump" $((4 * RUNS)) "$W/heapest" report --by func "$f")
  j=$(measure "j-$dump" "$RUNS" jeprof --text --show_bytes "$W/target" "$f")
  rss=$(peak_kib "$W/heapest" report --by func "$f")
  refrss=$(peak_kib jeprof --text --show_bytes "$W/target" "$f")
  rows+=("jemalloc|$dump|$(stat -c %s "$f")|$h|$j|$rss|$refrss|jeprof --text --show_bytes")
done

f="$W/go-heap.pb.gz"
nsamples=$(go tool pprof -traces "$f" 2>/dev/null | grep -c -- '-----------+')
check go tool pprof -top "$f"
heapest_go=ok
"$W/heapest" report --by func "$f" >/dev/null 2>"$W/err.txt" || heapest_go=$(head -1 "$W/err.txt")
if [[ $heapest_go == ok ]]; then
  log "timing go heap profile"
  h=$(measure h-go $((4 * RUNS)) "$W/heapest" report --by func "$f")
  p=$(measure p-go "$RUNS" go tool pprof -top "$f")
  rss=$(peak_kib "$W/heapest" report --by func "$f")
  refrss=$(peak_kib go tool pprof -top "$f")
  rows+=("go|go-heap ($nsamples samples)|$(stat -c %s "$f")|$h|$p|$rss|$refrss|go tool pprof -top")
fi

timer=$(command -v hyperfine >/dev/null && hyperfine --version || echo "date +%s%N loop")
printf '%s\n' "${rows[@]}" >&2 # raw figures, in case rendering fails
python3 bench/render.py "$RUNS" "$timer" "$heapest_go" "${rows[@]}"
