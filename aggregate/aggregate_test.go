package aggregate

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// rec is a record of n raw samples of 48 bytes (one jemalloc size class)
// at R = 2^19 on the given stack, leaf first.
func rec(n float64, stack ...string) parse.Record {
	fr := make([]parse.Frame, len(stack))
	for i, f := range stack {
		fr[i] = parse.Frame{Addr: uint64(0x1000 + len(f)*16 + i), Func: f}
	}
	return parse.Record{Stack: fr, Scheme: parse.Bernoulli, Rate: 1 << 19,
		InUse: parse.Counts{Objects: n, Bytes: 48 * n, Size: 48}}
}

// agg is a table built from records, grouped one way.
type agg struct {
	t  *Table
	by By
	f  Filter
}

// collect streams recs through a Collector into a new Table.
func collect(t *testing.T, by By, v unbias.Value, f Filter, w Window, recs ...parse.Record) *agg {
	t.Helper()
	c := NewCollector([]unbias.Value{v}, KeysFor(by), w, 0)
	for i := range recs {
		c.Record(&recs[i])
	}
	tb := NewTable([]unbias.Value{v}, KeysFor(by))
	if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
		t.Fatal(err)
	}
	return &agg{t: tb, by: by, f: f}
}

func (a *agg) Groups() []*Group {
	g, _, _ := a.t.Groups(a.by, a.f, 0, 0)
	return g
}

func (a *agg) Total() ci.Stats { return a.t.Total(a.f)[0] }

func groups(a *agg) map[string]*Group {
	m := map[string]*Group{}
	for _, g := range a.Groups() {
		m[g.Key] = g
	}
	return m
}

func TestByFunc(t *testing.T) {
	recs := []parse.Record{
		rec(2, "leaf", "mid", "main"),
		rec(3, "mid", "main"),
		rec(5, "leaf", "leaf", "rec", "rec", "main"), // recursion counts once per stack
	}
	a := collect(t, ByFunc, unbias.InUseSpace, Filter{}, Window{}, recs...)
	g := groups(a)
	for _, tt := range []struct {
		fn              string
		flatN, cumN     float64
		flatRows, cumRs int64
	}{
		{"leaf", 7, 7, 2, 2},
		{"mid", 3, 5, 1, 2},
		{"main", 0, 10, 0, 3},
		{"rec", 0, 5, 0, 1},
	} {
		x := g[tt.fn]
		if x == nil {
			t.Fatalf("no group %s", tt.fn)
		}
		if x.Flat.Samples != tt.flatN || x.Cum.Samples != tt.cumN || x.Flat.N != tt.flatRows || x.Cum.N != tt.cumRs {
			t.Errorf("%s: flat %v (%d records), cum %v (%d); want %v (%d), %v (%d)",
				tt.fn, x.Flat.Samples, x.Flat.N, x.Cum.Samples, x.Cum.N, tt.flatN, tt.flatRows, tt.cumN, tt.cumRs)
		}
	}
	if tot := a.Total(); tot.Samples != 10 || tot.N != 3 {
		t.Errorf("total %+v", tot)
	}
	// Largest flat first, then cum.
	if order := a.Groups(); order[0].Key != "leaf" || order[1].Key != "mid" || order[2].Key != "main" {
		t.Errorf("order %s %s %s", order[0].Key, order[1].Key, order[2].Key)
	}
}

func TestByStackAndOthers(t *testing.T) {
	r := rec(2, "leaf", "main")
	r.Thread, r.Type = "t1", "Foo"
	unsym := parse.Record{Stack: []parse.Frame{{Addr: 0xabc}}, Scheme: parse.Bernoulli, Rate: 1 << 19,
		InUse: parse.Counts{Objects: 1, Bytes: 48}}
	for _, tt := range []struct {
		by   By
		want []string
	}{
		{ByStack, []string{"main;leaf", "0xabc"}},
		{ByLeaf, []string{"leaf", "0xabc"}},
		{ByThread, []string{"t1", "(no thread)"}},
		{ByType, []string{"Foo", "(no type)"}},
		{BySize, []string{"48"}},
	} {
		a := collect(t, tt.by, unbias.InUseSpace, Filter{}, Window{}, r, unsym)
		gs := a.Groups()
		if len(gs) != len(tt.want) {
			t.Errorf("%s: %d groups, want %v", tt.by, len(gs), tt.want)
			continue
		}
		for i, w := range tt.want {
			if gs[i].Key != w {
				t.Errorf("%s: group %d is %q, want %q", tt.by, i, gs[i].Key, w)
			}
		}
		if tt.by == ByStack && (len(gs[0].Stack) != 2 || gs[0].Stack[0] != "leaf") {
			t.Errorf("stack %v, want leaf first", gs[0].Stack)
		}
	}
}

func TestFilter(t *testing.T) {
	recs := []parse.Record{rec(1, "a", "main"), rec(2, "b", "main"), rec(4, "c", "other")}
	recs[0].Time, recs[1].Time, recs[2].Time = 10, 20, 30
	for _, tt := range []struct {
		name string
		f    Filter
		w    Window
		want float64
	}{
		{"none", Filter{}, Window{}, 7},
		{"focus", Filter{Focus: regexp.MustCompile("^main$")}, Window{}, 3},
		{"ignore", Filter{Ignore: regexp.MustCompile("^b$")}, Window{}, 5},
		{"focus and ignore", Filter{Focus: regexp.MustCompile("main"), Ignore: regexp.MustCompile("^a$")}, Window{}, 2},
		{"window", Filter{}, Window{On: true, From: 15, To: 30}, 2},
		{"window open end", Filter{}, Window{On: true, From: 15}, 6},
	} {
		a := collect(t, ByFunc, unbias.InUseSpace, tt.f, tt.w, recs...)
		if got := a.Total().Samples; got != tt.want {
			t.Errorf("%s: %v samples, want %v", tt.name, got, tt.want)
		}
	}
}

// Merging tables equals adding everything to one: the sums are
// commutative and associative.
func TestMerge(t *testing.T) {
	recs := []parse.Record{rec(1, "a", "main"), rec(2, "b", "main"), rec(4, "a", "x")}
	one := collect(t, ByFunc, unbias.InUseSpace, Filter{}, Window{}, recs...)
	x := collect(t, ByFunc, unbias.InUseSpace, Filter{}, Window{}, recs[2:]...)
	y := collect(t, ByFunc, unbias.InUseSpace, Filter{}, Window{}, recs[:2]...)
	x.t.Merge(y.t)
	g1, g2 := groups(one), groups(x)
	for k, g := range g1 {
		if g2[k] == nil || g2[k].Flat != g.Flat || g2[k].Cum != g.Cum {
			t.Errorf("%s: merged %+v, want %+v", k, g2[k], g)
		}
	}
	if one.Total() != x.Total() {
		t.Errorf("totals differ: %+v vs %+v", one.Total(), x.Total())
	}
}

func TestParseBy(t *testing.T) {
	for _, n := range byNames {
		if b, err := ParseBy(n); err != nil || b.String() != n {
			t.Errorf("ParseBy(%q) = %v, %v", n, b, err)
		}
	}
	if _, err := ParseBy("color"); err == nil {
		t.Error("ParseBy accepted color")
	}
}

// TestGroupsTopOrder checks that asking for the first top groups gives
// the same groups, in the same order and with the same statistics, as the
// whole sorted list, ties included: the first top are picked before
// sorting (pickTop), and their cums made afterwards (topCums).
func TestGroupsTopOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		var recs []parse.Record
		for i := range 200 + rng.IntN(300) {
			// Few distinct counts: many groups tie on flat and cum.
			recs = append(recs, rec(float64(1+rng.IntN(4)), fmt.Sprintf("f%d", i%97), fmt.Sprintf("g%d", rng.IntN(40)), "main"))
		}
		for _, by := range []By{ByFunc, ByLeaf, ByStack} {
			a := collect(t, by, unbias.InUseSpace, Filter{}, Window{}, recs...)
			all, _, _ := a.t.Groups(by, Filter{}, 0, 0)
			for _, top := range []int{1, 3, 10, 20} {
				got, cut, _ := a.t.Groups(by, Filter{}, 0, top)
				if len(got) != top || cut != len(all)-top {
					t.Fatalf("trial %d by %v top %d: %d groups, cut %d; want %d, %d", trial, by, top, len(got), cut, top, len(all)-top)
				}
				for i := range got {
					if got[i].Key != all[i].Key {
						t.Fatalf("trial %d by %v top %d: group %d is %q, want %q", trial, by, top, i, got[i].Key, all[i].Key)
					}
					if got[i].Flat != all[i].Flat || got[i].Cum != all[i].Cum {
						t.Fatalf("trial %d by %v top %d: group %q has flat %+v cum %+v, want %+v, %+v", trial, by, top, got[i].Key, got[i].Flat, got[i].Cum, all[i].Flat, all[i].Cum)
					}
				}
			}
		}
	}
}

// Hide drops the hidden functions' frames wherever they are in a stack;
// stacks that differed only there become one, and a stack left with no
// frame is no stack.
func TestHide(t *testing.T) {
	unsym := parse.Record{Stack: []parse.Frame{{Addr: 0xabc}, {Addr: 0x1000, Func: "main"}}, Scheme: parse.Bernoulli,
		Rate: 1 << 19, InUse: parse.Counts{Objects: 1, Bytes: 48, Size: 48}}
	recs := []parse.Record{
		rec(1, "xmalloc", "a", "main"),
		rec(2, "xmalloc", "b", "main"),
		rec(4, "a", "main"),
		rec(8, "xmalloc", "xmalloc_wrap", "a", "main"), // hidden twice over
		rec(16, "xmalloc"),                             // nothing left
		unsym,
	}
	for _, tt := range []struct {
		hide string
		hid  bool
		want map[string]float64 // --by stack key: samples
	}{
		{"^xmalloc", true, map[string]float64{"main;a": 13, "main;b": 2, "(no stack)": 16, "main;0xabc": 1}},
		{"^b$", true, map[string]float64{"main;a;xmalloc": 1, "main;xmalloc": 2, "main;a": 4, "main;a;xmalloc_wrap;xmalloc": 8, "xmalloc": 16, "main;0xabc": 1}},
		{"^0xabc$", true, map[string]float64{"main;a;xmalloc": 1, "main;b;xmalloc": 2, "main;a": 4, "main;a;xmalloc_wrap;xmalloc": 8, "xmalloc": 16, "main": 1}},
		{"^main$", true, map[string]float64{"a;xmalloc": 1, "b;xmalloc": 2, "a": 4, "a;xmalloc_wrap;xmalloc": 8, "xmalloc": 16, "0xabc": 1}},
		{".", true, map[string]float64{"(no stack)": 32}},
		{"^nothing$", false, map[string]float64{"main;a;xmalloc": 1, "main;b;xmalloc": 2, "main;a": 4, "main;a;xmalloc_wrap;xmalloc": 8, "xmalloc": 16, "main;0xabc": 1}},
	} {
		c := NewCollector([]unbias.Value{unbias.InUseSpace}, KeysFor(ByStack), Window{}, 0)
		for i := range recs {
			r := recs[i]
			c.Record(&r)
		}
		tb := NewTable([]unbias.Value{unbias.InUseSpace}, KeysFor(ByStack))
		tb.Hide(regexp.MustCompile(tt.hide))
		if err := c.Finish(tb, nil, &parse.Profile{}); err != nil {
			t.Fatal(err)
		}
		if tb.Hid() != tt.hid {
			t.Errorf("--hide %s: Hid() = %v, want %v", tt.hide, tb.Hid(), tt.hid)
		}
		got := map[string]float64{}
		gs, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
		for _, g := range gs {
			got[g.Key] = g.Flat.Samples
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("--hide %s: rows %v, want %v", tt.hide, got, tt.want)
		}
		if tot := tb.Total(Filter{})[0].Samples; tot != 32 {
			t.Errorf("--hide %s: total %v samples, want all 32", tt.hide, tot)
		}
	}
}

// Names by source line match on the whole name, or on their function or
// their file alone (as pprof matches a line's function or file name).
func TestMatchName(t *testing.T) {
	for _, tt := range []struct {
		re, name string
		want     bool
	}{
		{`^zmalloc$`, "zmalloc", true},
		{`^zmalloc$`, "zmalloc /src/zmalloc.c:120", true},
		{`zmalloc\.c$`, "zmalloc /src/zmalloc.c:120", true},
		{`\.c:120$`, "zmalloc /src/zmalloc.c:120", true},
		{`^/src`, "zmalloc /src/zmalloc.c:120", true},
		{`^zmalloc$`, "zmalloc_usable /src/zmalloc.c:120", false},
		{`^main$`, "main.go", false},
		{`^Lab\.phase2$`, "Lab.phase2 :53", true},
		{`^operator new$`, "operator new", true},
	} {
		if got := matchName(regexp.MustCompile(tt.re), tt.name); got != tt.want {
			t.Errorf("matchName(%s, %q) = %v, want %v", tt.re, tt.name, got, tt.want)
		}
	}
}
