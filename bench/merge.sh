#!/usr/bin/env bash
# Benchmarks heapest's fleet merge (issue 12) and prints a Markdown section
# on standard output (bash bench/merge.sh >> docs/benchmarks.md, or paste);
# progress goes to standard error.
#
# Inputs, generated once into $DIR and reused while their parameters hold:
#   jemalloc fleet  N dumps (default 2,000) of one program's processes
#                   (bench/gendump -member: the same stacks, each process its
#                   own counts, a third of the stacks absent, its own library
#                   addresses), about SIZE bytes each (default 750,000 before
#                   the absent third: about 500 KB, 1 GB in all), frames in
#                   a real binary (a copy of heapest) and libjemalloc;
#   jemalloc x10    the same dumps listed ten times over (hard links), for
#                   memory against the number of inputs (--allow-duplicates:
#                   they are the same processes);
#   Go fleet        GO_N (default 2,000) Go heap profiles: GO_DISTINCT (100)
#                   real ones from bench/gengoheap, hard-linked over.
# Commands, each timed once after a warm-up with GNU time (wall, user+system
# CPU, peak RSS):
#   heapest merge -o OUT FILES...            (and report --format table)
#   go tool pprof -proto FILES... > OUT      (the Go fleet only)
#
# Environment: N, SIZE, GO_N, GO_DISTINCT, DIR (default
# /tmp/heapest-bench-merge), HEAPEST (a binary; default: build ./cmd/heapest),
# TENX=0 to skip the tenfold run.
# Needs: go, GNU time (/usr/bin/time).
set -euo pipefail

N=${N:-2000}
SIZE=${SIZE:-750000}
GO_N=${GO_N:-2000}
GO_DISTINCT=${GO_DISTINCT:-100}
DIR=${DIR:-/tmp/heapest-bench-merge}
TENX=${TENX:-1}
root=$(cd "$(dirname "$0")/.." && pwd)

log() { echo "bench-merge: [${SECONDS}s] $*" >&2; }

mkdir -p "$DIR/bin"
if [[ -z ${HEAPEST:-} ]]; then
	(cd "$root" && go build -o "$DIR/bin/heapest" ./cmd/heapest)
	HEAPEST=$DIR/bin/heapest
fi
(cd "$root" && go build -o "$DIR/bin/gendump" ./bench/gendump && go build -o "$DIR/bin/gengoheap" ./bench/gengoheap)

# The program the dumps point into: a fixed copy, so that rebuilding
# heapest does not change what the frames name.
je=$DIR/je-$N-$SIZE
if [[ ! -f $je/.done ]]; then
	log "generating $N jemalloc dumps of about $SIZE bytes in $je"
	rm -rf "$je" && mkdir -p "$je/dumps"
	cp "$HEAPEST" "$je/prog"
	seq 1 "$N" | xargs -P "$(nproc)" -I{} "$DIR/bin/gendump" -binary "$je/prog" -seed 7 -member {} \
		-size "$SIZE" -threads 8 -o "$je/dumps/jeprof.{}.0.f.heap" 2>/dev/null
	touch "$je/.done"
fi
if [[ $TENX == 1 && ! -f $je/.tenx ]]; then
	log "linking the dumps ten times over"
	rm -rf "$je/tenx" && mkdir -p "$je/tenx"
	for k in $(seq 0 9); do
		mkdir "$je/tenx/$k"
		for f in "$je"/dumps/*.heap; do ln "$f" "$je/tenx/$k/$(basename "$f")"; done
	done
	touch "$je/.tenx"
fi

gof=$DIR/go-$GO_N-$GO_DISTINCT
if [[ ! -f $gof/.done ]]; then
	log "generating $GO_DISTINCT Go heap profiles, linked to $GO_N"
	rm -rf "$gof" && mkdir -p "$gof/real" "$gof/fleet"
	seq 1 "$GO_DISTINCT" | xargs -P "$(nproc)" -I{} "$DIR/bin/gengoheap" -depth 14 -rate 4096 -o "$gof/real/{}.pb.gz" 2>/dev/null
	for i in $(seq 1 "$GO_N"); do ln "$gof/real/$(((i - 1) % GO_DISTINCT + 1)).pb.gz" "$gof/fleet/heap.$i.pb.gz"; done
	touch "$gof/.done"
fi

bytes() { find "$@" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }

# timed NAME CMD...: one warm-up, then one run under GNU time; prints
# "wall cpu rss_mb".
timed() {
	local name=$1
	shift
	"$@" >/dev/null 2>&1 || { log "$name failed: $*"; "$@" >/dev/null; exit 1; }
	/usr/bin/time -f '%e %U %S %M' -o "$DIR/time.out" "$@" >/dev/null 2>&1
	read -r wall user sys rss <"$DIR/time.out"
	awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {printf "%.2f %.2f %.0f\n", w, u + s, r / 1024}'
}

row() { # name inputs bytes wall cpu rss
	awk -v n="$1" -v k="$2" -v b="$3" -v w="$4" -v c="$5" -v r="$6" 'BEGIN {
		printf "| %s | %d | %.0f MB | %.2f s | %.2f s | %.0f MB/s | %.0f MB/s | %.0f MB |\n", n, k, b / 1e6, w, c, b / 1e6 / w, b / 1e6 / c, r }'
}

out=$DIR/out.pb.gz
je_bytes=$(bytes "$je/dumps")
echo "## Fleet merge (bench/merge.sh)"
echo
echo "$N jemalloc dumps of one program's processes (bench/gendump -member: the same stacks, each"
echo "process its own counts and library addresses), and $GO_N Go heap profiles ($GO_DISTINCT distinct"
echo "real ones from bench/gengoheap, linked over). Wall and CPU (user + system) seconds of one run"
echo "after a warm-up; MB/s is input bytes per wall and per CPU second; RSS is the peak. $(nproc) CPUs."
echo
echo "| command | inputs | input | wall | CPU | MB/s (wall) | MB/s (CPU) | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
log "heapest merge, jemalloc"
read -r w c r < <(timed "merge" "$HEAPEST" merge -o "$out" "$je/dumps")
row "heapest merge -o F (jemalloc)" "$N" "$je_bytes" "$w" "$c" "$r"
log "heapest report, jemalloc"
read -r w c r < <(timed "report" "$HEAPEST" report "$je/dumps")
row "heapest report (jemalloc)" "$N" "$je_bytes" "$w" "$c" "$r"
if [[ $TENX == 1 ]]; then
	log "heapest merge, jemalloc x10"
	read -r w c r < <(timed "merge x10" "$HEAPEST" merge --allow-duplicates -o "$out" "$je/tenx")
	row "heapest merge -o F (jemalloc, each input 10 times)" "$((10 * N))" "$((10 * je_bytes))" "$w" "$c" "$r"
fi
go_bytes=$(bytes "$gof/fleet")
log "heapest merge, Go"
# The links are copies of one process's profile: --allow-duplicates.
read -r hw hc hr < <(timed "merge go" "$HEAPEST" merge --allow-duplicates -o "$out" "$gof/fleet")
row "heapest merge -o F (Go)" "$GO_N" "$go_bytes" "$hw" "$hc" "$hr"
log "go tool pprof -proto, Go"
read -r pw pc pr < <(timed "pprof" sh -c "go tool pprof -proto $gof/fleet/*.pb.gz > $DIR/pprof.pb.gz")
row "go tool pprof -proto > F (Go)" "$GO_N" "$go_bytes" "$pw" "$pc" "$pr"
echo
awk -v hw="$hw" -v hc="$hc" -v hr="$hr" -v pw="$pw" -v pc="$pc" -v pr="$pr" 'BEGIN {
	printf "On the Go fleet heapest takes %.2fx the wall time, %.2fx the CPU time and %.2fx the peak memory of go tool pprof -proto.\n", hw / pw, hc / pc, hr / pr }'
log done
