package aggregate

import (
	"slices"
	"testing"
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
