package report

import (
	"fmt"
	"sort"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/unbias"
)

// Flame is the flame graph of a report's value: the call tree of every
// stack (after the filters), outermost caller at the root's children, each
// node with the statistics of every stack through its call path and the
// interval they give.
type Flame struct {
	Confidence float64
	Value      unbias.Value
	// Root is the total: every stack passes through it.
	Root *FlameNode
	// Pruned counts the nodes left out as narrower than the minimum share.
	Pruned int
}

// FlameNode is one frame of the flame graph: a function on one call path.
type FlameNode struct {
	Name string
	// Stats are the merged statistics of the stacks through this path, and
	// Result their interval, computed as a report row's is.
	Stats    ci.Stats
	Result   ci.Result
	Children []*FlameNode
}

// Flame returns the flame graph of the report's value. Nodes whose
// estimate is below minShare of the total are left out with their
// callees (a graph of a million stacks has no room for them, and their
// intervals would be computed for nothing). The stacks must have been kept:
// Options.Flame.
func (b *Builder) Flame(minShare float64) (*Flame, error) {
	opt, err := b.settle()
	if err != nil {
		return nil, err
	}
	vi := b.valueIndex(opt.Value)
	if vi < 0 {
		return nil, fmt.Errorf("internal error: value %s was not collected", opt.Value)
	}
	// The tree is made of the stacks' estimates first, and the statistics
	// are gathered, in a second pass, for the nodes kept only: a node's
	// statistics each were most of the memory of the graph of a profile
	// of a million stacks, most of whose nodes are pruned.
	t := newTree(b.table.FuncName)
	each := func(fn func(stack []uint32, st *ci.Stats)) error {
		return b.table.EachStack(b.filter(), vi, func(stack []uint32, _ string, st []ci.Stats) error {
			if st[vi].N > 0 {
				fn(stack, &st[vi])
			}
			return nil
		})
	}
	if err := each(t.add); err != nil {
		return nil, err
	}
	t.keep(minShare * t.nodes[0].est)
	if err := each(t.gather); err != nil {
		return nil, err
	}
	// As for the report's total: what a JFR gap moves between stacks stays
	// inside the total.
	root := &t.stats[0]
	root.Spill, root.Excess = 0, 0
	f := &Flame{Confidence: opt.Confidence, Value: opt.Value}
	if f.Root, err = t.node(0, "total", opt, &f.Pruned); err != nil {
		return nil, err
	}
	return f, nil
}

// tree is the call tree as it is built: nodes by index, each child found by
// its parent's index and its function id.
type tree struct {
	nodes []treeNode
	child map[uint64]int32
	// kept is, per node, its index in stats +1 (0: pruned), and stats the
	// statistics of the nodes kept (keep).
	kept  []int32
	stats []ci.Stats
	// funcName names a function id.
	funcName func(uint32) string
}

type treeNode struct {
	fn uint32
	// est is the estimate of the stacks through the node, summed as
	// ci.Stats.Merge sums them, in the same order.
	est      float64
	children []int32
}

func newTree(funcName func(uint32) string) *tree {
	return &tree{nodes: []treeNode{{}}, child: map[uint64]int32{}, funcName: funcName}
}

// add adds one stack's estimate to the root and every node on its path,
// from the outermost caller (the stack's end) to the leaf.
func (t *tree) add(stack []uint32, st *ci.Stats) {
	cur := int32(0)
	t.nodes[0].est += st.Estimate
	for i := len(stack) - 1; i >= 0; i-- {
		key := uint64(cur)<<32 | uint64(stack[i])
		next, ok := t.child[key]
		if !ok {
			next = int32(len(t.nodes))
			t.nodes = append(t.nodes, treeNode{fn: stack[i]})
			t.nodes[cur].children = append(t.nodes[cur].children, next)
			t.child[key] = next
		}
		t.nodes[next].est += st.Estimate
		cur = next
	}
}

// keep marks the nodes node will draw: the root, and each child of a kept
// node whose estimate is at least min and above zero.
func (t *tree) keep(min float64) {
	t.kept = make([]int32, len(t.nodes))
	var mark func(i int32)
	mark = func(i int32) {
		t.stats = append(t.stats, ci.Stats{})
		t.kept[i] = int32(len(t.stats))
		for _, c := range t.nodes[i].children {
			if e := t.nodes[c].est; !(e < min || e <= 0) { // NaN stays, as it always did
				mark(c)
			}
		}
	}
	mark(0)
}

// gather merges one stack's statistics into every kept node on its path.
func (t *tree) gather(stack []uint32, st *ci.Stats) {
	cur := int32(0)
	t.stats[t.kept[0]-1].Merge(st)
	for i := len(stack) - 1; i >= 0; i-- {
		next := t.child[uint64(cur)<<32|uint64(stack[i])]
		k := t.kept[next]
		if k == 0 {
			return
		}
		t.stats[k-1].Merge(st)
		cur = next
	}
}

// node converts node i and its kept callees (keep) into FlameNodes,
// widest first (ties by name, so the same inputs draw the same graph).
func (t *tree) node(i int32, name string, opt Options, pruned *int) (*FlameNode, error) {
	n, st := &t.nodes[i], t.stats[t.kept[i]-1]
	res, err := interval(st, opt)
	if err != nil {
		return nil, fmt.Errorf("flame graph: %s: %w", name, err)
	}
	out := &FlameNode{Name: name, Stats: st, Result: res}
	for _, c := range n.children {
		if t.kept[c] == 0 {
			*pruned += t.count(c)
			continue
		}
		child, err := t.node(c, t.name(c), opt, pruned)
		if err != nil {
			return nil, err
		}
		out.Children = append(out.Children, child)
	}
	sort.SliceStable(out.Children, func(a, b int) bool {
		x, y := out.Children[a], out.Children[b]
		if x.Stats.Estimate != y.Stats.Estimate {
			return x.Stats.Estimate > y.Stats.Estimate
		}
		return x.Name < y.Name
	})
	return out, nil
}

// count is the number of nodes in the subtree at i.
func (t *tree) count(i int32) int {
	n := 1
	for _, c := range t.nodes[i].children {
		n += t.count(c)
	}
	return n
}

// name is node i's function name.
func (t *tree) name(i int32) string { return t.funcName(t.nodes[i].fn) }

// ReportBy is Report with rows grouped by by instead of Options.By, for a
// page that switches between groupings of inputs read once. Grouping by
// thread or size needs their keys kept (Options.ExtraKeys), and by source
// the sources' totals (Options.SourceTotals).
func (b *Builder) ReportBy(by aggregate.By) (*Report, error) {
	c := *b
	c.opt.By, c.opt.DefaultBy = by, false
	return c.Report()
}
