package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// During a merge the soft memory limit follows the live heap after every
// collection (twice it plus mergeHeadroom), so that a live heap larger
// than the first limit is not collected without pause; restore puts back
// what the merge found, and later collections leave it alone.
func TestMergeGCFollowsLiveHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: a merge leaves the pacing alone")
	}
	before, pct := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	debug.SetGCPercent(pct)
	g := newMergeGC()
	if lim := debug.SetMemoryLimit(-1); lim != mergeHeadroom {
		t.Fatalf("limit at the start %d, want %d", lim, mergeHeadroom)
	}
	live := make([]byte, 2*mergeHeadroom) // more than the first limit
	want := 2*int64(len(live)) + mergeHeadroom
	// The cleanup that sets the limit runs on its own goroutine, after
	// the collection.
	for end := time.Now().Add(10 * time.Second); debug.SetMemoryLimit(-1) < want && time.Now().Before(end); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if lim := debug.SetMemoryLimit(-1); lim < want {
		t.Errorf("limit %d with %d bytes live, want at least %d", lim, len(live), want)
	}
	runtime.KeepAlive(live)
	g.restore()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	runtime.GC()
	if lim := debug.SetMemoryLimit(-1); lim != before {
		t.Errorf("limit after restore %d, want %d", lim, before)
	}
	if got := debug.SetGCPercent(pct); got != pct {
		t.Errorf("GC percent after restore %d, want %d", got, pct)
	}
}

// TestWarningsOfMany: the warnings of many inputs are said once each, and
// those that differ only in their counts are one (a fleet's dumps of one
// binary each count their own unnamed addresses); numbers within a word
// (a library's version) tell warnings apart.
func TestWarningsOfMany(t *testing.T) {
	ws := newWarnings(nil)
	var out bytes.Buffer
	ws.w = &out
	ws.add("a.heap", []string{"/bin/pg: 1 address outside every function symbol", "/lib/libc.so.6: 2 addresses unsymbolized", "same text"})
	ws.add("b.heap", []string{"/bin/pg: 33 addresses outside every function symbol", "/lib/libc.so.7: 2 addresses unsymbolized", "same text"})
	ws.add("c.heap", []string{"/bin/pg: 1,024 addresses outside every function symbol", "same text"})
	ws.flush()
	want := `heapest: warning: a.heap (and 2 more like it, with other counts): /bin/pg: 1 address outside every function symbol
heapest: warning: a.heap: /lib/libc.so.6: 2 addresses unsymbolized
heapest: warning: a.heap (and 2 more): same text
heapest: warning: b.heap: /lib/libc.so.7: 2 addresses unsymbolized
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	for w, shape := range map[string]string{
		"3 processes forked":           "# process forked",
		"1 process forked":             "# process forked",
		"12 samples (4.5%) of 1 input": "# sample (#%) of # input",
		"libfoo.so.1.2 and v2":         "libfoo.so.1.2 and v2",
		"2 matches, 3 boxes":           "# match, # box",
	} {
		if got := warningShape(w); got != shape {
			t.Errorf("warningShape(%q) = %q, want %q", w, got, shape)
		}
	}
}
