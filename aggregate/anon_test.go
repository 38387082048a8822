package aggregate

import (
	"fmt"
	"sort"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// moduleNamer names nothing and keys addresses by the module of the
// mapping they lie in, as symbolize.Session does for a missing binary.
type moduleNamer struct {
	fakeNamer
	maps []parse.Mapping
}

func (n *moduleNamer) ModuleKey(addr uint64) (string, uint64, *parse.Mapping) {
	for i := range n.maps {
		if m := &n.maps[i]; m.Start <= addr && addr < m.Limit {
			return m.File, addr - m.Start + m.Offset, m
		}
	}
	return "", 0, nil
}

// funcSamples is the table's --by func rows as "key:samples", sorted.
func funcSamples(tb *Table) []string {
	groups, _, _ := tb.Groups(ByFunc, Filter{}, 0, 0)
	var out []string
	for _, g := range groups {
		out = append(out, fmt.Sprintf("%s:%g", g.Key, g.Flat.Samples))
	}
	sort.Strings(out)
	return out
}

// The unnamed functions of a table's first input are stored without
// lookups when their keys are distinct, and found by key by the inputs
// after it and by a merge; a module mapped twice can give two addresses
// one key, and those are one function.
func TestAnonFunctions(t *testing.T) {
	lib := func(start, limit, off uint64) parse.Mapping {
		return parse.Mapping{Start: start, Limit: limit, Offset: off, File: "a.so"}
	}
	for _, tc := range []struct {
		name      string
		maps      []parse.Mapping
		first     []parse.Record
		second    []parse.Record
		unplaced  int // keys the first input left unplaced
		want      string
		wantFuncs int
	}{{
		name:  "distinct",
		maps:  []parse.Mapping{lib(0x1000, 0x2000, 0)},
		first: []parse.Record{addrRec(1, 0x1010), addrRec(2, 0x1020), addrRec(4, 0x7777)},
		// 0x1020 and 0x7777 again, and a new offset.
		second:    []parse.Record{addrRec(8, 0x1020), addrRec(16, 0x7777), addrRec(32, 0x1030)},
		unplaced:  3,
		want:      "[0x7777:20 a.so+0x10:1 a.so+0x20:10 a.so+0x30:32]",
		wantFuncs: 4,
	}, {
		name: "module mapped twice",
		maps: []parse.Mapping{lib(0x1000, 0x2000, 0), lib(0x9000, 0xa000, 0)},
		// 0x1010 and 0x9010 are both a.so+0x10.
		first:     []parse.Record{addrRec(1, 0x1010), addrRec(2, 0x9010), addrRec(4, 0x1020)},
		second:    []parse.Record{addrRec(8, 0x9020)},
		unplaced:  0,
		want:      "[a.so+0x10:3 a.so+0x20:12]",
		wantFuncs: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			nm := &moduleNamer{fakeNamer: fakeNamer{needed: map[string]int{}}, maps: tc.maps}
			tb := NewTable([]unbias.Value{unbias.InUseSpace}, Keys{})
			tb.KeyByModule()
			collectInto(t, tb, nm, false, tc.first, &parse.Profile{})
			if a := &tb.anons; len(a.keys.keys)-a.placed != tc.unplaced {
				t.Errorf("after the first input: %d keys, %d placed; want %d unplaced", len(a.keys.keys), a.placed, tc.unplaced)
			}
			collectInto(t, tb, nm, false, tc.second, &parse.Profile{})
			if got := fmt.Sprint(funcSamples(tb)); got != tc.want {
				t.Errorf("rows %s, want %s", got, tc.want)
			}
			if a := &tb.anons; len(a.keys.keys) != tc.wantFuncs || a.placed != tc.wantFuncs {
				t.Errorf("%d unnamed functions, %d placed; want %d", len(a.keys.keys), a.placed, tc.wantFuncs)
			}
			// The same inputs read into two tables, then merged.
			var parts [2]*Table
			for i, recs := range [][]parse.Record{tc.first, tc.second} {
				parts[i] = NewTable([]unbias.Value{unbias.InUseSpace}, Keys{})
				parts[i].KeyByModule()
				collectInto(t, parts[i], nm, false, recs, &parse.Profile{})
			}
			parts[0].Merge(parts[1])
			if got := fmt.Sprint(funcSamples(parts[0])); got != tc.want {
				t.Errorf("merged: rows %s, want %s", got, tc.want)
			}
		})
	}
}

// growNames keeps the names there are and adds unnamed ones, in the room
// there is or in new room.
func TestGrowNames(t *testing.T) {
	names := make([]string, 2, 4)
	names[0], names[1] = "a", "b"
	for _, n := range []int{2, 4, 9} {
		got := growNames(names, n)
		if len(got) != n || got[0] != "a" || got[1] != "b" {
			t.Fatalf("growNames to %d: %q", n, got)
		}
		for i := 2; i < n; i++ {
			if got[i] != "" {
				t.Fatalf("growNames to %d: name %d is %q, want unnamed", n, i, got[i])
			}
		}
	}
}
