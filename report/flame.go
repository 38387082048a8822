package report

import (
	"fmt"
	"sort"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/mix"
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
	t.keep(minShare * t.nodes.at(0).est)
	if err := each(t.gather); err != nil {
		return nil, err
	}
	// As for the report's total: what a JFR gap moves between stacks stays
	// inside the total, unfiltered.
	root := &t.stats[0]
	if !opt.filtered() {
		root.Spill, root.Excess = 0, 0
	}
	if root.N == 0 {
		// Nothing sampled is no proof of nothing there: bounded as the
		// report's total is.
		*root = NoSample(opt.Value, b.sources(vi))
	}
	f := &Flame{Confidence: opt.Confidence, Value: opt.Value}
	if f.Root, err = t.node(0, "total", opt, &f.Pruned); err != nil {
		return nil, err
	}
	return f, nil
}

// tree is the call tree as it is built: nodes by index, each child found by
// its parent's index and its function id. A graph of a million stacks
// that share little has millions of nodes: a node is 24 bytes, in chunks,
// its children a list through it (not a slice of their own), and the
// index of children an open-addressing table of 12 bytes a slot (a Go map,
// a slice of children per node and a slice of nodes grown by copying were
// 200 bytes a node).
type tree struct {
	nodes nodeStore
	child childIndex
	// kept is, per node, its index in stats +1 (0: pruned), and stats the
	// statistics of the nodes kept (keep).
	kept  []int32
	stats []ci.Stats
	// funcName names a function id.
	funcName func(uint32) string
}

type treeNode struct {
	fn uint32
	// first and last are the node's first and last children, next its
	// next sibling, in the order they were added (0: none; the root is
	// no one's child).
	first, last, next int32
	// est is the estimate of the stacks through the node, summed as
	// ci.Stats.Merge sums them, in the same order.
	est float64
}

func newTree(funcName func(uint32) string) *tree {
	t := &tree{funcName: funcName}
	t.nodes.add(treeNode{})
	return t
}

// nodeStore holds the nodes in chunks of nodeChunk: growing never copies
// them, nor leaves old copies to the garbage collector.
type nodeStore struct {
	chunks [][]treeNode
	n      int
}

const nodeChunk = 1 << 14

// at returns node i.
func (s *nodeStore) at(i int32) *treeNode { return &s.chunks[i/nodeChunk][i%nodeChunk] }

// add appends a node and returns its index.
func (s *nodeStore) add(n treeNode) int32 {
	if s.n%nodeChunk == 0 {
		s.chunks = append(s.chunks, make([]treeNode, nodeChunk))
	}
	s.chunks[s.n/nodeChunk][s.n%nodeChunk] = n
	s.n++
	return int32(s.n - 1)
}

// len is the number of nodes.
func (s *nodeStore) len() int { return s.n }

// add adds one stack's estimate to the root and every node on its path,
// from the outermost caller (the stack's end) to the leaf.
func (t *tree) add(stack []uint32, st *ci.Stats) {
	cur := int32(0)
	t.nodes.at(0).est += st.Estimate
	for i := len(stack) - 1; i >= 0; i-- {
		slot, next := t.child.find(cur, stack[i])
		if next == 0 {
			next = t.nodes.add(treeNode{fn: stack[i]})
			if p := t.nodes.at(cur); p.last == 0 {
				p.first, p.last = next, next
			} else {
				t.nodes.at(p.last).next, p.last = next, next
			}
			t.child.put(slot, cur, stack[i], next)
		}
		t.nodes.at(next).est += st.Estimate
		cur = next
	}
}

// childIndex maps (parent, function id) to the child node: open
// addressing, linear probing, at most three quarters full.
type childIndex struct {
	keys  []uint64 // parent<<32 | fn, +1 so that 0 is an empty slot
	nodes []int32
	n     int
}

func childKey(parent int32, fn uint32) uint64 { return (uint64(parent)<<32 | uint64(fn)) + 1 }

// find returns the slot of (parent, fn) and its node, or the empty slot
// where it goes and 0.
func (c *childIndex) find(parent int32, fn uint32) (int, int32) {
	if 4*(c.n+1) > 3*len(c.keys) {
		c.grow()
	}
	return c.probe(childKey(parent, fn))
}

// put fills the empty slot find returned.
func (c *childIndex) put(slot int, parent int32, fn uint32, node int32) {
	c.keys[slot], c.nodes[slot] = childKey(parent, fn), node
	c.n++
}

// get returns the child of parent for fn, 0 when there is none.
func (c *childIndex) get(parent int32, fn uint32) int32 {
	if len(c.keys) == 0 {
		return 0
	}
	_, node := c.probe(childKey(parent, fn))
	return node
}

// probe returns the slot of key k and its node, or the empty slot where
// it goes and 0.
func (c *childIndex) probe(k uint64) (int, int32) {
	mask := len(c.keys) - 1
	for i := int(mix.Finish(k)) & mask; ; i = (i + 1) & mask {
		switch c.keys[i] {
		case k:
			return i, c.nodes[i]
		case 0:
			return i, 0
		}
	}
}

func (c *childIndex) grow() {
	keys, nodes := c.keys, c.nodes
	size := max(1024, 2*len(keys))
	c.keys, c.nodes = make([]uint64, size), make([]int32, size)
	mask := size - 1
	for j, k := range keys {
		if k == 0 {
			continue
		}
		i := int(mix.Finish(k)) & mask
		for c.keys[i] != 0 {
			i = (i + 1) & mask
		}
		c.keys[i], c.nodes[i] = k, nodes[j]
	}
}

// keep marks the nodes node will draw: the root, and each child of a kept
// node whose estimate is at least min and above zero.
func (t *tree) keep(min float64) {
	t.kept = make([]int32, t.nodes.len())
	var mark func(i int32)
	mark = func(i int32) {
		t.stats = append(t.stats, ci.Stats{})
		t.kept[i] = int32(len(t.stats))
		for c := t.nodes.at(i).first; c != 0; c = t.nodes.at(c).next {
			if e := t.nodes.at(c).est; !(e < min || e <= 0) { // NaN stays, as it always did
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
		next := t.child.get(cur, stack[i])
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
	n, st := t.nodes.at(i), t.stats[t.kept[i]-1]
	res, err := interval(st, opt)
	if err != nil {
		return nil, fmt.Errorf("flame graph: %s: %w", name, err)
	}
	out := &FlameNode{Name: name, Stats: st, Result: res}
	for c := n.first; c != 0; c = t.nodes.at(c).next {
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
	for c := t.nodes.at(i).first; c != 0; c = t.nodes.at(c).next {
		n += t.count(c)
	}
	return n
}

// name is node i's function name.
func (t *tree) name(i int32) string { return t.funcName(t.nodes.at(i).fn) }

// ReportBy is Report with rows grouped by by instead of Options.By, for a
// page that switches between groupings of inputs read once. Grouping by
// thread or size needs their keys kept (Options.ExtraKeys), and by source
// the sources' totals (Options.SourceTotals).
func (b *Builder) ReportBy(by aggregate.By) (*Report, error) {
	b.correlate() // once, on the table the copy shares
	c := *b
	c.opt.By, c.opt.DefaultBy = by, false
	return c.Report()
}
