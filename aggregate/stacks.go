package aggregate

import (
	"sort"

	"github.com/heapest/heapest/ci"
)

// EachStack calls fn once per stack that has something for some value,
// with the stack's function ids (leaf first: names by FuncName) and its
// statistics per value (in Values order), the cells of the stack that
// pass f merged. Stacks come largest first by the estimate of value index
// main, ties in the table's order, which depends only on the inputs: the
// same inputs give the same sequence. fn must not keep st.
//
// It is what pprof output reads: no key string is built and, where a stack
// has one cell (it nearly always does), its statistics are read in place.
func (t *Table) EachStack(f Filter, main int, fn func(stack []uint32, st []ci.Stats) error) error {
	keep := t.filterCells(f)
	nv := len(t.values)
	// first holds per stack its cell (+1) when it has one, -1 when more.
	first := make([]int32, t.stacks.len())
	multi := map[uint32][]ci.Stats{}
	row := make([]ci.Stats, nv)
	for id, k := range t.cells.keys {
		if !keep[id] {
			continue
		}
		switch first[k.stack] {
		case 0:
			first[k.stack] = int32(id) + 1
			continue
		case -1:
		default:
			acc := make([]ci.Stats, nv)
			mergeAll(acc, t.stats.row(uint32(first[k.stack]-1), row))
			multi[k.stack] = acc
			first[k.stack] = -1
		}
		mergeAll(multi[k.stack], t.stats.row(uint32(id), row))
	}
	statsOf := func(s uint32) []ci.Stats {
		if c := first[s]; c > 0 {
			return t.stats.row(uint32(c-1), row)
		}
		return multi[s]
	}
	order := make([]uint32, 0, len(first))
	est := make([]float64, len(first))
	for s, c := range first {
		if c == 0 {
			continue
		}
		st := statsOf(uint32(s))
		any := false
		for i := range st {
			any = any || st[i].N > 0
		}
		if any {
			order = append(order, uint32(s))
			est[s] = st[main].Estimate
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return est[order[i]] > est[order[j]] })
	for _, s := range order {
		if err := fn(t.stacks.stack(s), statsOf(s)); err != nil {
			return err
		}
	}
	return nil
}

// FuncName is a function id's name (EachStack's stacks): its symbol, or
// 0x… for a frame address nothing named.
func (t *Table) FuncName(id uint32) string { return t.funcName(id) }

// IsAddress reports whether function id is a frame address nothing named
// (FuncName gives it as 0x…), and which.
func (t *Table) IsAddress(id uint32) (uint64, bool) {
	a, ok := t.funcAddr[id]
	return a, ok
}

// NumFuncs is the number of function ids.
func (t *Table) NumFuncs() int { return len(t.funcs.names) }
