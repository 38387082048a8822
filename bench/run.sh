#!/usr/bin/env bash
# Benchmarks heapest on every input shape of issue 9, against jeprof,
# `go tool pprof` and `wc -l` (the hardware floor) on the same files in the
# same run, and prints a Markdown report on standard output
# (bash bench/run.sh > docs/benchmarks.md); progress goes to standard error.
#
# Inputs, generated fresh into a temporary directory (sizes are targets;
# the report prints the real ones):
#   je-sym-{1,30,150}MB   jemalloc heap_v2 dumps whose frames point into a
#                         real binary (a copy of heapest) and libjemalloc
#                         (bench/gendump), reported --by func and --by stack;
#   je-unsym-{1.5,6,30}MB jemalloc dumps of a made-up program of 1,000,000
#                         functions mapped from a file that does not exist, so
#                         nothing symbolizes, --by func and --by stack;
#   go-{6,60}MB           real Go heap profiles (bench/gengoheap), sized by
#                         their decompressed bytes;
#   nettrace-{10,100}MB   .NET AllocationSampled traces (bench/gentrace);
#   pprof output          `--format pprof -o FILE` against the table, on the
#                         30 MB symbolized dump.
# heapest runs as `heapest report [--by func|stack] [--format pprof -o F] FILE`,
# so the same script measures today's binary and later ones.
#
# Environment:
#   ONLY=LIST     groups to run, comma-separated: je-sym, je-unsym, go,
#                 nettrace, pprof (default: all of them)
#   SIZES=small   only the smallest input of each group: a quick run, about a
#                 minute (most of it jeprof); SIZES=all is the default
#   RUNS=N        timed runs per command, after one warm-up (default 3, and 1
#                 with SIZES=small)
#   JEPROF_MAX_MB=N  run jeprof only on dumps up to N MB (default 2: the
#                 1 MB and 1.5 MB dumps); it takes 2-4 s of CPU per MB
#   HEAPEST=PATH  measure this heapest binary instead of building ./cmd/heapest
#   TIMER=time    time wall clock with GNU time too, not hyperfine
#   KEEP=1        keep the work directory (its path is printed)
# Needs: go, python3, GNU time (/usr/bin/time), gzip; jeprof (libjemalloc-dev)
# and hyperfine when present (scripts/install-deps.sh installs both).
#
# Per command: a warm-up run under GNU time gives the peak RSS; then, with
# hyperfine, wall time is the median and CPU time (user + system, children
# included) the mean of RUNS runs; without it, GNU time measures RUNS runs
# (medians; its CPU times have a 10 ms resolution).
set -euo pipefail
cd "$(dirname "$0")/.."
ONLY=${ONLY:-je-sym,je-unsym,go,nettrace,pprof}
SIZES=${SIZES:-all}
if [[ $SIZES == small ]]; then RUNS=${RUNS:-1}; else RUNS=${RUNS:-3}; fi
JEPROF_MAX_MB=${JEPROF_MAX_MB:-2}
TIMER=${TIMER:-}
W=$(mktemp -d)
if [[ -n ${KEEP:-} ]]; then
  echo "bench: work directory $W" >&2
else
  trap 'rm -rf "$W"' EXIT
fi

log() { echo "bench: [${SECONDS}s] $*" >&2; }
die() { log "$*"; exit 2; }

for tool in go python3 /usr/bin/time gzip; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
[[ $SIZES == all || $SIZES == small ]] || die "SIZES must be all or small, not $SIZES"
for g in ${ONLY//,/ }; do
  [[ $g =~ ^(je-sym|je-unsym|go|nettrace|pprof)$ ]] || die "unknown group $g in ONLY"
done
want() { [[ ,$ONLY, == *,$1,* ]]; }
# big: whether the larger inputs are asked for.
big() { [[ $SIZES == all ]]; }
have_jeprof=$(command -v jeprof || true)
[[ -n $have_jeprof ]] || log "jeprof not found: no jeprof comparisons (scripts/install-deps.sh installs it)"
use_hyperfine=""
[[ $TIMER != time ]] && command -v hyperfine >/dev/null && use_hyperfine=1

log "building heapest and the generators"
if [[ -n ${HEAPEST:-} ]]; then
  cp "$HEAPEST" "$W/heapest"
else
  # As README.md builds it: static (heapest needs no cgo), which saves
  # the dynamic loader's start-up.
  CGO_ENABLED=0 go build -o "$W/heapest" ./cmd/heapest
fi
for g in gendump gengoheap gentrace; do go build -o "$W/$g" "./bench/$g"; done
# The symbolized dumps' frames point into this copy; jeprof reads it with nm.
cp "$W/heapest" "$W/target"
# jeprof needs a program on the command line: for the dumps nothing
# symbolizes, a stripped copy (jeprof finds no symbols in it either).
strip -o "$W/target.stripped" "$W/target" 2>/dev/null || cp "$W/target" "$W/target.stripped"
# go tool pprof through its cached executable, so the go command's own start
# is not counted.
pprof=$(go tool -n pprof 2>/dev/null || true)
[[ -x $pprof ]] || pprof="go tool pprof"

# Results, read by bench/render.py:
#   inputs.tsv:  name group file_bytes raw_bytes description
#   results.tsv: case input tool args wall_s cpu_s peak_kib error
printf '' >"$W/inputs.tsv"
printf '' >"$W/results.tsv"

# input NAME GROUP FILE CMD...: runs the generator CMD (which writes FILE)
# and records the input; the generator's standard error describes it.
input() {
  local name=$1 group=$2 file=$3; shift 3
  log "generating $name"
  "$@" 2>"$W/gen.txt" || { cat "$W/gen.txt" >&2; die "generator failed: $*"; }
  local size raw
  size=$(stat -c %s "$file")
  raw=$size
  [[ $file == *.gz ]] && raw=$(gzip -dc "$file" | wc -c)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$group" "$size" "$raw" \
    "$(tail -1 "$W/gen.txt" | sed 's/^[a-z]*: [^:]*: //')" >>"$W/inputs.tsv"
}

# median: the median of the numbers on standard input.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# measure CASE INPUT TOOL ARGS CMD...: times CMD (standard output
# discarded) and records wall, CPU and peak RSS; a failing CMD is recorded
# with its first error line instead of numbers.
measure() {
  local case=$1 in=$2 tool=$3 args=$4; shift 4
  log "timing $case: $tool $args"
  # The warm-up run: checks that CMD works, fills the page cache, and
  # measures the peak RSS, which does not depend on the cache.
  if ! /usr/bin/time -o "$W/warm.txt" -f '%e %U %S %M' "$@" >/dev/null 2>"$W/err.txt"; then
    local msg
    msg=$(grep -v '^$' "$W/err.txt" | tail -1 | tr '\t' ' ' | cut -c1-160)
    log "failed: $* (${msg:-no message})"
    printf '%s\t%s\t%s\t%s\t\t\t\t%s\n' "$case" "$in" "$tool" "$args" "${msg:-failed}" >>"$W/results.tsv"
    return 0
  fi
  local wall cpu rss
  rss=$(awk '{print $4}' "$W/warm.txt")
  if [[ -n $use_hyperfine ]]; then
    hyperfine -N --style none --runs "$RUNS" --export-json "$W/h.json" \
      -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    read -r wall cpu < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["median"], r["user"]+r["system"])' "$W/h.json")
  else
    : >"$W/time.txt"
    for ((i = 0; i < RUNS; i++)); do
      /usr/bin/time -a -o "$W/time.txt" -f '%e %U %S %M' "$@" >/dev/null 2>/dev/null
    done
    wall=$(awk '{print $1}' "$W/time.txt" | median)
    cpu=$(awk '{print $2 + $3}' "$W/time.txt" | median)
    rss=$( (cat "$W/time.txt"; echo "0 0 0 $rss") | awk '{print $4}' | sort -n | tail -1)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n' "$case" "$in" "$tool" "$args" "$wall" "$cpu" "$rss" >>"$W/results.tsv"
}

# floor NAME FILE: wc -l on the file, the hardware's reading speed.
floor() { measure "$1 wc" "$1" "wc -l" "" wc -l "$2"; }

# jeprof_ok FILE: whether jeprof runs on FILE (it is slow on large dumps).
jeprof_ok() { [[ -n $have_jeprof ]] && (($(stat -c %s "$1") <= JEPROF_MAX_MB * 1000000)); }

H=$W/heapest

if want je-sym || want pprof; then
  sizes=(1)
  big && sizes=(1 30 150)
  # pprof output is compared on the 30 MB dump, or the 1 MB one in a quick run.
  if want pprof && ! want je-sym; then sizes=(1); big && sizes=(30); fi
  seed=1
  for mb in "${sizes[@]}"; do
    name=je-sym-${mb}MB f=$W/$name.heap
    input "$name" je-sym "$f" "$W/gendump" -binary "$W/target" -size $((mb * 1000000)) -unbias -seed $((seed++)) -o "$f"
    if want je-sym; then
      floor "$name" "$f"
      for by in func stack; do
        measure "$name $by" "$name" heapest "--by $by" "$H" report --by "$by" "$f"
      done
      if jeprof_ok "$f"; then
        measure "$name jeprof" "$name" jeprof "--text --show_bytes" jeprof --text --show_bytes "$W/target" "$f"
      fi
    fi
    if want pprof && [[ $mb == 30 || $SIZES == small ]]; then
      want je-sym || measure "$name func" "$name" heapest "--by func" "$H" report --by func "$f"
      measure "$name pprof" "$name" heapest "--format pprof -o FILE" "$H" report --format pprof -o "$W/out.pb.gz" "$f"
    fi
    rm -f "$f" # the largest inputs are not needed again
  done
fi

if want je-unsym; then
  sizes=(1.5)
  big && sizes=(1.5 6 30)
  seed=11
  for mb in "${sizes[@]}"; do
    name=je-unsym-${mb}MB f=$W/$name.heap
    bytes=$(python3 -c "print(int($mb * 1000000))")
    input "$name" je-unsym "$f" "$W/gendump" -funcs 1000000 -middle 100000 -jemalloc "" \
      -map-as /nonexistent/heapest-bench/server -size "$bytes" -unbias -seed $((seed++)) -o "$f"
    floor "$name" "$f"
    for by in func stack; do
      measure "$name $by" "$name" heapest "--by $by" "$H" report --by "$by" "$f"
    done
    if jeprof_ok "$f"; then
      measure "$name jeprof" "$name" jeprof "--text --show_bytes (stripped binary)" \
        jeprof --text --show_bytes "$W/target.stripped" "$f"
    fi
    rm -f "$f"
  done
fi

if want go; then
  sizes=(6)
  big && sizes=(6 60)
  for mb in "${sizes[@]}"; do
    name=go-${mb}MB f=$W/$name.pb.gz
    input "$name" go "$f" "$W/gengoheap" -depth 22 -size $((mb * 1000000)) -o "$f"
    floor "$name" "$f"
    measure "$name gunzip" "$name" "gzip -dc" "" gzip -dc "$f"
    measure "$name func" "$name" heapest "--by func" "$H" report --by func "$f"
    # $pprof is unquoted on purpose: it may be "go tool pprof".
    measure "$name pprof" "$name" "go tool pprof" "-top" $pprof -top "$f"
    rm -f "$f"
  done
fi

if want nettrace; then
  sizes=(10)
  big && sizes=(10 100)
  seed=21
  for mb in "${sizes[@]}"; do
    name=nettrace-${mb}MB f=$W/$name.nettrace
    input "$name" nettrace "$f" "$W/gentrace" -size $((mb * 1000000)) -seed $((seed++)) -o "$f"
    floor "$name" "$f"
    measure "$name type" "$name" heapest "(--by type)" "$H" report "$f"
    rm -f "$f"
  done
fi

timer="GNU time"
[[ -n $use_hyperfine ]] && timer="$(hyperfine --version) (wall), GNU time (CPU, RSS)"
jever=$(dpkg-query -W -f='${Version}' libjemalloc-dev 2>/dev/null || echo "?")
cat "$W/inputs.tsv" "$W/results.tsv" >&2 # raw figures, in case rendering fails
python3 bench/render.py "$W/inputs.tsv" "$W/results.tsv" "$RUNS" "$timer" "$jever" "ONLY=$ONLY SIZES=$SIZES"
