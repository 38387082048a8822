package aggregate

import "github.com/heapest/heapest/ci"

// SizeMix returns, for the groups of b whose keys are in keys, the
// statistics of value index vi per allocation size: the cells that pass f,
// summed per (group, size). Size 0 holds the cells whose samples mix sizes
// (or whose sizes were not kept: Keys.Size). A ByFunc group is its flat
// part, by leaf function, as its row's estimate is. BySource is not a
// table grouping and gives nothing.
//
// It is what heapest advise reads: a row's estimate split by size says how
// many samples each part would get at another sampling rate.
func (t *Table) SizeMix(b By, f Filter, vi int, keys map[string]bool) map[string]map[float64]ci.Stats {
	keep := t.filterCells(f)
	out := map[string]map[float64]ci.Stats{}
	for id, k := range t.cells.keys {
		if !keep[id] {
			continue
		}
		st := t.stats.get(uint32(id), vi)
		if st.N == 0 {
			continue
		}
		key, ok := t.groupKey(b, k)
		if !ok || !keys[key] {
			continue
		}
		if out[key] == nil {
			out[key] = map[float64]ci.Stats{}
		}
		acc := out[key][k.size]
		acc.Merge(&st)
		out[key][k.size] = acc
	}
	return out
}

// groupKey is the key of the group of b a cell belongs to (its flat
// group, for ByFunc), as Groups names it.
func (t *Table) groupKey(b By, k cellKey) (string, bool) {
	switch b {
	case ByFunc, ByLeaf:
		leaf, ok := t.stacks.leaf(k.stack)
		if !ok {
			return "(no stack)", true
		}
		return t.funcName(leaf), true
	case ByStack:
		return StackKey(t.stackNames(k.stack)), true
	case ByThread:
		return orNone(t.strs.names[k.thread], NoThread), true
	case BySize:
		return sizeKey(k.size), true
	case ByType:
		return orNone(t.strs.names[k.typ], NoType), true
	}
	return "", false
}
