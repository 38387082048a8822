package aggregate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// fakeNamer names addresses from a map and calls names starting with
// "je_" allocator frames, and "je_sys_" ones where the allocator gets
// memory for itself; it records what it was asked.
type fakeNamer struct {
	names      map[uint64]string
	needed     map[string]int // "addr/leaf" -> times Need was called
	resolved   bool
	unresolved []uint64
	expected   int // what Expect was told, -1 once Need came first
}

func (n *fakeNamer) Expect(addrs int) { n.expected = addrs }

func (n *fakeNamer) Need(addr uint64, leaf bool) {
	if n.expected == 0 {
		n.expected = -1
	}
	n.needed[fmt.Sprintf("%x/%v", addr, leaf)]++
}

func (n *fakeNamer) Resolve() error { n.resolved = true; return nil }

func (n *fakeNamer) Name(f parse.Frame, leaf bool) (string, parse.FrameKind) {
	name := f.Func
	if name == "" {
		name = n.names[f.Addr]
	}
	switch {
	case strings.HasPrefix(name, "je_sys_"):
		return name, parse.AllocatorOwnFrame
	case strings.HasPrefix(name, "je_"):
		return name, parse.AllocatorFrame
	}
	return name, parse.ProgramFrame
}

func (n *fakeNamer) Unresolved(addr uint64) { n.unresolved = append(n.unresolved, addr) }

func addrRec(n float64, addrs ...uint64) parse.Record {
	fr := make([]parse.Frame, len(addrs))
	for i, a := range addrs {
		fr[i].Addr = a
	}
	return parse.Record{Stack: fr, Scheme: parse.Bernoulli, Rate: 1 << 19, InUse: parse.Counts{Objects: n, Bytes: 48 * n}}
}

// collectInto reads recs into tb through a collector finished with p and
// nm; with seed, the table first gets a stack and cell of its own (the
// empty stack, with no statistics: no group, nothing in a total), so
// that it copies the collector's stacks instead of taking their room
// (Finish's two paths). (Finish passes over a cell without statistics:
// the seed is put in directly.)
func collectInto(t *testing.T, tb *Table, nm Namer, seed bool, recs []parse.Record, p *parse.Profile) {
	t.Helper()
	if seed {
		tb.cells.intern(cellKey{stack: tb.stacks.intern(nil)})
	}
	c := NewCollector(tb.values, tb.keys, Window{}, 0)
	for i := range recs {
		c.Record(&recs[i])
	}
	if err := c.Finish(tb, nm, p); err != nil {
		t.Fatal(err)
	}
}

// Frames are named once per distinct (address, leaf) after the input is
// read; leading allocator frames go; unnamed kept frames are reported.
func TestFinishNamesOnce(t *testing.T) {
	nm := &fakeNamer{needed: map[string]int{}, names: map[uint64]string{0x10: "je_malloc", 0x20: "alloc_a", 0x30: "main", 0x40: "alloc_b"}}
	c := NewCollector([]unbias.Value{unbias.InUseSpace}, Keys{}, Window{}, 0)
	recs := []parse.Record{addrRec(1, 0x10, 0x20, 0x30), addrRec(2, 0x10, 0x20, 0x30), addrRec(4, 0x40, 0x99, 0x30), addrRec(8, 0x10)}
	for i := range recs {
		c.Record(&recs[i])
		clear(recs[i].Stack) // the collector must have copied what it keeps
	}
	tb := NewTable(c.values, c.keys)
	if err := c.Finish(tb, nm, &parse.Profile{}); err != nil {
		t.Fatal(err)
	}
	for k, n := range nm.needed {
		if n != 1 {
			t.Errorf("Need(%s) called %d times", k, n)
		}
	}
	if len(nm.needed) != 5 || !nm.resolved { // 0x10 and 0x40 as leaves, 0x20, 0x30, 0x99 as callers
		t.Errorf("needed %v, resolved %v", nm.needed, nm.resolved)
	}
	if nm.expected != 5 { // the five distinct addresses, told before the first Need
		t.Errorf("Expect told %d", nm.expected)
	}
	g, _, total := tb.Groups(ByStack, Filter{}, 0, 0)
	got := map[string]float64{}
	for _, gr := range g {
		got[gr.Key] = gr.Flat.Samples
	}
	want := map[string]float64{"main;alloc_a": 3, "main;0x99;alloc_b": 4, "je_malloc": 8}
	if fmt.Sprint(got) != fmt.Sprint(want) || total[0].Samples != 15 {
		t.Errorf("groups %v (total %v), want %v", got, total[0].Samples, want)
	}
	if fmt.Sprint(nm.unresolved) != "[153]" {
		t.Errorf("unresolved %v, want [0x99]", nm.unresolved)
	}
}

// inlineNamer is a fakeNamer that also names calls inlined at addresses
// (inliner): innermost first, those starting with "je_" the allocator's.
type inlineNamer struct {
	fakeNamer
	inl map[uint64][]string
}

func (n *inlineNamer) Inlined(f parse.Frame, leaf bool) ([]string, int) {
	names := n.inl[f.Addr]
	alloc := 0
	for alloc < len(names) && strings.HasPrefix(names[alloc], "je_") {
		alloc++
	}
	return names, alloc
}

func (n *inlineNamer) InlinedHandle(uint32) ([]string, int) { panic("no handles") }

func (n *inlineNamer) AnyInlined() bool { return len(n.inl) > 0 }

// TestFinishInlined: the calls inlined at a frame are frames of their own
// before it, innermost first; of the first frame a stack keeps, the
// allocator's inlined calls go, as its allocator frames went, and no
// other frame's do; an allocator frame kept for want of any other keeps
// them all.
func TestFinishInlined(t *testing.T) {
	nm := &inlineNamer{fakeNamer{needed: map[string]int{}, names: map[uint64]string{
		0x10: "je_malloc", 0x20: "grow_vec", 0x30: "main", 0x40: "je_calloc", 0x50: "worker"}}, map[uint64][]string{
		0x20: {"je_inline_alloc", "reserve", "push"}, // inlined into grow_vec: push called reserve, which called je_inline_alloc
		0x30: {"je_inline_alloc", "run"},             // a caller's are all kept
		0x40: {"je_inner"},
	}}
	tb := NewTable([]unbias.Value{unbias.InUseSpace}, Keys{})
	recs := []parse.Record{addrRec(1, 0x10, 0x20, 0x30), addrRec(2, 0x50, 0x30), addrRec(4, 0x40)}
	collectInto(t, tb, nm, false, recs, &parse.Profile{})
	g, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
	got := map[string]float64{}
	for _, gr := range g {
		got[gr.Key] = gr.Flat.Samples
	}
	want := map[string]float64{
		"main;run;je_inline_alloc;grow_vec;push;reserve": 1,
		"main;run;je_inline_alloc;worker":                2,
		"je_calloc;je_inner":                             4,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
}

// A stack whose dropped allocator frames include one where the allocator
// gets memory for itself (gperftools' HEAP_PROFILE_MMAP records
// tcmalloc's sbrk under the malloc it served) is, in an input that
// records the mallocs too (parse.Profile.OwnMemoryTwice), the memory the
// program's records already count: its cells are left out, with a
// warning, whether the table takes the collector's room or copies it
// (seed). In an input of the system's memory only (HEAP_PROFILE_ONLY_MMAP)
// it is the heap, and counts for the program's caller as before. The
// allocator's frames alone (je_malloc) keep theirs.
func TestAllocatorOwnLeftOut(t *testing.T) {
	for _, tc := range []struct {
		twice, said bool
		seed        bool
		want        string
		warn        string
	}{
		{true, true, false, "map[je_malloc:8 main;alloc_a:1]", "1 stacks of the allocator's own memory left out (2.50MiB of inuse_space)"},
		{true, true, true, "map[je_malloc:8 main;alloc_a:1]", "1 stacks of the allocator's own memory left out (2.50MiB of inuse_space)"},
		{false, true, false, "map[je_malloc:8 main;alloc_a:6]", ""},
		// An input that does not say (a proto converted from the text):
		// kept, with a warning that it may count twice.
		{false, false, false, "map[je_malloc:8 main;alloc_a:6]", "1 stacks of the allocator's own memory (tcmalloc growing its heap, the heap profiler's own arena) are counted under the functions that allocated"},
	} {
		nm := &fakeNamer{needed: map[string]int{}, names: map[uint64]string{
			0x10: "je_malloc", 0x11: "je_sys_alloc", 0x20: "alloc_a", 0x30: "main"}}
		tb := NewTable([]unbias.Value{unbias.InUseSpace}, Keys{})
		recs := []parse.Record{addrRec(1, 0x10, 0x20, 0x30), addrRec(5, 0x11, 0x10, 0x20, 0x30), addrRec(8, 0x10)}
		p := &parse.Profile{OwnMemoryTwice: tc.twice, OwnMemorySaid: tc.said}
		collectInto(t, tb, nm, tc.seed, recs, p)
		g, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
		got := map[string]float64{}
		for _, gr := range g {
			got[gr.Key] = gr.Flat.Samples
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("twice %v, seed %v: groups %v, want %s", tc.twice, tc.seed, got, tc.want)
		}
		if w := strings.Join(p.Warnings, "\n"); tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
			t.Errorf("twice %v, seed %v: warnings %q, want %q", tc.twice, tc.seed, w, tc.warn)
		}
	}
}

// With --by thread, per-thread breakdowns replace the records they break
// down when the input has them, and records count when it has none.
func TestBreakdowns(t *testing.T) {
	whole := rec(3, "f", "main")
	t1, t2 := rec(1, "f", "main"), rec(2, "f", "main")
	t1.Breakdown, t1.Thread = true, "t1"
	t2.Breakdown, t2.Thread = true, "t2"
	for _, tt := range []struct {
		by         By
		breakdowns bool
		want       string
	}{
		{ByThread, true, "map[t1:1 t2:2]"},
		{ByThread, false, "map[(no thread):3]"},
		{ByFunc, true, "map[f:3 main:0]"},
	} {
		c := NewCollector([]unbias.Value{unbias.InUseSpace}, KeysFor(tt.by), Window{}, 0)
		for _, r := range []parse.Record{whole, t1, t2} {
			c.Record(&r)
		}
		tb := NewTable(c.values, c.keys)
		if err := c.Finish(tb, nil, &parse.Profile{Breakdowns: b2i(tt.breakdowns)}); err != nil {
			t.Fatal(err)
		}
		g, _, _ := tb.Groups(tt.by, Filter{}, 0, 0)
		got := map[string]float64{}
		for _, gr := range g {
			got[gr.Key] = gr.Flat.Samples
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("%s breakdowns=%v: %v, want %s", tt.by, tt.breakdowns, got, tt.want)
		}
	}
}

// Tables of different inputs join on names, not on their own ids.
func TestTableMergeByName(t *testing.T) {
	a := collect(t, ByStack, unbias.InUseSpace, Filter{}, Window{}, rec(1, "x", "main"), rec(2, "y", "main"))
	b := collect(t, ByStack, unbias.InUseSpace, Filter{}, Window{}, rec(4, "y", "main"), rec(8, "z"))
	a.t.Merge(b.t)
	got := map[string]float64{}
	for _, g := range a.Groups() {
		got[g.Key] = g.Flat.Samples
	}
	if fmt.Sprint(got) != "map[main;x:1 main;y:6 z:8]" {
		t.Errorf("merged %v", got)
	}
}

// Records whose encoding the parser learns at the end are unbiased at
// Finish exactly as if they had been sent with it.
func TestUnresolvedEncoding(t *testing.T) {
	for _, enc := range []parse.Encoding{parse.Raw, parse.JemallocUnbias} {
		direct, late := rec(3, "f", "main"), rec(3, "f", "main")
		direct.InUse = parse.Counts{Objects: 3, Bytes: 200000, Enc: enc}
		late.InUse = parse.Counts{Objects: 3, Bytes: 200000, Enc: parse.Unresolved}
		want := collect(t, ByFunc, unbias.InUseSpace, Filter{}, Window{}, direct).Total()
		c := NewCollector([]unbias.Value{unbias.InUseSpace}, Keys{}, Window{}, 0)
		c.Record(&late)
		tb := NewTable(c.values, c.keys)
		if err := c.Finish(tb, nil, &parse.Profile{Encoding: enc}); err != nil {
			t.Fatal(err)
		}
		if got := tb.Total(Filter{})[0]; got != want || got.N != 1 {
			t.Errorf("%v: late %+v, direct %+v", enc, got, want)
		}
	}
}

// Kept records whose numbers repeat (a dump's lines do) are unbiased once
// per distinct numbers and found in the pool once; the table holds what
// the same records sent with their encoding give, for every value, for
// cells of one record and cells of several, fresh tables and seeded ones.
func TestUnresolvedEncodingRepeats(t *testing.T) {
	values := []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}
	recs := func(enc parse.Encoding) []parse.Record {
		out := make([]parse.Record, 3000)
		for i := range out {
			r := rec(0, "f", fmt.Sprint("m", i%997), "main") // stacks 0, 997, 1994 share a cell
			n := float64(1 + i%5)
			r.InUse = parse.Counts{Objects: n, Bytes: 4096 * n, Enc: enc}
			if i%3 == 0 {
				r.InUse = parse.Counts{Enc: enc} // nothing in use
			}
			r.Alloc = parse.Counts{Objects: 2 * n, Bytes: 8192 * n, Enc: enc}
			out[i] = r
		}
		return out
	}
	for _, enc := range []parse.Encoding{parse.Raw, parse.JemallocUnbias} {
		for _, seed := range []bool{false, true} {
			table := func(late bool) string {
				rs := recs(enc)
				if late {
					rs = recs(parse.Unresolved)
				}
				tb := NewTable(values, KeysFor(ByStack))
				collectInto(t, tb, nil, seed, rs, &parse.Profile{Encoding: enc})
				var b strings.Builder
				for v := range values {
					groups, _, total := tb.Groups(ByStack, Filter{}, v, 0)
					for _, g := range groups {
						fmt.Fprintf(&b, "%v %s %+v\n", values[v], g.Key, g.Flat)
					}
					fmt.Fprintf(&b, "%v total %+v\n", values[v], total[v])
				}
				return b.String()
			}
			if late, direct := table(true), table(false); late != direct {
				t.Errorf("%v, seeded %v: kept records give\n%s\nwant, as sent with their encoding,\n%s", enc, seed, late, direct)
			}
		}
	}
}

// A parser's stack id stands for its stack: looked up once, then trusted.
func TestStackID(t *testing.T) {
	c := NewCollector([]unbias.Value{unbias.InUseSpace}, Keys{}, Window{}, 0)
	a, b := rec(1, "f", "main"), rec(2, "f", "main")
	a.StackID, b.StackID = 7, 7
	b.Stack = nil // the same id: the stack is not read again
	c.Record(&a)
	c.Record(&b)
	if c.stacks.len() != 1 || c.Len() != 1 {
		t.Fatalf("%d stacks, %d cells; want 1, 1", c.stacks.len(), c.Len())
	}
	tb := NewTable(c.values, c.keys)
	if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
		t.Fatal(err)
	}
	if tot := tb.Total(Filter{})[0]; tot.Samples != 3 || tot.N != 2 {
		t.Errorf("total %+v", tot)
	}
}

// With Narrow, an input that says it has in-use values (Begin) gets no
// work done on its allocation values, and one without them keeps them;
// records kept until Finish for their encoding too.
func TestNarrow(t *testing.T) {
	for _, late := range []bool{false, true} {
		for _, hasInUse := range []bool{true, false} {
			values := []unbias.Value{unbias.InUseSpace, unbias.AllocSpace}
			c := NewCollector(values, Keys{}, Window{}, 0)
			c.Narrow()
			parse.Begin(c, &parse.Profile{HasInUse: hasInUse, HasAlloc: true})
			r := rec(2, "f", "main")
			if late {
				r.InUse.Enc = parse.Unresolved
			}
			r.Alloc = r.InUse
			c.Record(&r)
			tb := NewTable(values, Keys{})
			if err := c.Finish(tb, nil, &parse.Profile{Encoding: parse.Raw}); err != nil {
				t.Fatal(err)
			}
			tot := tb.Total(Filter{})
			if (tot[0].N == 1) != hasInUse || (tot[1].N == 1) == hasInUse {
				t.Errorf("late %v, has in-use %v: in-use %+v, alloc %+v", late, hasInUse, tot[0], tot[1])
			}
		}
	}
}

// --by size keeps the size of the value Narrow left in, not of the one it
// dropped.
func TestNarrowSize(t *testing.T) {
	values := []unbias.Value{unbias.InUseSpace, unbias.AllocSpace}
	c := NewCollector(values, KeysFor(BySize), Window{}, 0)
	c.Narrow()
	parse.Begin(c, &parse.Profile{HasAlloc: true})
	r := rec(2, "f", "main")
	r.Alloc, r.InUse = r.InUse, parse.Counts{}
	r.Alloc.Size = 48
	c.Record(&r)
	tb := NewTable(values, KeysFor(BySize))
	if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
		t.Fatal(err)
	}
	g, _, _ := tb.Groups(BySize, Filter{}, 1, 0)
	if len(g) != 1 || g[0].Key != "48" {
		t.Errorf("groups %+v, want one of size 48", g)
	}
}

// With DropStacks and an input whose report needs no stacks, every cell
// has the empty stack, and the rows by type are the same.
func TestDropStacks(t *testing.T) {
	recs := []parse.Record{rec(1, "a", "main"), rec(2, "b", "main"), rec(4, "c", "other")}
	recs[0].Type, recs[1].Type, recs[2].Type = "T", "U", "T"
	for _, drop := range []bool{false, true} {
		c := NewCollector([]unbias.Value{unbias.InUseSpace}, KeysFor(ByType), Window{}, 0)
		c.DropStacks(func(*parse.Profile) bool { return !drop })
		parse.Begin(c, &parse.Profile{HasInUse: true})
		for i := range recs {
			c.Record(&recs[i])
		}
		stacks := c.stacks.len()
		tb := NewTable(c.values, c.keys)
		if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
			t.Fatal(err)
		}
		g, _, _ := tb.Groups(ByType, Filter{}, 0, 0)
		got := map[string]float64{}
		for _, gr := range g {
			got[gr.Key] = gr.Flat.Samples
		}
		if fmt.Sprint(got) != "map[T:5 U:2]" || (stacks == 1) != drop {
			t.Errorf("drop %v: %v, %d stacks", drop, got, stacks)
		}
	}
}

// A stack the parser says is new is stored without a lookup; records that
// name it by its StackID find it again, and a later record of the same
// stack without the promise becomes a cell of its own that the table joins
// with the first, so the totals are those of plain interning.
func TestNewStack(t *testing.T) {
	recs := []parse.Record{addrRec(1, 0x20, 0x30), addrRec(2, 0x20, 0x30), addrRec(4, 0x40, 0x30), addrRec(8, 0x20, 0x30)}
	recs[0].StackID, recs[0].NewStack = 1, true
	recs[1].StackID = 1
	recs[2].StackID, recs[2].NewStack = 2, true
	c := NewCollector([]unbias.Value{unbias.InUseSpace}, Keys{}, Window{}, 0)
	for i := range recs {
		c.Record(&recs[i])
	}
	c.flush() // the last record, without a stack id, waits in a batch
	if got := c.stacks.len(); got != 3 {
		t.Errorf("collector holds %d stacks, want 3 (two new ones, one interned)", got)
	}
	if got := c.stacks.placed; got != 1 {
		t.Errorf("%d stacks were hashed, want 1", got)
	}
	tb := NewTable(c.values, c.keys)
	if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 2 {
		t.Fatalf("table has %d cells, want 2", tb.Len())
	}
	groups, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
	got := map[string]float64{}
	for _, g := range groups {
		got[g.Key] = g.Flat.Samples
	}
	want := map[string]float64{"0x30;0x20": 11, "0x30;0x40": 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples per stack %v, want %v", got, want)
	}
}

// The address table finds every address it was given, with its id, as it
// grows from its smallest size, and grows by doubling, never filled past
// three quarters.
func TestAddrTable(t *testing.T) {
	a := newAddrTable(1)
	for i := 0; i < 90000; i++ {
		addr := uint64(i) * 4096
		if _, ok := a.find(addr, mix(addr)); ok {
			t.Fatalf("address %#x found before it was put", addr)
		}
		a.put(addr, mix(addr), uint32(i))
		if 4*a.n > 3*len(a.slots) {
			t.Fatalf("%d addresses in %d slots", a.n, len(a.slots))
		}
	}
	if len(a.slots) != 1<<17 {
		t.Errorf("90000 addresses in %d slots, want %d", len(a.slots), 1<<17)
	}
	for i := 0; i < 90000; i++ {
		if id, ok := a.find(uint64(i)*4096, mix(uint64(i)*4096)); !ok || id != uint32(i) {
			t.Fatalf("address %d: id %d, %v", i, id, ok)
		}
	}
}

// A table finished from one collector takes the collector's room and
// rewrites it in place (stacks, their index, cell keys, statistics), in
// batches: it
// must hold what a table that already had cells gets by copying, with
// stacks that repeat, stacks shortened by allocator frames, records kept
// for their encoding and per-thread breakdowns.
func TestFinishInPlace(t *testing.T) {
	names := []string{"je_malloc", "a", "b", "c", "main"}
	recs := make([]parse.Record, 3000)
	for i := range recs {
		x := uint64(i)*2654435761 + 7
		var stack []string
		for d := 0; d < 1+int(x%9); d++ {
			stack = append(stack, names[(x>>(3*d))%5])
		}
		recs[i] = rec(float64(1+i%7), stack...)
		switch i % 11 {
		case 3:
			recs[i].InUse.Enc = parse.Unresolved
		case 5:
			recs[i].Breakdown, recs[i].Thread = true, fmt.Sprint("t", i%3)
		}
	}
	for _, by := range []By{ByStack, ByThread} {
		finish := func(seed bool) string {
			nm := &fakeNamer{needed: map[string]int{}}
			tb := NewTable([]unbias.Value{unbias.InUseSpace}, KeysFor(by))
			collectInto(t, tb, nm, seed, recs, &parse.Profile{Breakdowns: 1, Encoding: parse.Raw})
			// Cells added later must not find statistics left in the
			// room the table took from the collector.
			more := NewTable(tb.values, tb.keys)
			late := make([]parse.Record, 200)
			for i := range late {
				late[i] = rec(1, "late", fmt.Sprint("x", i))
			}
			collectInto(t, more, nm, false, late, &parse.Profile{})
			tb.Merge(more)
			g, _, total := tb.Groups(by, Filter{}, 0, 0)
			var b strings.Builder
			for _, gr := range g {
				fmt.Fprintf(&b, "%s %+v\n", gr.Key, gr.Flat)
			}
			fmt.Fprintf(&b, "total %+v", total)
			return b.String()
		}
		if fresh, seeded := finish(false), finish(true); fresh != seeded {
			t.Errorf("by %s: fresh table\n%s\nwant, as a table with cells gets it,\n%s", by, fresh, seeded)
		}
	}
}

// A stack no cell or kept record with statistics has is not mapped into
// the table (most of a Go heap profile's, read for an in-use value), but
// its unnamed frames are reported as before; a stack with one empty and one kept cell
// (two types) is mapped, also when it comes first by an empty cell and
// the table takes the collector's room (fresh) or not (seeded).
func TestFinishSkipsEmptyStacks(t *testing.T) {
	typed := func(r parse.Record, typ string) parse.Record { r.Type = typ; return r }
	for _, seed := range []bool{false, true} {
		nm := &fakeNamer{needed: map[string]int{}, names: map[uint64]string{0x10: "f", 0x20: "main", 0x50: "g"}}
		tb := NewTable([]unbias.Value{unbias.InUseSpace}, Keys{})
		recs := []parse.Record{
			addrRec(1, 0x10, 0x20),
			addrRec(0, 0x30, 0x40), // nothing in use
			typed(addrRec(0, 0x50, 0x20), "X"),
			addrRec(2, 0x50, 0x20),
			addrRec(0, 0x10, 0x20, 0x60),
			typed(addrRec(0, 0x70, 0x20), "X"), // first empty...
			typed(addrRec(4, 0x10, 0x20), "X"),
			typed(addrRec(8, 0x70, 0x20), "Y"), // ...then kept
		}
		// Kept for their encoding: one with nothing in use, one with.
		for _, r := range []parse.Record{addrRec(0, 0x80, 0x20), addrRec(16, 0x90, 0x20)} {
			r.InUse.Enc = parse.Unresolved
			recs = append(recs, r)
		}
		collectInto(t, tb, nm, seed, recs, &parse.Profile{Encoding: parse.Raw})
		var got []string
		groups, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
		for _, g := range groups {
			got = append(got, fmt.Sprintf("%s:%g", g.Key, g.Flat.Samples))
		}
		if want := "[main;0x90:16 main;0x70:8 main;f:5 main;g:2]"; fmt.Sprint(got) != want {
			t.Errorf("seed %v: groups %v, want %s", seed, got, want)
		}
		if n, cells := tb.stacks.len()-b2i(seed), tb.Len()-b2i(seed); n != 4 || cells != 5 {
			t.Errorf("seed %v: %d table stacks and %d cells, want 4 and 5 (the empty ones passed over)", seed, n, cells)
		}
		slices.Sort(nm.unresolved)
		if fmt.Sprintf("%x", nm.unresolved) != "[30 40 60 70 80 90]" {
			t.Errorf("seed %v: unresolved %x, want 30 40 60 70 80 90", seed, nm.unresolved)
		}
	}
}

// A record with nothing for any kept value makes no cell; its stack is
// noted to be named, and a stack whose first cell comes after such a
// record says so (lateCell: its cells are not in stack order).
func TestEmptyRecordsMakeNoCell(t *testing.T) {
	for _, late := range []bool{false, true} {
		c := NewCollector([]unbias.Value{unbias.InUseSpace}, Keys{}, Window{}, 0)
		recs := []parse.Record{addrRec(1, 0x10), addrRec(0, 0x20), addrRec(0, 0x30)}
		if late {
			recs = append(recs, addrRec(2, 0x20))
		}
		for i := range recs {
			c.Record(&recs[i])
		}
		if cells := c.Len(); cells != 1+b2i(late) || c.lateCell != late {
			t.Errorf("late %v: %d cells, lateCell %v", late, cells, c.lateCell)
		}
		if fmt.Sprint(c.bare[0]) != "[false true true]" || c.bare[1] != nil {
			t.Errorf("late %v: bare %v", late, c.bare)
		}
	}
}

// A record with nothing for any kept value whose frames the parser all
// named is dropped: no stack, no cell, nothing to name. One with an
// unnamed frame keeps its stack (bare), so that what the namer is told
// is the same whichever value is read.
func TestNamedEmptyRecordsDropped(t *testing.T) {
	withFunc := func(r parse.Record, i int, fn string) parse.Record { r.Stack[i].Func = fn; return r }
	newRecs := func() []parse.Record {
		return []parse.Record{
			rec(0, "main", "alloc"),                     // nothing in use, named: dropped
			withFunc(addrRec(0, 0x20, 0x30), 1, "main"), // nothing in use, 0x20 unnamed: bare
			rec(1, "main", "grow"),                      // in use
			withFunc(addrRec(0, 0x40), 0, "main"),       // nothing in use, named: dropped
			withFunc(addrRec(2, 0x50, 0x60), 1, "main"), // in use
		}
	}
	for _, pair := range []unbias.Value{unbias.InUseSpace, unbias.AllocSpace} {
		recs := newRecs()
		for i := range recs {
			recs[i].Alloc = parse.Counts{Objects: 1, Bytes: 64}
		}
		c := NewCollector([]unbias.Value{pair}, Keys{}, Window{}, 0)
		for i := range recs {
			c.Record(&recs[i])
		}
		c.flush()
		stacks, want := c.stacks.len(), 5
		if pair == unbias.InUseSpace {
			want = 3 // the two dropped have none
			if fmt.Sprint(c.bare[0]) != "[true]" {
				t.Errorf("%v: bare %v, want [true] (the stack with 0x20 only)", pair, c.bare[0])
			}
		}
		if stacks != want {
			t.Errorf("%v: %d stacks, want %d", pair, stacks, want)
		}
		nm := &fakeNamer{needed: map[string]int{}, names: map[uint64]string{}}
		if err := c.Finish(NewTable(c.values, Keys{}), nm, &parse.Profile{}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(nm.unresolved)
		if fmt.Sprintf("%x", nm.unresolved) != "[20 50]" {
			t.Errorf("%v: unresolved %x, want 20 50 whatever the value", pair, nm.unresolved)
		}
	}
}

// Reads says which counts the collector reads: after Begin, only the
// kind of the default value when narrowed, both within a time window or
// when not narrowed.
func TestCollectorReads(t *testing.T) {
	all := []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}
	for _, tt := range []struct {
		name         string
		narrow       bool
		w            Window
		p            parse.Profile
		inUse, alloc bool
	}{
		{"narrowed, in use", true, Window{}, parse.Profile{HasInUse: true, HasAlloc: true}, true, false},
		{"narrowed, allocations", true, Window{}, parse.Profile{HasAlloc: true}, false, true},
		{"not narrowed", false, Window{}, parse.Profile{HasInUse: true, HasAlloc: true}, true, true},
		{"window", true, Window{On: true, From: 1}, parse.Profile{HasInUse: true, HasAlloc: true}, true, true},
	} {
		c := NewCollector(all, Keys{}, tt.w, 0)
		if tt.narrow {
			c.Narrow()
		}
		c.Begin(&tt.p)
		if in, al := c.Reads(); in != tt.inUse || al != tt.alloc {
			t.Errorf("%s: Reads %v, %v; want %v, %v", tt.name, in, al, tt.inUse, tt.alloc)
		}
	}
}
