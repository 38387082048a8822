package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"

	nt "github.com/heapest/heapest/internal/nettracetest"
	"github.com/heapest/heapest/parse"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestNettraceStreams: AllocationSampled records reach the sink while the
// trace is read, not at its end; GCAllocationTick records only at the end
// (they are held back until the reader knows no sample follows).
func TestNettraceStreams(t *testing.T) {
	data, truth := nt.Simulate(largeWorkload(5), nt.Options{Version: nt.V6})
	cr := &countingReader{r: bytes.NewReader(data)}
	readAtFirst := -1
	sink := parse.SinkFunc(func(*parse.Record) {
		if readAtFirst < 0 {
			readAtFirst = cr.n
		}
	})
	p, err := Parse("s.nettrace", bufio.NewReaderSize(cr, 4096), parse.Options{}, sink)
	if err != nil || p.Records != truth.Events {
		t.Fatalf("%v, %d records, want %d", err, p.Records, truth.Events)
	}
	// The first block of events (the writer's are at most 100 KB) and
	// the reader's buffer are read before the first record, no more.
	if readAtFirst < 0 || readAtFirst > 104<<10+4096 || readAtFirst > len(data)/4 {
		t.Errorf("first record after %d of %d bytes", readAtFirst, len(data))
	}

	ticks := ticksTrace(nt.Options{}, 50)
	cr = &countingReader{r: bytes.NewReader(ticks)}
	readAtFirst = -1
	if _, err := Parse("t.nettrace", bufio.NewReaderSize(cr, 4096), parse.Options{}, sink); err != nil {
		t.Fatal(err)
	}
	if readAtFirst != len(ticks) {
		t.Errorf("first tick record after %d of %d bytes, want the end", readAtFirst, len(ticks))
	}
}

// largeWorkload makes a trace of about 1 MB, 10,000 events in many blocks.
func largeWorkload(seed uint64) nt.Workload {
	wl := nt.Workload{Seed: seed, Threads: 4, Depth: 5}
	for _, ty := range []string{"A", "B", "C", "D", "E"} {
		wl.Types = append(wl.Types, nt.TypeSpec{Name: "Large." + ty, Size: 100000, MaxSize: 200000, Objects: 600})
	}
	return wl
}

// ticksTrace is a trace of n GCAllocationTick events (version 4) on two
// stacks and two threads.
func ticksTrace(opt nt.Options, n int) []byte {
	w := nt.NewWriter(opt)
	for i := range n {
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 10, Version: 4, Thread: uint64(7 + i%2), Time: 2e6 + int64(i),
			Stack: []uint64{0x1000 + uint64(i%2), 0x2000}, Payload: nt.AllocationTick(8, 4, 100000+uint64(i), 0, 0x40, "T", 0, 50)})
	}
	return w.Finish()
}

// TestNettraceTicksHeldBack: ticks before, between and after samples are
// all dropped once a sample was seen; ticks alone come out in trace order
// with their stacks, threads and times, also when --keep-going salvages a
// cut trace.
func TestNettraceTicksHeldBack(t *testing.T) {
	w := nt.NewWriter(nt.Options{})
	tick := func(time int64) {
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 10, Version: 4, Thread: 1, Time: time, Stack: []uint64{0x10},
			Payload: nt.AllocationTick(8, 4, 100000, 0, 1, "A", 0, 24)})
	}
	sample := func(time int64) {
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 1, Time: time, Stack: []uint64{0x10},
			Payload: nt.AllocationSampled(8, 0, 1, "A", 0, 24, 3)})
	}
	tick(2e6)
	tick(2e6 + 1)
	sample(2e6 + 2)
	tick(2e6 + 3)
	sample(2e6 + 4)
	tick(2e6 + 5)
	p, recs, err := parseBytes(t, "mixed.nettrace", w.Finish(), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || p.Records != 2 || recs[0].Scheme != parse.Geometric || recs[1].Scheme != parse.Geometric ||
		!hasWarning(p, "the 4 GCAllocationTick events were ignored") {
		t.Errorf("records %+v warnings %q", recs, p.Warnings)
	}

	data := ticksTrace(nt.Options{RegionEvents: 7}, 50)
	p, recs, err = parseBytes(t, "ticks.nettrace", data, parse.Options{})
	if err != nil || len(recs) != 50 || p.Records != 50 || p.Source.Samples != 50 {
		t.Fatalf("%v: %d records (profile %d)", err, len(recs), p.Records)
	}
	checkStackIDs(t, recs)
	for i, r := range recs {
		want := []parse.Frame{{Addr: 0x1000 + uint64(i%2)}, {Addr: 0x2000}}
		thread := []string{"7", "8"}[i%2]
		if !slices.Equal(r.Stack, want) || r.Thread != thread || r.Time != 100*int64(1e6+i) ||
			r.Alloc.Bytes != float64(100000+i) || r.Alloc.Size != 50 || r.Type != "T" {
			t.Fatalf("tick %d: %+v", i, r)
		}
	}

	// Cut in the middle: the ticks read before the cut are sent.
	p, recs, err = parseBytes(t, "ticks.nettrace", data[:len(data)*2/3], parse.Options{KeepGoing: true})
	if err != nil || len(recs) == 0 || len(recs) >= 50 || p.Records != len(recs) ||
		!hasWarning(p, "stopped early") {
		t.Errorf("keep-going: %v, %d records, warnings %q", err, len(recs), p.Warnings)
	}
}

// TestNettraceNames: Profile.Names names instruction addresses from the
// method ranges, so the leaf is named where it is and a caller (a return
// address) one byte earlier: a call that ends method A returns to the
// first byte of B, and must name A. Without method events there is no
// resolver.
func TestNettraceNames(t *testing.T) {
	w := nt.NewWriter(nt.Options{})
	w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 1, Time: 2e6, Stack: []uint64{0x1100, 0x1100},
		Payload: nt.AllocationSampled(8, 0, 1, "T", 0, 24, 3)})
	for _, m := range []struct {
		name  string
		start uint64
	}{{"A", 0x1000}, {"B", 0x1100}} {
		w.Write(nt.Event{Provider: nt.RundownProvider, ID: 144, Version: 1, Thread: 1, Time: 2e6,
			Payload: nt.Method(m.start, 9, m.start, 0x100, "N", m.name, "void ()")})
	}
	p, recs, err := parseBytes(t, "names.nettrace", w.Finish(), parse.Options{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v, %d records", err, len(recs))
	}
	if recs[0].Stack[0].Func != "" || p.Names == nil {
		t.Fatalf("frames %+v named by the parser, or no resolver", recs[0].Stack)
	}
	if got := stackNames(p, recs[0].Stack); !slices.Equal(got, []string{"N.B", "N.A"}) {
		t.Errorf("names %q, want N.B ← N.A", got)
	}
	if p.Names(0x1200) != "" || p.Names(0xfff) != "" {
		t.Error("addresses outside every method are named")
	}
	if !strings.Contains(p.Source.Detail, "1 of 1 distinct frames symbolized") {
		t.Errorf("detail %q", p.Source.Detail)
	}

	p, _, err = parseBytes(t, "nomethods.nettrace", withSample(nt.Options{}, nil), parse.Options{})
	if err != nil || p.Names != nil {
		t.Errorf("%v: a trace without method events has a resolver", err)
	}
}

// TestNettraceRate: --rate cannot change the runtime's fixed sampling
// period; a different one is reported as ignored.
func TestNettraceRate(t *testing.T) {
	data := withSample(nt.Options{}, nil)
	for _, tc := range []struct {
		rate float64
		warn bool
	}{{0, false}, {102400, false}, {4096, true}} {
		p, recs, err := parseBytes(t, "rate.nettrace", data, parse.Options{Rate: tc.rate})
		if err != nil || len(recs) != 1 || recs[0].Rate != samplingRate {
			t.Fatalf("rate %v: %v, %+v", tc.rate, err, recs)
		}
		if got := hasWarning(p, "--rate 4096 ignored: the file's sampling period 102400 is used"); got != tc.warn {
			t.Errorf("rate %v: warnings %q", tc.rate, p.Warnings)
		}
	}
}

// TestNettraceAllocations: the parser does not allocate per record: a
// trace of tens of thousands of events costs a few hundred allocations
// (tables, interned names, buffers).
func TestNettraceAllocations(t *testing.T) {
	data, truth := nt.Simulate(largeWorkload(3), nt.Options{Version: nt.V4})
	var c counter
	allocs := testing.AllocsPerRun(3, func() {
		c = counter{}
		if _, err := Parse("a.nettrace", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &c); err != nil {
			t.Fatal(err)
		}
	})
	if c.records != truth.Events || allocs > float64(truth.Events)/20 {
		t.Errorf("%v allocations for %d records (of %d)", allocs, c.records, truth.Events)
	}
	t.Logf("%v allocations for %d records", allocs, c.records)
}

// TestNettraceThreadFlush: after a V6 sequence point flushes the thread
// table, events of a thread whose index is not defined again are named
// "#index", and each is counted in the warning.
func TestNettraceThreadFlush(t *testing.T) {
	data := withSample(nt.Options{Version: nt.V6}, func(w *nt.Writer) {
		sp := append(binary.LittleEndian.AppendUint64(nil, 0), le32(1, 0)...) // flag 1: flush threads
		w.Block6(4, sp)
		for i := range 2 {
			w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 5, Time: 3e6 + int64(i), Stack: []uint64{0x10},
				Payload: nt.AllocationSampled(8, 0, 1, "T", 0, 48, 7)})
		}
	})
	p, recs, err := parseBytes(t, "flush.nettrace", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var threads []string
	for _, r := range recs {
		threads = append(threads, r.Thread)
	}
	if !slices.Equal(threads, []string{"5", "#1", "#1"}) ||
		!hasWarning(p, "2 allocation events refer to thread indexes without an OS thread id") {
		t.Errorf("threads %q, warnings %q", threads, p.Warnings)
	}
}
