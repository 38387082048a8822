package aggregate

import (
	"fmt"
	"slices"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

func TestFrameStore(t *testing.T) {
	cases := []struct {
		name  string
		ids   []uint32
		words int
	}{
		{"empty", nil, 0},
		{"narrow", []uint32{0, 1, 7, 65535, 3}, 5},
		{"one wide id", []uint32{1, 65536, 2}, 6},
		{"wide", []uint32{1 << 31, 0xdeadbeef, 0, 0x10001, 9, 8, 7}, 14},
	}
	var s frameStore
	var spans []span
	for _, c := range cases {
		sp := s.put(c.ids)
		if sp.len() != len(c.ids) || sp.words() != c.words {
			t.Errorf("%s: put gave %d ids in %d words, want %d in %d", c.name, sp.len(), sp.words(), len(c.ids), c.words)
		}
		spans = append(spans, sp)
	}
	// Every stack reads back after the others were stored.
	for i, c := range cases {
		if got := s.get(spans[i], []uint32{42}); !slices.Equal(got, append([]uint32{42}, c.ids...)) {
			t.Errorf("%s: get appended %v, want %v", c.name, got[1:], c.ids)
		}
		if !s.equal(spans[i], c.ids) {
			t.Errorf("%s: not equal to itself", c.name)
		}
		for j, o := range cases {
			if j != i && s.equal(spans[i], o.ids) {
				t.Errorf("%s: equal to %s", c.name, o.name)
			}
		}
	}
	// putIn rewrites a stack's room when the new ids take no more words.
	for _, c := range []struct {
		name    string
		at      int
		ids     []uint32
		fits    bool
		another int // a stack that must be left as it was
	}{
		{"narrow in narrow", 1, []uint32{4, 5}, true, 2},
		{"wide in narrow", 1, []uint32{1 << 20, 1}, true, 2},
		{"wide too long for narrow", 1, []uint32{1 << 20, 1, 2}, false, 2},
		{"narrow in wide", 3, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, true, 2},
		{"wide in wide", 2, []uint32{1 << 20, 1 << 21, 3}, true, 3},
		{"too long", 2, []uint32{1, 2, 3, 4, 5, 6, 7}, false, 3},
	} {
		var st frameStore
		var sps []span
		for _, cc := range cases {
			sps = append(sps, st.put(cc.ids))
		}
		sp, ok := st.putIn(sps[c.at], c.ids)
		if ok != c.fits {
			t.Errorf("%s: putIn fitted %v, want %v", c.name, ok, c.fits)
			continue
		}
		if ok && !slices.Equal(st.get(sp, nil), c.ids) {
			t.Errorf("%s: read %v back, want %v", c.name, st.get(sp, nil), c.ids)
		}
		if got := st.get(sps[c.another], nil); !slices.Equal(got, cases[c.another].ids) {
			t.Errorf("%s: %s became %v", c.name, cases[c.another].name, got)
		}
	}
}

func TestStackTableLeaf(t *testing.T) {
	st := newStackTable(4)
	for _, ids := range [][]uint32{nil, {3, 1}, {70000, 1}, {5, 70000}} {
		id := st.intern(ids)
		leaf, ok := st.leaf(id)
		if ok != (len(ids) > 0) || ok && leaf != ids[0] {
			t.Errorf("leaf of %v: %d, %v", ids, leaf, ok)
		}
		if got := st.stack(id, nil); !slices.Equal(got, ids) {
			t.Errorf("stack %v read back as %v", ids, got)
		}
		if again := st.intern(slices.Clone(ids)); again != id {
			t.Errorf("%v interned again as %d, want %d", ids, again, id)
		}
	}
}

// Stacks of frame and function ids past 16 bits (wide) and below (narrow)
// come out of a table whole, fresh (the table takes the collector's
// room, rewriting stacks in place) or seeded (it copies them).
func TestWideStacksInTable(t *testing.T) {
	const addrs, stacks, depth = 150000, 8000, 30
	nm := &fakeNamer{names: map[uint64]string{}, needed: map[string]int{}}
	for a := uint64(1); a <= addrs; a++ {
		if a%3 != 0 || a < 60000 { // a third of the high ones stay unnamed: 0x… functions
			nm.names[0x1000*a] = fmt.Sprint("f", a)
		}
	}
	recs := make([]parse.Record, stacks)
	want, leaves := map[string]bool{}, map[string]bool{}
	for i := range recs {
		x := uint64(i)*2654435761 + 11
		fr := make([]uint64, depth)
		names := make([]string, depth)
		for d := range fr {
			// Early stacks use low addresses only, so that their ids fit
			// 16 bits; later ones reach all of them.
			span := uint64(min(addrs, 1000+i*40))
			a := 1 + (x>>(d%20)+uint64(d)*7919)%span
			fr[d] = 0x1000 * a
			if names[d] = nm.names[fr[d]]; names[d] == "" {
				names[d] = fmt.Sprintf("0x%x", fr[d])
			}
		}
		recs[i] = addrRec(float64(1+i%5), fr...)
		want[StackKey(names)] = true
		leaves[names[0]] = true
	}
	for _, seed := range []bool{false, true} {
		tb := NewTable([]unbias.Value{unbias.InUseSpace}, KeysFor(ByStack))
		collectInto(t, tb, nm, seed, recs, &parse.Profile{})
		var narrow, wide int
		for _, sp := range tb.stacks.spans {
			if sp.words() > sp.len() {
				wide++
			} else {
				narrow++
			}
		}
		if narrow < 100 || wide < 100 {
			t.Fatalf("seeded %v: %d narrow and %d wide stacks; the test needs both", seed, narrow, wide)
		}
		groups, _, _ := tb.Groups(ByStack, Filter{}, 0, 0)
		got := 0
		for _, g := range groups {
			if g.Key == "seed" {
				continue
			}
			got++
			if !want[g.Key] {
				t.Fatalf("seeded %v: stack %q was never recorded", seed, g.Key)
			}
		}
		if got != len(want) {
			t.Errorf("seeded %v: %d stacks, want %d", seed, got, len(want))
		}
		groups, _, _ = tb.Groups(ByLeaf, Filter{}, 0, 0)
		got = 0
		for _, g := range groups {
			if g.Key != "seed" {
				got++
				if !leaves[g.Key] {
					t.Fatalf("seeded %v: leaf %q was never recorded", seed, g.Key)
				}
			}
		}
		if got != len(leaves) {
			t.Errorf("seeded %v: %d leaves, want %d", seed, got, len(leaves))
		}
	}
}
