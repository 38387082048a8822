package aggregate

import (
	"regexp"
	"sort"
	"strings"

	"github.com/heapest/heapest/ci"
)

// Filter selects cells by their frames' names and their type (pprof's
// -focus and -ignore): a cell is dropped when a frame or its type matches
// Ignore, and kept only when one matches Focus (when set).
type Filter struct {
	Focus, Ignore *regexp.Regexp
}

// Group is one row's statistics.
type Group struct {
	Key string
	// Stack is the whole stack, leaf first, for ByStack.
	Stack []string
	// Flat are the statistics of the group itself for the main value
	// (see Table.Groups); Cum, for ByFunc, those of every stack the
	// function appears in.
	Flat, Cum ci.Stats
	// Values are the flat statistics of every value of the table, in
	// Table.Values order.
	Values []ci.Stats
	// stamp is the last cell whose cum this group took, so that a
	// recursive stack counts once per function.
	stamp int
}

// Groups groups the table's cells that pass f and have something for value
// index main by b, and returns the groups, sorted by flat estimate (then
// cum, then key) of that value, largest first, and the statistics of every
// cell that passed, per value. Flat and Cum are those of value index main.
// With main < 0, cells with something for any value are grouped, Flat and
// Cum stay empty, and the order is by key.
func (t *Table) Groups(b By, f Filter, main int) (groups []*Group, total []ci.Stats) {
	g := grouper{t: t, by: b, main: main, keep: t.filterCells(f), byKey: map[string]*Group{}}
	total = make([]ci.Stats, len(t.values))
	nv := len(t.values)
	for id, k := range t.cells.keys {
		if !g.keep[id] {
			continue
		}
		st := t.stats[id*nv : (id+1)*nv]
		for i := range total {
			total[i].Merge(&st[i])
		}
		if main >= 0 && st[main].N == 0 {
			continue // nothing for this value: no row, as if never read
		}
		g.add(id+1, k, st)
	}
	groups = make([]*Group, 0, len(g.byKey))
	for _, gr := range g.byKey {
		if main >= 0 {
			gr.Flat = gr.Values[main]
		}
		groups = append(groups, gr)
	}
	sortGroups(groups)
	return groups, total
}

// SortBy orders groups by the flat estimate of value index vi, largest
// first, then by key.
func SortBy(groups []*Group, vi int) {
	sort.Slice(groups, func(i, j int) bool {
		x, y := groups[i], groups[j]
		if x.Values[vi].Estimate != y.Values[vi].Estimate {
			return x.Values[vi].Estimate > y.Values[vi].Estimate
		}
		return x.Key < y.Key
	})
}

func sortGroups(groups []*Group) {
	sort.Slice(groups, func(i, j int) bool {
		x, y := groups[i], groups[j]
		if x.Flat.Estimate != y.Flat.Estimate {
			return x.Flat.Estimate > y.Flat.Estimate
		}
		if x.Cum.Estimate != y.Cum.Estimate {
			return x.Cum.Estimate > y.Cum.Estimate
		}
		return x.Key < y.Key
	})
}

type grouper struct {
	t     *Table
	by    By
	main  int
	keep  []bool
	byKey map[string]*Group
	// byFunc and byStack find groups by table id without building keys.
	byFunc  []*Group
	byStack []*Group
}

func (g *grouper) add(stamp int, k cellKey, st []ci.Stats) {
	t := g.t
	switch g.by {
	case ByFunc:
		ids := t.stacks.stack(k.stack)
		if len(ids) == 0 {
			gr := g.named("(no stack)")
			mergeAll(gr.Values, st)
			if g.main >= 0 {
				gr.Cum.Merge(&st[g.main])
			}
			return
		}
		mergeAll(g.funcGroup(ids[0]).Values, st)
		for _, f := range ids {
			gr := g.funcGroup(f)
			if gr.stamp == stamp {
				continue // recursion: count a stack once per function
			}
			gr.stamp = stamp
			if g.main >= 0 {
				gr.Cum.Merge(&st[g.main])
			}
		}
	case ByStack:
		mergeAll(g.stackGroup(k.stack).Values, st)
	case ByLeaf:
		ids := t.stacks.stack(k.stack)
		if len(ids) == 0 {
			mergeAll(g.named("(no stack)").Values, st)
			return
		}
		mergeAll(g.funcGroup(ids[0]).Values, st)
	case ByThread:
		mergeAll(g.named(orNone(t.strs.names[k.thread], "(no thread)")).Values, st)
	case BySize:
		mergeAll(g.named(sizeKey(k.size)).Values, st)
	case ByType:
		mergeAll(g.named(orNone(t.strs.names[k.typ], "(no type)")).Values, st)
	}
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func mergeAll(dst, src []ci.Stats) {
	for i := range dst {
		dst[i].Merge(&src[i])
	}
}

// named returns the group of key.
func (g *grouper) named(key string) *Group {
	gr := g.byKey[key]
	if gr == nil {
		gr = &Group{Key: key, Values: make([]ci.Stats, len(g.t.values))}
		g.byKey[key] = gr
	}
	return gr
}

func (g *grouper) funcGroup(f uint32) *Group {
	if g.byFunc == nil {
		g.byFunc = make([]*Group, len(g.t.funcs.names))
	}
	if gr := g.byFunc[f]; gr != nil {
		return gr
	}
	gr := g.named(g.t.funcs.names[f])
	g.byFunc[f] = gr
	return gr
}

func (g *grouper) stackGroup(s uint32) *Group {
	if g.byStack == nil {
		g.byStack = make([]*Group, g.t.stacks.len())
	}
	if gr := g.byStack[s]; gr != nil {
		return gr
	}
	names := g.t.stackNames(s)
	gr := g.named(stackKey(names))
	gr.Stack = names
	g.byStack[s] = gr
	return gr
}

// stackKey is the folded form: root first, frames joined by ";".
func stackKey(leafFirst []string) string {
	if len(leafFirst) == 0 {
		return "(no stack)"
	}
	var b strings.Builder
	for i := len(leafFirst) - 1; i >= 0; i-- {
		b.WriteString(leafFirst[i])
		if i > 0 {
			b.WriteByte(';')
		}
	}
	return b.String()
}

// filterCells decides, per cell, whether it passes f. Names are matched
// once each: per function, per type.
func (t *Table) filterCells(f Filter) []bool {
	keep := make([]bool, len(t.cells.keys))
	if f.Focus == nil && f.Ignore == nil {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	fm := newMatcher(f, t.funcs.names)
	tm := newMatcher(f, t.strs.names)
	for id, k := range t.cells.keys {
		ignored, focused := false, f.Focus == nil
		for _, fn := range t.stacks.stack(k.stack) {
			m := fm.match(fn)
			ignored = ignored || m&matchIgnore != 0
			focused = focused || m&matchFocus != 0
		}
		if k.typ != 0 {
			m := tm.match(k.typ)
			ignored = ignored || m&matchIgnore != 0
			focused = focused || m&matchFocus != 0
		}
		keep[id] = !ignored && focused
	}
	return keep
}

const (
	matchDone   = 1
	matchFocus  = 2
	matchIgnore = 4
)

// matcher caches the verdict of the filter's expressions on each name.
type matcher struct {
	f     Filter
	names []string
	memo  []uint8
}

func newMatcher(f Filter, names []string) *matcher {
	return &matcher{f: f, names: names, memo: make([]uint8, len(names))}
}

func (m *matcher) match(id uint32) uint8 {
	if v := m.memo[id]; v != 0 {
		return v
	}
	v := uint8(matchDone)
	name := m.names[id]
	if m.f.Focus != nil && m.f.Focus.MatchString(name) {
		v |= matchFocus
	}
	if m.f.Ignore != nil && m.f.Ignore.MatchString(name) {
		v |= matchIgnore
	}
	m.memo[id] = v
	return v
}
