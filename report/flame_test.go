package report

import (
	"fmt"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// deep is a record of a three-frame stack, leaf first.
func deep(leaf, mid string, n float64) parse.Record {
	r := rec(leaf, n)
	r.Stack = []parse.Frame{{Addr: 3, Func: leaf}, {Addr: 4, Func: mid}, {Addr: 2, Func: "main"}}
	return r
}

// A flame node's statistics are those of every stack through its path, so
// main's interval is the report's cum interval of main, and the root's is
// the total's; children come widest first.
func TestFlame(t *testing.T) {
	p := profile("jemalloc", true, false, rec("a", 5), deep("b", "mid", 3), deep("c", "mid", 1))
	opt := Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9, Method: ci.Auto, Flame: true}
	b, err := builder(t, opt, p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Flame(0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Report()
	if err != nil {
		t.Fatal(err)
	}
	if f.Root.Result.Estimate != r.Total.Flat.Estimate || f.Root.Result.Lo != r.Total.Flat.Lo || f.Root.Result.Hi != r.Total.Flat.Hi {
		t.Errorf("root interval %+v, total %+v", f.Root.Result, r.Total.Flat)
	}
	if len(f.Root.Children) != 1 || f.Root.Children[0].Name != "main" {
		t.Fatalf("root's children: %+v", f.Root.Children)
	}
	main := f.Root.Children[0]
	for _, row := range r.Rows {
		if row.Key == "main" && (main.Result.Lo != row.Cum.Lo || main.Result.Hi != row.Cum.Hi || main.Stats.Samples != 9) {
			t.Errorf("main: flame %+v, report cum %+v", main.Result, row.Cum)
		}
	}
	if len(main.Children) != 2 || main.Children[0].Name != "a" || main.Children[1].Name != "mid" {
		t.Fatalf("main's children: %+v", main.Children)
	}
	mid := main.Children[1]
	if mid.Stats.Samples != 4 || len(mid.Children) != 2 || mid.Children[0].Name != "b" || mid.Children[1].Stats.Samples != 1 {
		t.Errorf("mid: %+v", mid)
	}
	if !(mid.Result.Lo < mid.Result.Estimate && mid.Result.Estimate < mid.Result.Hi) {
		t.Errorf("mid's interval %+v", mid.Result)
	}
}

// Nodes narrower than the minimum share go, with their callees, and are
// counted.
func TestFlamePrune(t *testing.T) {
	p := profile("jemalloc", true, false, rec("a", 50), deep("b", "mid", 1))
	b, err := builder(t, Options{Value: unbias.InUseSpace, By: aggregate.ByType, Confidence: 0.95, Flame: true, SingleInput: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Flame(0.05)
	if err != nil {
		t.Fatal(err)
	}
	main := f.Root.Children[0]
	if len(main.Children) != 1 || main.Children[0].Name != "a" || f.Pruned != 2 {
		t.Errorf("main's children %+v, pruned %d; want a alone, 2 pruned", main.Children, f.Pruned)
	}
}

// The tree gathers statistics for the nodes it keeps only, each the
// merge of the stacks through it.
func TestTreeGathersKeptNodes(t *testing.T) {
	tr := newTree(func(id uint32) string { return fmt.Sprint(id) })
	big, small := ci.Stats{N: 1, Estimate: 100, Samples: 1}, ci.Stats{N: 1, Estimate: 1, Samples: 1}
	stacks := []struct {
		frames []uint32
		st     *ci.Stats
	}{{[]uint32{3, 2, 1}, &big}, {[]uint32{4, 2, 1}, &small}, {[]uint32{2, 1}, &big}}
	for _, s := range stacks {
		tr.add(s.frames, s.st)
	}
	tr.keep(10) // 1 (201), 2 (201), 3 (100) stay; 4 (1) goes
	for _, s := range stacks {
		tr.gather(s.frames, s.st)
	}
	if len(tr.stats) != 4 || tr.nodes.len() != 5 {
		t.Fatalf("%d of %d nodes kept, want 4 of 5", len(tr.stats), tr.nodes.len())
	}
	for i, want := range []struct {
		est float64
		n   int64
	}{{201, 3}, {201, 3}, {201, 3}, {100, 1}} {
		if st := tr.stats[i]; st.Estimate != want.est || st.N != want.n {
			t.Errorf("kept node %d: %+v, want estimate %v of %d stacks", i, st, want.est, want.n)
		}
	}
}

// A tree of more nodes than a chunk holds and more children than the
// index starts with finds each child again, keeps them in the order they
// came, and sums each node's estimates.
func TestTreeManyNodes(t *testing.T) {
	tr := newTree(func(id uint32) string { return fmt.Sprint(id) })
	const leaves = 3*nodeChunk + 7
	one := ci.Stats{N: 1, Estimate: 1, Samples: 1}
	for round := range 2 {
		for i := range leaves {
			// Leaves in a different order each round: the first
			// round's order stays.
			leaf := uint32(i)
			if round == 1 {
				leaf = uint32(leaves - 1 - i)
			}
			tr.add([]uint32{leaf + 1, 0}, &one)
		}
	}
	if n := tr.nodes.len(); n != leaves+2 {
		t.Fatalf("%d nodes, want %d", n, leaves+2)
	}
	main := tr.child.get(0, 0)
	if est := tr.nodes.at(main).est; est != 2*leaves {
		t.Errorf("main: estimate %v, want %v", est, 2*leaves)
	}
	want := uint32(1)
	for c := tr.nodes.at(main).first; c != 0; c = tr.nodes.at(c).next {
		if n := tr.nodes.at(c); n.fn != want || n.est != 2 || tr.child.get(main, n.fn) != c {
			t.Fatalf("child %d: fn %d, estimate %v; want fn %d, estimate 2", c, n.fn, n.est, want)
		}
		want++
	}
	if want != leaves+1 {
		t.Errorf("%d children listed, want %d", want-1, leaves)
	}
	if n := tr.count(0); n != leaves+2 {
		t.Errorf("count %d, want %d", n, leaves+2)
	}
}

// The root of an empty profile's flame graph is the report's total:
// nothing sampled, bounded above, not "no interval".
func TestFlameEmpty(t *testing.T) {
	p := profile("jemalloc", true, false)
	p.p.Source.Rate = 524288
	opt := Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95, Method: ci.Auto, Flame: true}
	b, err := builder(t, opt, p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Flame(0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Report()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Root.Result, r.Total.Flat; got.Estimate != want.Estimate || got.Lo != want.Lo || got.Hi != want.Hi || got.Method != want.Method || !(got.Hi > 0) {
		t.Errorf("root %+v, want the total %+v", f.Root.Result, r.Total.Flat)
	}
}
