package report

import (
	"testing"

	nt "github.com/heapest/heapest/internal/nettracetest"
)

// Copies of one .NET trace share its process id and start counter, and
// are refused as one trace; two traces of one process (two sessions)
// start at different counters and are not.
func TestTraceCopies(t *testing.T) {
	trace := func(ticks int64) []byte {
		w := nt.NewWriter(nt.Options{PID: 4242, SyncTicks: ticks})
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 1, Time: ticks + 2e6,
			Payload: nt.AllocationSampled(8, 0, 1, "A", 0, 24, 3)})
		return w.Finish()
	}
	a, b := namedInput{"a.nettrace", trace(981234567890)}, namedInput{"b.nettrace", trace(981299999999)}
	copied := namedInput{"copy.nettrace", a.data}
	checkDuplicates(t, []dupCase{
		{"a trace and its copy", []namedInput{a, b, copied}, "a.nettrace copy.nettrace", "copies of one trace", "--latest-per-process", Options{}},
		{"two traces of one process", []namedInput{a, b}, "", "", "", Options{}},
	})
}
