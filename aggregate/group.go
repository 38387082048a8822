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
	// Key names the group; for ByStack it is filled by Groups only for
	// the groups it orders (see Groups' top).
	Key string
	// Stack is the whole stack, leaf first, for ByStack (filled with Key).
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
	// stack is the table stack of a ByStack group, whose Key is built
	// only when needed.
	stack uint32
}

// Groups groups the table's cells that pass f and have something for value
// index main by b, and returns the groups, sorted by flat estimate (then
// cum, then key) of that value, largest first, and the statistics of every
// cell that passed, per value. Flat and Cum are those of value index main.
// With main < 0, cells with something for any value are grouped, Flat and
// Cum stay empty, and the order is by key.
//
// With top > 0 only the first top groups are put in order and named: a
// --by stack report of a million stacks builds twenty keys, not a million.
// The others follow them, unordered and with no Key.
func (t *Table) Groups(b By, f Filter, main, top int) (groups []*Group, total []ci.Stats) {
	g := grouper{t: t, by: b, main: main, keep: t.filterCells(f), byKey: map[string]int32{}}
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
	groups = make([]*Group, len(g.slab))
	for i := range g.slab {
		gr := &g.slab[i]
		gr.Values = g.values[i*nv : (i+1)*nv : (i+1)*nv]
		if main >= 0 {
			gr.Flat = gr.Values[main]
		}
		groups[i] = gr
	}
	order(groups, func(gr *Group) float64 { return gr.Flat.Estimate }, func(gr *Group) float64 { return gr.Cum.Estimate }, top, t.name)
	return groups, total
}

// name fills a ByStack group's Key and Stack.
func (t *Table) name(gr *Group) {
	if gr.Key == "" {
		gr.Stack = t.stackNames(gr.stack)
		gr.Key = stackKey(gr.Stack)
	}
}

// SortBy orders groups by the flat estimate of value index vi, largest
// first, then by key; with top > 0, only the first top (see Groups).
func (t *Table) SortBy(groups []*Group, vi, top int) {
	order(groups, func(gr *Group) float64 { return gr.Values[vi].Estimate }, func(*Group) float64 { return 0 }, top, t.name)
}

// order sorts groups by first then second, largest first, and then by key;
// keys are built (by name) only for the groups whose place among the first
// top depends on them.
func order(groups []*Group, first, second func(*Group) float64, top int, name func(*Group)) {
	sort.Slice(groups, func(i, j int) bool {
		x, y := groups[i], groups[j]
		if a, b := first(x), first(y); a != b {
			return a > b
		}
		return second(x) > second(y)
	})
	if top <= 0 || top > len(groups) {
		top = len(groups)
	}
	for i := 0; i < top; {
		j := i + 1
		for j < len(groups) && first(groups[j]) == first(groups[i]) && second(groups[j]) == second(groups[i]) {
			j++
		}
		run := groups[i:j]
		for _, gr := range run {
			name(gr)
		}
		if len(run) > 1 {
			sort.Slice(run, func(a, b int) bool { return run[a].Key < run[b].Key })
		}
		i = j
	}
}

type grouper struct {
	t     *Table
	by    By
	main  int
	keep  []bool
	byKey map[string]int32
	// slab holds the groups and values their statistics (one per value
	// each): no allocation per group.
	slab   []Group
	values []ci.Stats
	// byFunc and byStack find groups by table id without building keys
	// (index+1; 0: none yet).
	byFunc  []int32
	byStack []int32
}

func (g *grouper) add(stamp int, k cellKey, st []ci.Stats) {
	t := g.t
	switch g.by {
	case ByFunc:
		ids := t.stacks.stack(k.stack)
		if len(ids) == 0 {
			gr := g.named("(no stack)")
			g.merge(gr, st)
			g.cum(gr, st)
			return
		}
		g.merge(g.funcGroup(ids[0]), st)
		for _, f := range ids {
			gr := g.funcGroup(f)
			if g.slab[gr].stamp == stamp {
				continue // recursion: count a stack once per function
			}
			g.slab[gr].stamp = stamp
			g.cum(gr, st)
		}
	case ByStack:
		g.merge(g.stackGroup(k.stack), st)
	case ByLeaf:
		ids := t.stacks.stack(k.stack)
		if len(ids) == 0 {
			g.merge(g.named("(no stack)"), st)
			return
		}
		g.merge(g.funcGroup(ids[0]), st)
	case ByThread:
		g.merge(g.named(orNone(t.strs.names[k.thread], "(no thread)")), st)
	case BySize:
		g.merge(g.named(sizeKey(k.size)), st)
	case ByType:
		g.merge(g.named(orNone(t.strs.names[k.typ], "(no type)")), st)
	}
}

// merge adds a cell's statistics (per value) to group gr.
func (g *grouper) merge(gr int32, st []ci.Stats) {
	nv := len(st)
	mergeAll(g.values[int(gr)*nv:int(gr+1)*nv], st)
}

// cum adds a cell's main value to group gr's cum.
func (g *grouper) cum(gr int32, st []ci.Stats) {
	if g.main >= 0 {
		g.slab[gr].Cum.Merge(&st[g.main])
	}
}

// newGroup adds a group.
func (g *grouper) newGroup(key string) int32 {
	g.slab = append(room(g.slab, 1), Group{Key: key})
	nv := len(g.t.values)
	g.values = room(g.values, nv)[:len(g.values)+nv]
	return int32(len(g.slab) - 1)
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
func (g *grouper) named(key string) int32 {
	if gr, ok := g.byKey[key]; ok {
		return gr
	}
	gr := g.newGroup(key)
	g.byKey[key] = gr
	return gr
}

func (g *grouper) funcGroup(f uint32) int32 {
	if g.byFunc == nil {
		g.byFunc = make([]int32, len(g.t.funcs.names))
	}
	if gr := g.byFunc[f]; gr != 0 {
		return gr - 1
	}
	gr := g.named(g.t.funcs.names[f])
	g.byFunc[f] = gr + 1
	return gr
}

// stackGroup is the group of table stack s. Table stacks are distinct
// sequences of names, so no two share a key: the key is built later, and
// only if needed.
func (g *grouper) stackGroup(s uint32) int32 {
	if g.byStack == nil {
		g.byStack = make([]int32, g.t.stacks.len())
	}
	if gr := g.byStack[s]; gr != 0 {
		return gr - 1
	}
	gr := g.newGroup("")
	g.slab[gr].stack = s
	g.byStack[s] = gr + 1
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
