// Package memray reads the CSV that `memray transform csv` writes (memray
// v1.4.0 and later): one row per stack, thread and allocator whose
// allocations were live at the capture's high-water mark (or leaked, with
// --leaks). The columns, from memray's TransformReporter.render_as_csv and
// docs/transform.rst (read at bloomberg/memray v1.20.0):
//
//	allocator        the allocator's name (MALLOC, PYMALLOC_MALLOC, MMAP, ...)
//	num_allocations  the allocations live at that point
//	size             their bytes
//	tid              the thread, -1 when threads are merged (transform always merges)
//	thread_name      "0x<tid> (<name>)", or "merged thread"
//	stack_trace      frames "function;file;line" joined by "|", most recent call first
//
// Rows become inuse records: Record.Type is the allocator (what --by type
// groups by: memray has no object types), Record.Thread the thread name
// unless threads are merged, frames are named "function (file)".
//
// memray records every allocation, so a capture is exact: intervals of
// zero width. A sampled capture (memray's sampling design, PR
// bloomberg/memray#94: a Bernoulli process over bytes with mean interval
// R, where an allocation sampled k times is written as k·R bytes and one
// of R bytes or more with its own size) carries no rate in the CSV: read
// with --rate R, a row's bytes are k·R, k a Poisson count, and its
// interval is the exact Poisson (gamma) one; its num_allocations are the
// allocations sampled, a lower bound of the true count, with no interval.
// Allocations of R bytes or more, which that design records whole, cannot
// be told apart in a row's sum: they are read as samples too, which makes
// such rows' intervals wider than they need be, never narrower.
//
// memray is not installed here: the tests use files written from the
// schema above and the cases memray's own tests show
// (tests/unit/test_transform_reporter.py).
//
// The reader streams row by row; it keeps one interned copy of each stack
// and name (a row's stack gets a Record.StackID). A bad row is an error
// naming its line, or with --keep-going a warning.
package memray
