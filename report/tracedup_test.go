package report

import (
	"bytes"
	"strings"
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
	first, second := trace(981234567890), trace(981299999999)
	read := func(inputs map[string][]byte, order ...string) *Builder {
		t.Helper()
		b := NewBuilder(Options{})
		for _, name := range order {
			if _, _, err := b.AddReader(name, bytes.NewReader(inputs[name]), Input{}); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	in := map[string][]byte{"a.nettrace": first, "copy.nettrace": first, "b.nettrace": second}
	dup := read(in, "a.nettrace", "b.nettrace", "copy.nettrace").Duplicates()
	if dup == nil || len(dup.Groups) != 1 || strings.Join(dup.Groups[0], " ") != "a.nettrace copy.nettrace" {
		t.Fatalf("duplicates %+v, want a.nettrace and its copy as one trace", dup)
	}
	if msg := dup.Error(); !strings.Contains(msg, "copies of one trace") || strings.Contains(msg, "--latest-per-process") {
		t.Errorf("message %q: want copies of one trace said, and not --latest-per-process (which reads jemalloc's names)", msg)
	}
	if dup := read(in, "a.nettrace", "b.nettrace").Duplicates(); dup != nil {
		t.Errorf("two traces of one process refused: %v", dup)
	}
}
