// Package jemalloc reads jemalloc heap_v2 dumps (jemalloc 4.0 through
// 5.3+), as jemalloc's prof.dump writes them and as jeprof --raw wraps them.
// The grammar, from jemalloc's prof_dump_header / prof_dump_gctx /
// prof_dump_maps:
//
//	heap_v2/R
//	  t*: curobjs: curbytes [accumobjs: accumbytes]
//	  tUID: counts[ thread name]          (one per thread)
//	@ 0xADDR 0xADDR ...                   (one block per stack)
//	  t*: counts
//	  tUID: counts                        (one per thread)
//
//	MAPPED_LIBRARIES:
//	<raw /proc/pid/maps>
//
// optionally preceded by jeprof's "--- symbol" section and a "--- heap" line.
//
// Parse streams: each stack goes to the sink when its t* line is read (and
// each of its thread lines, with Options.Threads, when that line is read),
// with frames in one buffer reused from stack to stack. What it remembers
// is O(distinct stacks) words, not the stacks: a 64-bit hash of each
// stack's addresses (to reject duplicated stacks), the thread names, and
// sums for its checks.
//
// One thing is known only at the end: whether the numbers are raw sampled
// sums or jemalloc 5.3's prof_unbias encoding. With --jemalloc-unbias auto
// the dump is raw exactly when its header totals equal the sum of its
// stacks' t* lines, so the records go out with Enc parse.Unresolved and the
// returned Profile's Encoding says which it was. With on or off the records
// carry the encoding itself.
package jemalloc
