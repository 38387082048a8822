package heapprofile

import "github.com/heapest/heapest/parse"

// stackTable makes each node's stack once, leaf first, the root left out
// (but for a sample at the root itself); frames of one name share one
// frame id.
type stackTable struct {
	nodes  []node
	ids    map[string]uint32
	frames [][]parse.Frame
	fids   [][]uint32
}

func (rd *reader) stacks() *stackTable {
	return &stackTable{nodes: rd.nodes, ids: map[string]uint32{},
		frames: make([][]parse.Frame, len(rd.nodes)), fids: make([][]uint32, len(rd.nodes))}
}

// of returns node i's stack, its frames' ids and its stack id (i+1).
func (t *stackTable) of(i int32) ([]parse.Frame, []uint32, uint64) {
	if t.frames[i] == nil {
		var fr []parse.Frame
		var ids []uint32
		add := func(name string) {
			id, ok := t.ids[name]
			if !ok {
				id = uint32(len(t.ids) + 1)
				t.ids[name] = id
			}
			fr = append(fr, parse.Frame{Func: name})
			ids = append(ids, id)
		}
		for j := i; j > 0; j = t.nodes[j].parent {
			add(t.nodes[j].name)
		}
		if i == 0 {
			// A sample at the root itself (V8 puts allocations with no
			// JavaScript under pseudo-frames instead): the root is its frame.
			add(t.nodes[0].name)
		}
		t.frames[i], t.fids[i] = fr, ids
	}
	return t.frames[i], t.fids[i], uint64(i) + 1
}
