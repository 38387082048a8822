package aggregate

import (
	"hash/maphash"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/grow"
	"github.com/heapest/heapest/parse"
)

// Filter selects cells by their frames' names and their type (pprof's
// -focus and -ignore): a cell is dropped when a frame or its type matches
// Ignore, and kept only when one matches Focus (when set) and, when set,
// one of its frames matches Within (a budget's functions, within what
// the user's filter keeps).
type Filter struct {
	Focus, Ignore *regexp.Regexp
	Within        *regexp.Regexp
}

// NoThread and NoType are the keys of the samples that have no thread or
// no type, by ByThread and ByType; MixedSize, by BySize, of those that
// have no one size (a dump line of several sizes, a JFR weight).
const (
	NoThread  = "(no thread)"
	NoType    = "(no type)"
	MixedSize = "mixed"
)

// Group is one row's statistics.
type Group struct {
	Key string
	// Stack is the whole stack, leaf first, for ByStack.
	Stack []string
	// Flat are the statistics of the group itself for the main value
	// (see Table.Groups); Cum, for ByFunc, those of every stack the
	// function appears in.
	Flat, Cum ci.Stats
	// Values are, when Groups was asked for no main value, the flat
	// statistics of every value of the table, in Table.Values order.
	Values []ci.Stats
}

// Groups groups the table's cells that pass f and have something for value
// index main by b, and returns the groups, sorted by flat estimate (then
// cum, then key) of that value, largest first, and the statistics of every
// cell that passed, per value. Flat and Cum are those of value index main.
// With main < 0, cells with something for any value are grouped, Flat and
// Cum stay empty, and the order is by key.
//
// With top > 0 only the first top groups are returned, and cut says how
// many more there are. Groups are kept compact until then (a key, the
// statistics) and a --by stack key is built only for the groups whose
// place among the first top depends on it: a report of a million stacks
// builds twenty keys, not a million.
func (t *Table) Groups(b By, f Filter, main, top int) (groups []*Group, cut int, total []ci.Stats) {
	return t.groups(b, f, main, top, false)
}

// GroupsKeyless is Groups whose --by stack groups have their Stack but no
// Key (but for the empty stack's): for a caller that pairs and cuts them
// first (CompareStackKeys and HashStackKey read a stack as its key) and
// makes the keys of those it keeps (StackKey). A dump's stack key is
// kilobytes, most of the memory of a row. Other groupings are as Groups.
func (t *Table) GroupsKeyless(b By, f Filter, main, top int) (groups []*Group, cut int, total []ci.Stats) {
	return t.groups(b, f, main, top, b == ByStack)
}

func (t *Table) groups(b By, f Filter, main, top int, keyless bool) (groups []*Group, cut int, total []ci.Stats) {
	g := newGrouper(t, b, main, t.filterCells(f), top)
	g.all = f == Filter{}
	g.keyless = keyless
	total = make([]ci.Stats, len(t.values))
	g.eachCell(func(id int, k cellKey, st []ci.Stats) {
		for i := range total {
			total[i].Merge(&st[i])
		}
		if main < 0 || st[main].N > 0 { // else no row, as if never read
			g.add(int32(id+1), k, st)
		}
	})
	idx, n := g.order(top)
	if top > 0 && top < n {
		cut = n - top
		idx = idx[:top]
	}
	if g.lazyCum {
		g.topCums(idx)
	}
	groups = make([]*Group, len(idx))
	for i, gi := range idx {
		groups[i] = g.group(gi)
	}
	return groups, cut, total
}

// newGrouper sizes a grouper's slabs once, for the most groups b can
// make: growing them by doubling copied most of the work on inputs with
// many groups.
func newGrouper(t *Table, b By, main int, keep []bool, top int) grouper {
	g := grouper{t: t, by: b, main: main, nv: 1, keep: keep, byKey: map[string]int32{}}
	if main < 0 {
		g.nv = len(t.values)
	}
	// Cells of a bare stack each (no type, thread or size) are the
	// groups of --by stack already: the grouper points at them instead of
	// copying their statistics.
	g.direct = b == ByStack && main >= 0 && len(t.cells.other.keys) == 0
	bound := 64
	switch b {
	case ByFunc, ByLeaf:
		bound = len(t.funcs.names) + 1
	case ByStack:
		bound = t.stacks.len()
		g.stacks = make([]uint32, 0, bound)
	}
	if b == ByFunc || b == ByLeaf {
		g.funcs = make([]uint32, 0, bound)
	}
	if g.direct {
		g.cells = make([]uint32, 0, bound)
		return g
	}
	if b == ByFunc && main >= 0 {
		// Most functions are no stack's leaf: flat statistics are made
		// for those that are.
		g.flatAt = make([]int32, 0, bound)
		g.values = make([]ci.Stats, 0, min(bound, len(t.cells.keys)))
	} else {
		g.values = make([]ci.Stats, 0, bound*g.nv)
	}
	if b == ByFunc {
		g.lazyCum = main >= 0 && top > 0 && top*4 < bound
		if !g.lazyCum {
			g.cums = make([]ci.Stats, 0, bound)
		}
	}
	return g
}

// eachCell calls f with every cell the grouper keeps, its statistics per
// value in a buffer reused from call to call, which f must not change. A
// cell without statistics (most of a Go heap profile's have nothing in
// use) is given one shared empty row, not a fresh copy of it.
func (g *grouper) eachCell(f func(id int, k cellKey, st []ci.Stats)) {
	row := make([]ci.Stats, len(g.t.values))
	empty := make([]ci.Stats, len(g.t.values))
	keys := g.t.cells.keys
	for start := 0; start < len(keys); start += cellBatch {
		end := min(start+cellBatch, len(keys))
		// The cells' statistics lie all over memory (most are the pool's,
		// shared): they are read for the whole batch first, so that their
		// cache misses overlap, before each is merged.
		g.t.stats.touch(start, end, g.keep)
		for id := start; id < end; id++ {
			if !g.keep[id] {
				continue
			}
			// The row is read once and then checked (asking the statistics
			// whether the cell has some first looked each value up twice).
			if st := g.t.stats.row(uint32(id), row); someStats(st) {
				f(id, keys[id], st)
			} else {
				f(id, keys[id], empty)
			}
		}
	}
}

// cellBatch is how many cells eachCell reads ahead.
const cellBatch = 64

// someStats reports whether a row has something for some value.
func someStats(st []ci.Stats) bool {
	for i := range st {
		if st[i].N > 0 {
			return true
		}
	}
	return false
}

// topCums computes the cum statistics of groups idx, whose cum estimates
// alone were summed so far (lazyCum): a second pass over the cells that
// merges statistics for these groups only, in the same order as the
// first pass added their estimates.
func (g *grouper) topCums(idx []int32) {
	g.cumAt = make([]int32, g.n)
	for i, gi := range idx {
		g.cumAt[gi] = int32(i + 1)
	}
	g.cums = make([]ci.Stats, len(idx))
	// The functions of the groups idx, as bits: a frame of another
	// function is passed over without reading its slot, a cache miss on
	// a dump of hundreds of thousands of functions.
	top := make([]uint64, (len(g.byFunc)+63)/64)
	for _, gi := range idx {
		if f := g.funcs[gi]; f != noFunc {
			top[f/64] |= 1 << (f % 64)
			g.byFunc[f].stamp = 0
		}
	}
	g.eachCell(func(id int, k cellKey, st []ci.Stats) {
		if st[g.main].N == 0 {
			return
		}
		sp := g.t.stacks.spans[k.stack]
		if sp.len() == 0 {
			g.cum(g.byKey[noStack], st)
			return
		}
		if short, long := g.t.stacks.frames.view(sp, &g.buf); long == nil {
			topCum(g, short, top, int32(id+1), st)
		} else {
			topCum(g, long, top, int32(id+1), st)
		}
	})
}

// topCum merges the statistics st of cell stamp-1, whose stack is ids,
// into the cum of the groups of functions in top it has.
func topCum[T word](g *grouper, ids []T, top []uint64, stamp int32, st []ci.Stats) {
	for _, f := range ids {
		if top[f/64]&(1<<(f%64)) == 0 {
			continue
		}
		fs := &g.byFunc[f]
		if gr := fs.group - 1; g.cumAt[gr] != 0 && fs.stamp != stamp {
			fs.stamp = stamp
			g.cums[g.cumAt[gr]-1].Merge(&st[g.main])
		}
	}
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

// grouper builds the groups of one Groups call, compactly: per group its
// statistics in one slab, and for ByFunc its cum and recursion stamp; a
// key only for the groups order shows (and those made by key).
type grouper struct {
	t     *Table
	by    By
	main  int
	nv    int
	keep  []bool
	all   bool     // no filter: every cell is kept
	buf   []uint32 // the stack read last
	byKey map[string]int32

	// n is the number of groups. Their keys are made by order, for the
	// groups it shows: until then a group made by key (named) has its
	// key in byKey, and the others have none yet (a function's or a
	// stack's is made from its id).
	n      int32
	keys   []string
	stacks []uint32 // ByStack: each group's table stack
	// keyless: ByStack groups get no key but their stack's names, made
	// once (names), which order ties as their keys would (GroupsKeyless).
	keyless bool
	names   [][]string
	values  []ci.Stats // nv per group
	cums    []ci.Stats // ByFunc: per group, or per cumAt slot
	// lazyCum: ByFunc with a main value and a top much smaller than the
	// number of functions sums only each group's cum estimate (a
	// function's in its funcSlot, the no-stack group's in cumEst),
	// which orders them, and makes the cum statistics of the first top
	// alone (topCums; cumAt: group -> index in cums+1): the others'
	// would be made for nothing, a merge per frame of every stack.
	lazyCum bool
	cumEst  map[int32]float64
	cumAt   []int32
	// flatAt: ByFunc with a main value keeps flat statistics only for
	// the groups that have some (index in values+1; 0: none).
	flatAt []int32
	// direct: each group is one table cell (cells[i]), whose statistics
	// are read in place (see newGrouper).
	direct bool
	cells  []uint32
	// funcs holds, for ByFunc and ByLeaf, each group's function id
	// (noFunc: a group of no function): the key of an unnamed function
	// is made only when shown (see name).
	funcs []uint32
	// byFunc and byStack find groups by table id without building keys
	// (index+1; 0: none yet).
	byFunc  []funcSlot
	byStack []int32
}

func (g *grouper) estimate(i int32) float64 {
	switch {
	case g.main < 0:
		return 0
	case g.direct:
		return g.t.stats.get(g.cells[i], g.main).Estimate
	}
	return g.flat(i).Estimate
}

// flat returns group i's flat statistics of the main value.
func (g *grouper) flat(i int32) *ci.Stats {
	if g.flatAt == nil {
		return &g.values[i]
	}
	if at := g.flatAt[i]; at != 0 {
		return &g.values[at-1]
	}
	return &noFlat
}

// noFlat is the flat statistics of a group that has none: read only
// (merge makes a group its own before adding to them).
var noFlat ci.Stats

func (g *grouper) cumEstimate(i int32) float64 {
	switch {
	case g.lazyCum && g.funcs[i] != noFunc:
		return g.byFunc[g.funcs[i]].cum
	case g.lazyCum:
		return g.cumEst[i]
	case g.cums == nil:
		return 0
	}
	return g.cums[i].Estimate
}

// order returns the group indexes sorted by estimate, then cum, largest
// first, then key, and the number of groups n; keys are built only where
// the first top need them. With 0 < top < n/4, only the first top groups
// and those tied with the top-th are returned, the first top in order:
// they are picked before anything is sorted (pickTop), so a report of a
// million functions sorts a few hundred.
func (g *grouper) order(top int) ([]int32, int) {
	n := int(g.n)
	g.keys = make([]string, n)
	for k, gr := range g.byKey {
		g.keys[gr] = k
	}
	if top <= 0 || top > n {
		top = n
	}
	var r []ranked
	if top < n/4 {
		r = g.pickTop(top)
	} else {
		r = make([]ranked, n)
		for i := range r {
			r[i] = g.rank(int32(i))
		}
	}
	sort.Slice(r, func(a, b int) bool { return r[a].better(r[b]) })
	head := make([]int32, len(r))
	for i := range r {
		head[i] = r[i].i
	}
	// Ties are ordered by key; sorting a run of them by key moves groups
	// only within the run, whose estimates are all the same.
	for i := 0; i < top; {
		j := i + 1
		for j < len(r) && !r[i].better(r[j]) {
			j++
		}
		run := head[i:j]
		for _, gi := range run {
			g.name(gi)
		}
		if len(run) > 1 && g.keyless {
			sort.Slice(run, func(a, b int) bool {
				x, y := run[a], run[b]
				return CompareStackKeys(g.keys[x], g.stackOf(x), g.keys[y], g.stackOf(y)) < 0
			})
		} else if len(run) > 1 {
			sort.Slice(run, func(a, b int) bool { return g.keys[run[a]] < g.keys[run[b]] })
		}
		i = j
	}
	return head, n
}

// ranked is a group with the estimates that order it.
type ranked struct {
	est, cum float64
	i        int32
}

// rank returns group i with its estimates.
func (g *grouper) rank(i int32) ranked { return ranked{g.estimate(i), g.cumEstimate(i), i} }

// better reports whether a comes before b (estimate, then cum).
func (a ranked) better(b ranked) bool {
	if a.est != b.est {
		return a.est > b.est
	}
	return a.cum > b.cum
}

// pickTop returns every group that is not after the top-th (ties with it
// included), in no order. It reads each group's estimates twice, in two
// passes (the first keeps the best top in a small heap, to find the
// top-th; the second takes the groups not after it), instead of writing
// them for every group: on a dump of hundreds of thousands of functions
// those arrays were megabytes of fresh pages.
func (g *grouper) pickTop(top int) []ranked {
	n := int(g.n)
	// h is a heap of the best top seen, its worst at h[0].
	h := make([]ranked, 0, top)
	worse := func(a, b int) bool { return h[b].better(h[a]) }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && worse(c+1, c) {
				c++
			}
			if !worse(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := range int32(n) {
		r := g.rank(i)
		switch {
		case len(h) < top:
			h = append(h, r)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !worse(j, p) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
		case r.better(h[0]):
			h[0] = r
			down(0)
		}
	}
	cut := h[0]
	var picked []ranked
	for i := range int32(n) {
		if r := g.rank(i); !cut.better(r) { // at least as good as the top-th
			picked = append(picked, r)
		}
	}
	return picked
}

// name builds the key of a group whose key waits: a ByStack group's, or an
// unnamed frame address's.
func (g *grouper) name(i int32) {
	switch {
	case g.keys[i] != "":
	case g.stacks != nil && g.keyless:
		if len(g.stackOf(i)) == 0 {
			g.keys[i] = noStackKey
		}
	case g.stacks != nil:
		g.keys[i] = StackKey(g.t.stackNames(g.stacks[i]))
	case g.funcs != nil && g.funcs[i] != noFunc:
		g.keys[i] = g.t.funcName(g.funcs[i])
	}
}

// group materialises group i.
func (g *grouper) group(i int32) *Group {
	gr := &Group{Key: g.keys[i]}
	switch {
	case g.stacks != nil && g.keyless:
		gr.Stack = g.stackOf(i)
	case g.stacks != nil:
		gr.Stack = g.t.stackNames(g.stacks[i])
	}
	switch {
	case g.direct:
		gr.Flat = g.t.stats.get(g.cells[i], g.main)
	case g.main >= 0:
		gr.Flat = *g.flat(i)
	default:
		gr.Values = g.values[int(i)*g.nv : int(i+1)*g.nv : int(i+1)*g.nv]
	}
	switch {
	case g.cumAt != nil:
		gr.Cum = g.cums[g.cumAt[i]-1]
	case g.cums != nil:
		gr.Cum = g.cums[i]
	}
	return gr
}

func (g *grouper) add(stamp int32, k cellKey, st []ci.Stats) {
	t := g.t
	switch g.by {
	case ByFunc:
		sp := t.stacks.spans[k.stack]
		if sp.len() == 0 {
			gr := g.named(noStack)
			g.merge(gr, st)
			g.cum(gr, st)
			return
		}
		if short, long := t.stacks.frames.view(sp, &g.buf); long == nil {
			addFuncs(g, short, stamp, st)
		} else {
			addFuncs(g, long, stamp, st)
		}
	case ByStack:
		if g.direct {
			g.n++
			g.stacks = append(g.stacks, k.stack)
			g.cells = append(g.cells, uint32(stamp-1))
			return
		}
		g.merge(g.stackGroup(k.stack), st)
	case ByLeaf:
		leaf, ok := t.stacks.leaf(k.stack)
		if !ok {
			g.merge(g.named(noStack), st)
			return
		}
		g.merge(g.funcGroup(leaf), st)
	case ByThread:
		g.merge(g.named(orNone(t.strs.names[k.thread], NoThread)), st)
	case BySize:
		g.merge(g.named(sizeKey(k.size)), st)
	case ByType:
		g.merge(g.named(orNone(t.strs.names[k.typ], NoType)), st)
	}
}

// addFuncs adds a cell of statistics st and stack ids (not empty) to the
// flat group of its leaf's function and the cum of each of its functions.
func addFuncs[T word](g *grouper, ids []T, stamp int32, st []ci.Stats) {
	g.merge(g.funcGroup(uint32(ids[0])), st)
	for _, f := range ids {
		fs := g.funcSlot(uint32(f))
		if fs.stamp == stamp {
			continue // recursion: count a stack once per function
		}
		fs.stamp = stamp
		if g.lazyCum {
			fs.cum += st[g.main].Estimate
		} else {
			g.cum(fs.group-1, st)
		}
	}
}

// merge adds a cell's statistics (per value) to group gr.
func (g *grouper) merge(gr int32, st []ci.Stats) {
	if g.flatAt != nil && g.flatAt[gr] == 0 {
		g.values = append(grow.Room(g.values, 1), ci.Stats{})
		g.flatAt[gr] = int32(len(g.values))
	}
	if g.main >= 0 {
		g.flat(gr).Merge(&st[g.main]) // one value kept: the main one
		return
	}
	mergeAll(g.values[int(gr)*g.nv:int(gr+1)*g.nv], st)
}

// cum adds a cell's main value to group gr's cum.
func (g *grouper) cum(gr int32, st []ci.Stats) {
	switch {
	case g.main < 0:
	case g.cumAt != nil:
		if at := g.cumAt[gr]; at != 0 {
			g.cums[at-1].Merge(&st[g.main])
		}
	case g.lazyCum:
		if g.cumEst == nil {
			g.cumEst = map[int32]float64{}
		}
		g.cumEst[gr] += st[g.main].Estimate
	default:
		g.cums[gr].Merge(&st[g.main])
	}
}

// newGroup adds a group.
func (g *grouper) newGroup() int32 {
	g.n++
	if g.flatAt != nil {
		g.flatAt = append(grow.Room(g.flatAt, 1), 0)
	} else {
		g.values = grow.Room(g.values, g.nv)[:len(g.values)+g.nv]
	}
	if g.by == ByFunc && !g.lazyCum {
		g.cums = append(grow.Room(g.cums, 1), ci.Stats{})
	}
	if g.by == ByFunc || g.by == ByLeaf {
		g.funcs = append(grow.Room(g.funcs, 1), noFunc)
	}
	return g.n - 1
}

// noStack is the key of the group of records without a stack.
const noStack = "(no stack)"

// noFunc marks a group of no function.
const noFunc = ^uint32(0)

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
	gr := g.newGroup()
	g.byKey[key] = gr
	return gr
}

// funcSlot is what the grouper keeps per function: its group (index+1;
// 0: none yet) and, for ByFunc, the last cell whose cum the group took
// and the cum estimate (lazyCum). They share a slot because every frame
// of every stack reads all three: one cache miss a frame, not three, on
// a dump of hundreds of thousands of functions.
type funcSlot struct {
	group, stamp int32
	cum          float64
}

// funcSlot returns function f's slot, its group made when new.
func (g *grouper) funcSlot(f uint32) *funcSlot {
	if g.byFunc == nil {
		g.byFunc = make([]funcSlot, len(g.t.funcs.names))
		if g.all {
			prefault(g.byFunc) // read before written, nearly every slot
		}
	}
	fs := &g.byFunc[f]
	if fs.group == 0 {
		// Function ids are distinct names, so a group per id needs no
		// lookup by key; an unnamed address's key is made only when
		// shown.
		gr := g.newGroup()
		g.funcs[gr] = f
		fs.group = gr + 1
	}
	return fs
}

// funcGroup returns function f's group, made when new.
func (g *grouper) funcGroup(f uint32) int32 { return g.funcSlot(f).group - 1 }

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
	gr := g.newGroup()
	g.stacks = append(g.stacks, s)
	g.byStack[s] = gr + 1
	return gr
}

// StackKey is the key of a --by stack row: its frames root first, joined
// by ";" (as flame graph tools write stacks).
func StackKey(leafFirst []string) string {
	if len(leafFirst) == 0 {
		return noStackKey
	}
	return string(AppendStackKey(make([]byte, 0, stackKeyLen(leafFirst)), leafFirst))
}

// noStackKey is the key of an empty stack.
const noStackKey = "(no stack)"

// KeyOf is a row's key: key, or the key of its stack (leaf first) when it
// came without one (GroupsKeyless).
func KeyOf(key string, leafFirst []string) string {
	if key == "" && len(leafFirst) > 0 {
		return StackKey(leafFirst)
	}
	return key
}

// stackOf returns the names of group i's stack (keyless groups), made
// once.
func (g *grouper) stackOf(i int32) []string {
	if g.names == nil {
		g.names = make([][]string, g.n)
	}
	if g.names[i] == nil {
		g.names[i] = g.t.stackNames(g.stacks[i])
		if g.names[i] == nil {
			g.names[i] = []string{}
		}
	}
	return g.names[i]
}

// CompareStackKeys compares two keys as strings, each given as itself
// or, when empty, as the leaf-first stack whose StackKey it is: a pair
// of --by stack rows is ordered as their keys would be, without making
// them.
func CompareStackKeys(aKey string, aStack []string, bKey string, bStack []string) int {
	if aKey == "" && bKey == "" && len(aStack) > 0 && len(bStack) > 0 {
		// The frames both stacks share from the root, and the ';' after
		// each, are the same bytes in both keys: the keys differ from
		// the first frame they do not share on.
		i, j := len(aStack)-1, len(bStack)-1
		for i > 0 && j > 0 && aStack[i] == bStack[j] {
			i, j = i-1, j-1
		}
		aStack, bStack = aStack[:i+1], bStack[:j+1]
	}
	a, b := newKeyStream(aKey, aStack), newKeyStream(bKey, bStack)
	for {
		x, y := a.rest(), b.rest()
		switch {
		case x == "" && y == "":
			return 0
		case x == "":
			return -1
		case y == "":
			return 1
		}
		n := min(len(x), len(y))
		if c := strings.Compare(x[:n], y[:n]); c != 0 {
			return c
		}
		a.skip(n)
		b.skip(n)
	}
}

// HashStackKey feeds h the bytes of a key, given as CompareStackKeys
// takes it: equal keys hash alike however they were given.
func HashStackKey(h *maphash.Hash, key string, stack []string) {
	for s := newKeyStream(key, stack); ; {
		x := s.rest()
		if x == "" {
			return
		}
		h.WriteString(x)
		s.skip(len(x))
	}
}

// keyStream reads a key's bytes piece by piece: the key, or the frames
// of a stack root first with the ';' between them.
type keyStream struct {
	key   string
	stack []string
	piece int // of the stack's 2n-1: frame n-1, ";", frame n-2, …
	off   int // in the current piece
}

func newKeyStream(key string, stack []string) keyStream {
	if key == "" && len(stack) == 0 {
		key = noStackKey
	}
	if key != "" {
		stack = nil
	}
	return keyStream{key: key, stack: stack}
}

// rest is what is left of the current piece, "" at the end: empty
// pieces (frames with no name) are passed over.
func (s *keyStream) rest() string {
	if s.stack == nil {
		return s.key[s.off:]
	}
	for n := 2*len(s.stack) - 1; s.piece < n; s.piece, s.off = s.piece+1, 0 {
		p := ";"
		if s.piece%2 == 0 {
			p = s.stack[len(s.stack)-1-s.piece/2]
		}
		if s.off < len(p) {
			return p[s.off:]
		}
	}
	return ""
}

// skip passes over n bytes of the current piece.
func (s *keyStream) skip(n int) { s.off += n }

// AppendStackKey appends StackKey(leafFirst) to b.
func AppendStackKey(b []byte, leafFirst []string) []byte {
	if len(leafFirst) == 0 {
		return append(b, noStackKey...)
	}
	b = slices.Grow(b, stackKeyLen(leafFirst))
	for i := len(leafFirst) - 1; i >= 0; i-- {
		b = append(b, leafFirst[i]...)
		if i > 0 {
			b = append(b, ';')
		}
	}
	return b
}

// stackKeyLen is the length of a non-empty stack's key.
func stackKeyLen(leafFirst []string) int {
	n := len(leafFirst) - 1
	for _, f := range leafFirst {
		n += len(f)
	}
	return n
}

// filterCells decides, per cell, whether it passes f. Names are matched
// once each: per function, per type.
func (t *Table) filterCells(f Filter) []bool {
	keep := make([]bool, len(t.cells.keys))
	if f.Focus == nil && f.Ignore == nil && f.Within == nil {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	fm := newMatcher(f, t.funcName, len(t.funcs.names))
	tm := newMatcher(f, func(id uint32) string { return t.strs.names[id] }, len(t.strs.names))
	var buf []uint32
	for id, k := range t.cells.keys {
		ignored, focused, within := false, f.Focus == nil, f.Within == nil
		buf = t.stacks.stack(k.stack, buf)
		for _, fn := range buf {
			m := fm.match(fn)
			ignored = ignored || m&matchIgnore != 0
			focused = focused || m&matchFocus != 0
			within = within || m&matchWithin != 0
		}
		if k.typ != 0 {
			m := tm.match(k.typ)
			ignored = ignored || m&matchIgnore != 0
			focused = focused || m&matchFocus != 0
		}
		keep[id] = !ignored && focused && within
	}
	return keep
}

const (
	matchDone   = 1
	matchFocus  = 2
	matchIgnore = 4
	matchWithin = 8
)

// matchName reports whether re matches a frame's name or, for a name by
// source line (parse.LineName), its function or its file alone, as pprof
// matches a line's function name or file name: --focus '^main\.f$' keeps
// main.f's lines, --focus 'cache\.go$' the lines of a file.
func matchName(re *regexp.Regexp, name string) bool {
	if re.MatchString(name) {
		return true
	}
	fn, file, _, ok := parse.SplitLineName(name)
	return ok && (re.MatchString(fn) || re.MatchString(file))
}

// matcher caches the verdict of the filter's expressions on each name.
type matcher struct {
	f    Filter
	name func(uint32) string
	memo []uint8
}

func newMatcher(f Filter, name func(uint32) string, n int) *matcher {
	return &matcher{f: f, name: name, memo: make([]uint8, n)}
}

func (m *matcher) match(id uint32) uint8 {
	if v := m.memo[id]; v != 0 {
		return v
	}
	v := uint8(matchDone)
	name := m.name(id)
	if m.f.Focus != nil && matchName(m.f.Focus, name) {
		v |= matchFocus
	}
	if m.f.Ignore != nil && matchName(m.f.Ignore, name) {
		v |= matchIgnore
	}
	if m.f.Within != nil && matchName(m.f.Within, name) {
		v |= matchWithin
	}
	m.memo[id] = v
	return v
}
