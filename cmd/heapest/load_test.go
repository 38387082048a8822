package main

import (
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
