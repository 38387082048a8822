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
	t := newTree(b.table.FuncName)
	err = b.table.EachStack(b.filter(), vi, func(stack []uint32, _ string, st []ci.Stats) error {
		if st[vi].N > 0 {
			t.add(stack, &st[vi])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	root := &t.nodes[0]
	// As for the report's total: what a JFR gap moves between stacks stays
	// inside the total.
	root.stats.Spill, root.stats.Excess = 0, 0
	f := &Flame{Confidence: opt.Confidence, Value: opt.Value}
	min := minShare * root.stats.Estimate
	if f.Root, err = t.node(0, "total", min, opt, &f.Pruned); err != nil {
		return nil, err
	}
	return f, nil
}

// tree is the call tree as it is built: nodes by index, each child found by
// its parent's index and its function id.
type tree struct {
	nodes []treeNode
	child map[uint64]int32
	// funcName names a function id.
	funcName func(uint32) string
}

type treeNode struct {
	fn       uint32
	stats    ci.Stats
	children []int32
}

func newTree(funcName func(uint32) string) *tree {
	return &tree{nodes: []treeNode{{}}, child: map[uint64]int32{}, funcName: funcName}
}

// add merges one stack's statistics into the root and every node on its
// path, from the outermost caller (the stack's end) to the leaf.
func (t *tree) add(stack []uint32, st *ci.Stats) {
	cur := int32(0)
	t.nodes[0].stats.Merge(st)
	for i := len(stack) - 1; i >= 0; i-- {
		key := uint64(cur)<<32 | uint64(stack[i])
		next, ok := t.child[key]
		if !ok {
			next = int32(len(t.nodes))
			t.nodes = append(t.nodes, treeNode{fn: stack[i]})
			t.nodes[cur].children = append(t.nodes[cur].children, next)
			t.child[key] = next
		}
		t.nodes[next].stats.Merge(st)
		cur = next
	}
}

// node converts node i and the callees of at least min into FlameNodes,
// widest first (ties by name, so the same inputs draw the same graph).
func (t *tree) node(i int32, name string, min float64, opt Options, pruned *int) (*FlameNode, error) {
	n := &t.nodes[i]
	res, err := interval(n.stats, opt)
	if err != nil {
		return nil, fmt.Errorf("flame graph: %s: %w", name, err)
	}
	out := &FlameNode{Name: name, Stats: n.stats, Result: res}
	for _, c := range n.children {
		if t.nodes[c].stats.Estimate < min || t.nodes[c].stats.Estimate <= 0 {
			*pruned += t.count(c)
			continue
		}
		child, err := t.node(c, t.name(c), min, opt, pruned)
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
