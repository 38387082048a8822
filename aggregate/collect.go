package aggregate

import (
	"unsafe"

	"github.com/heapest/heapest/internal/grow"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Keys says which record attributes a cell keeps besides its stack and
// type: the thread and the allocation size cost cells, and only --by
// thread and --by size need them.
type Keys struct {
	Thread, Size bool
}

// KeysFor returns the keys grouping by b needs.
func KeysFor(b By) Keys { return Keys{Thread: b == ByThread, Size: b == BySize} }

// Span is what a Window saw of a trace: how many records it was offered
// and kept, and the first and last event times offered.
type Span struct {
	Offered, kept int
	First, Last   int64
}

func (s *Span) see(t int64) {
	if s.Offered == 0 || t < s.First {
		s.First = t
	}
	if s.Offered == 0 || t > s.Last {
		s.Last = t
	}
	s.Offered++
}

// Kept is how many of the offered records the window kept.
func (s Span) Kept() int { return s.kept }

// Span is what the collector's window saw (zero without a window).
func (c *Collector) Span() Span { return c.span }

// Window selects records of a trace by time: [From, To) in ns from the
// trace start, To ≤ 0 meaning its end. The zero Window keeps everything.
type Window struct {
	From, To int64
	On       bool
}

func (w Window) keep(t int64) bool { return !w.On || t >= w.From && (w.To <= 0 || t < w.To) }

// Collector is the accumulator of one input, the parse.Sink its parser
// streams into. It unbiases each record as it arrives (for each value
// asked for) and adds the contributions to the record's cell: the
// interned (stack of frames as the parser gave them, type, thread, size).
// Nothing of a record is kept but its cell. Names are not known yet (a
// jemalloc dump's maps come after its stacks); Finish resolves them once
// per distinct frame and moves the cells into a Table.
type Collector struct {
	values []unbias.Value
	keys   Keys
	window Window
	span   Span

	frames *keyTable[frameKey] // frames with names
	named  []uint32            // frames' id -> frame id
	addrs  addrTable           // frames without names -> frame id
	// frameAddrs and frameFuncs are each frame's address and name, by
	// frame id (frame); frameFuncs is shorter when the frames after it
	// have no name, and nil for a dump's addresses: a slice of strings
	// is one the garbage collector scans, hundreds of thousands of
	// entries long on a dump no binary names.
	frameAddrs []uint64
	frameFuncs []string
	stacks     *stackTable
	strs       *strTable
	cells      *cellTable
	stats      valueStats

	deferred deferredStore
	// narrow, when set, lets Begin drop the values of the kind (in-use
	// or allocations) that the report will not show: the report's
	// default value is in-use space where the input has it.
	narrow bool
	skip   []bool // values Begin dropped
	// needStacks, when set, tells from what the input holds (Begin)
	// whether the report needs its stacks at all; without them every
	// record's cell has the empty stack.
	needStacks func(*parse.Profile) bool
	noStacks   bool
	// byStackID maps parser stack ids (parse.Record.StackID, small and
	// dense) to stacks, +1 (0: not seen yet).
	byStackID []uint32
	// byFrameID maps parser frame ids (parse.Record.FrameIDs) to frames,
	// +1 (0: not seen yet).
	byFrameID []uint32

	buf     []uint32
	hashes  []uint64 // of the frames of the stack read last (addrTable.hashes)
	contrib []unbias.Contribution
	batch   batch
	memo    unbias.Memo
	// counted marks the frames whose addresses were told unresolved
	// (Finish).
	counted []bool
	// inl are the calls inlined at the named frames that have any, and
	// inlAt, per position (caller 0, leaf 1) and frame, 1 + the index of
	// a frame's in inl (0: none; nil: no frame of the position has any).
	inl   []inlined
	inlAt [2][]uint32
	// bare marks, per kind (breakdown or not), the stacks of records with
	// nothing for any value kept and some frame the parser left unnamed:
	// such a record makes no cell, but its stack's frames are named as
	// every other's. lateCell is set when a stack got its first cell
	// after such a record: the stacks' first cells are then not in the
	// order of their ids (see finisher.adopt).
	bare     [2][]bool
	lateCell bool
}

// NewCollector returns an empty Collector for values (at least one).
// sizeHint is the input's size in bytes when known, to size the tables.
func NewCollector(values []unbias.Value, keys Keys, w Window, sizeHint int64) *Collector {
	// A stack costs a dump at least ~300 bytes of text; the tables start
	// at that many stacks, at most 64 K (a trace has few stacks), and
	// grow.
	stacks := int(min(max(sizeHint/300, 1024), 1<<16))
	// A jemalloc dump's frames are bare addresses, some 15 bytes of text
	// each; up to 64 K of them, the table of addresses starts with room
	// for as many as the input can hold, so that a dump of mostly
	// distinct addresses does not grow it through every size. (A table
	// nothing is put in costs no page.)
	addrs := int(min(max(sizeHint/20, int64(stacks/4)), 1<<16))
	st := newStackTable(stacks)
	return &Collector{
		values: values, keys: keys, window: w,
		frames: newKeyTable[frameKey](16), addrs: newAddrTable(addrs), stacks: st,
		// Filled in order, so room never written costs no page: up to
		// 256 K addresses, it need not be copied to grow.
		frameAddrs: make([]uint64, 0, min(max(sizeHint/20, int64(addrs)), 1<<18)),
		strs:       newStrTable(), cells: newCellTable(stacks),
		stats:   newValueStats(len(values)),
		contrib: make([]unbias.Contribution, len(values)),
	}
}

// Record unbiases one record and adds it to its cell. A record whose
// counts' encoding the parser learns only at the end (parse.Unresolved)
// is kept, compactly, until Finish.
func (c *Collector) Record(rec *parse.Record) {
	if c.window.On && !rec.Breakdown {
		c.span.see(rec.Time)
	}
	if rec.Breakdown && !c.keys.Thread || !c.window.keep(rec.Time) {
		return
	}
	if c.window.On && !rec.Breakdown {
		c.span.kept++
	}
	var k cellKey
	unresolved := rec.InUse.Enc == parse.Unresolved || rec.Alloc.Enc == parse.Unresolved
	if !unresolved {
		k.size = c.contributeAll(rec)
		if noStats(c.contrib) && named(rec.Stack) {
			return // nothing to add, and nothing to tell of its frames
		}
	}
	batched := !c.noStacks && !unresolved && rec.StackID == 0
	switch {
	case batched:
		c.queueStack(rec)
	case c.noStacks:
		c.flush()
		k.stack = c.stacks.intern(nil)
	default:
		c.flush()
		k.stack = c.stackOf(rec)
	}
	k.breakdown = rec.Breakdown
	k.typ = c.strs.internShared(rec.Type)
	if c.keys.Thread {
		k.thread = c.strs.internShared(rec.Thread)
	}
	switch {
	case batched:
		c.queue(k)
	case unresolved:
		c.deferred.add(k, rec)
	default:
		c.addCell(k, c.contrib)
	}
}

// inlined are the calls inlined at a frame: their table function ids,
// innermost first, and how many of the innermost are the allocator's.
type inlined struct {
	ids   []uint32
	alloc int
}

// named reports whether the parser named every frame of stack: a record
// with nothing for any value kept then needs no stack. Its stack is kept
// only to be named (addCell), and named frames tell nothing.
func named(stack []parse.Frame) bool {
	for i := range stack {
		if stack[i].Func == "" {
			return false
		}
	}
	return true
}

// contribute is value v's (index i's) contribution of rec, in c.contrib[i].
func (c *Collector) contribute(rec *parse.Record, v unbias.Value, i int) *unbias.Contribution {
	c.contrib[i] = c.memo.Contribute(rec, v)
	if c.window.On && c.window.From > 0 && c.contrib[i].HasOffset {
		c.contrib[i].OpenStart = true // the window starts between samples
	}
	return &c.contrib[i]
}

// contributeAll unbiases rec for each value, in c.contrib, and returns
// the allocation size of its cell (0 unless kept).
func (c *Collector) contributeAll(rec *parse.Record) float64 {
	for i, v := range c.values {
		if c.skip != nil && c.skip[i] {
			c.contrib[i] = unbias.Contribution{}
			continue
		}
		c.contribute(rec, v, i)
	}
	if c.keys.Size {
		return c.size()
	}
	return 0
}

// addCell adds contributions (one per value) to the cell of key k. A
// record with nothing for any value makes no cell, so that every cell has
// statistics: its stack is noted (bare), to be named all the same, so
// that what is said about unnamed frames does not depend on --value
// (Record drops such a record when the parser named all its frames).
func (c *Collector) addCell(k cellKey, contrib []unbias.Contribution) {
	bare := &c.bare[b2i(k.breakdown)]
	if noStats(contrib) {
		if n := int(k.stack) + 1; len(*bare) < n {
			*bare = grow.Room(*bare, n-len(*bare))[:n]
		}
		(*bare)[k.stack] = true
		return
	}
	id, added := c.cells.intern(k)
	if added && int(k.stack) < len(*bare) && (*bare)[k.stack] {
		c.lateCell = true
	}
	for i := range contrib {
		c.stats.add(id, i, &contrib[i].Stats)
	}
}

// noStats reports whether contributions have nothing for any value.
func noStats(contrib []unbias.Contribution) bool {
	for i := range contrib {
		if contrib[i].N != 0 {
			return false
		}
	}
	return true
}

// batch holds records whose stacks wait to be interned together (flush):
// per record, its cell key but the stack, its contributions (one per
// value), and its stack's frame ids and their hash.
type batch struct {
	keys    []cellKey
	contrib []unbias.Contribution
	frames  []uint32
	ends    []int
	hashes  []uint64
}

// batchLen is how many records a batch holds.
const batchLen = 16

// queueStack adds the frame ids of rec's stack, and their hash, to the
// batch; queue adds the rest of the record.
func (c *Collector) queueStack(rec *parse.Record) {
	b := &c.batch
	from := len(b.frames)
	b.frames = c.appendFrameIDs(b.frames, rec)
	b.ends = append(b.ends, len(b.frames))
	b.hashes = append(b.hashes, hashIDs(b.frames[from:]))
}

// queue adds the record just unbiased (c.contrib), with its cell key k
// but the stack, to the batch (after its stack: queueStack), and flushes
// a full batch.
func (c *Collector) queue(k cellKey) {
	b := &c.batch
	b.keys = append(b.keys, k)
	b.contrib = append(b.contrib, c.contrib...)
	if len(b.keys) == batchLen {
		c.flush()
	}
}

// flush interns the stacks of the batch and adds its records to their
// cells, in the order they came. The stack table slots of the whole batch
// are loaded first, so that their cache misses overlap: one record at a
// time, each waited on its own, most of the time a record took.
func (c *Collector) flush() {
	b := &c.batch
	if len(b.keys) == 0 {
		return
	}
	c.stacks.touch(b.hashes)
	nv, from := len(c.values), 0
	for i, k := range b.keys {
		k.stack = c.stacks.internHashed(b.frames[from:b.ends[i]], b.hashes[i], nil)
		from = b.ends[i]
		c.addCell(k, b.contrib[i*nv:(i+1)*nv])
	}
	b.keys, b.contrib, b.frames = b.keys[:0], b.contrib[:0], b.frames[:0]
	b.ends, b.hashes = b.ends[:0], b.hashes[:0]
}

// stackOf returns the id of rec's stack, looked up once per parser stack
// id where the parser gives one.
func (c *Collector) stackOf(rec *parse.Record) uint32 {
	sid := rec.StackID
	if sid == 0 || sid > 1<<26 {
		return c.internStack(rec) // none, or not the small dense ids parsers give
	}
	if sid < uint64(len(c.byStackID)) {
		if id := c.byStackID[sid]; id != 0 {
			return id - 1
		}
	} else {
		c.byStackID = grow.Room(c.byStackID, int(sid)+1-len(c.byStackID))[:sid+1]
	}
	id := c.internStack(rec)
	c.byStackID[sid] = id + 1
	return id
}

// internStack returns the id of rec's stack. A stack the parser says is
// new is stored without looking it up.
func (c *Collector) internStack(rec *parse.Record) uint32 {
	c.buf = c.appendFrameIDs(c.buf[:0], rec)
	if rec.NewStack && rec.StackID != 0 {
		return c.stacks.add(c.buf)
	}
	return c.stacks.intern(c.buf)
}

// appendFrameIDs appends the ids of rec's frames to dst, looking each
// frame up once per parser frame id where the parser gives them.
func (c *Collector) appendFrameIDs(dst []uint32, rec *parse.Record) []uint32 {
	if len(rec.FrameIDs) != len(rec.Stack) {
		c.hashes = c.addrs.hashes(rec.Stack, c.hashes[:0])
		for i := range rec.Stack {
			dst = append(dst, c.internFrame(&rec.Stack[i], c.hashes[i]))
		}
		return dst
	}
	byID := c.byFrameID // in a local, not reloaded through c per frame
	for i, fid := range rec.FrameIDs {
		// A frame seen before (nearly every one) is found by its id
		// alone: byFrameID holds ids from 1 to below 1<<26 only.
		if int(fid) < len(byID) && byID[fid] != 0 {
			dst = append(dst, byID[fid]-1)
			continue
		}
		dst = append(dst, c.frameByID(fid, &rec.Stack[i]))
		byID = c.byFrameID
	}
	return dst
}

// frameByID returns the id of frame f, whose parser id is fid, and
// remembers it by fid when that is one of the small dense ids parsers
// give (0 is none).
func (c *Collector) frameByID(fid uint32, f *parse.Frame) uint32 {
	var h uint64
	if f.Func == "" {
		h = mix(f.Addr)
	}
	id := c.internFrame(f, h)
	if fid > 0 && fid < 1<<26 {
		if int(fid) >= len(c.byFrameID) {
			c.byFrameID = grow.Room(c.byFrameID, int(fid)+1-len(c.byFrameID))[:fid+1]
		}
		c.byFrameID[fid] = id + 1
	}
	return id
}

// internFrame returns the id of frame f; h is its address's hash
// (addrTable.hashes) when it has no name.
func (c *Collector) internFrame(f *parse.Frame, h uint64) uint32 {
	if f.Func == "" {
		id, ok := c.addrs.find(f.Addr, h)
		if !ok {
			id = uint32(len(c.frameAddrs))
			c.addrs.put(f.Addr, h, id)
			c.frameAddrs = append(grow.Room(c.frameAddrs, 1), f.Addr)
		}
		return id
	}
	k := frameKey{addr: f.Addr, n: len(f.Func)}
	if k.n > 0 {
		k.fn = uintptr(unsafe.Pointer(unsafe.StringData(f.Func)))
	}
	kid, added := c.frames.intern(k)
	if added {
		// Named frames and bare addresses share one numbering, that of
		// frameAddrs.
		id := uint32(len(c.frameAddrs))
		c.named = append(grow.Room(c.named, 1), id)
		c.frameAddrs = append(grow.Room(c.frameAddrs, 1), f.Addr)
		if n := int(id) + 1; len(c.frameFuncs) < n {
			c.frameFuncs = grow.Room(c.frameFuncs, n-len(c.frameFuncs))[:n]
		}
		c.frameFuncs[id] = f.Func
	}
	return c.named[kid]
}

// frame returns frame id as the parser gave it.
func (c *Collector) frame(id uint32) parse.Frame {
	f := parse.Frame{Addr: c.frameAddrs[id]}
	if int(id) < len(c.frameFuncs) {
		f.Func = c.frameFuncs[id]
	}
	return f
}

// size is the allocation size of the record just unbiased (c.contrib):
// that of any value it has something for (values skipped by Narrow have
// nothing).
func (c *Collector) size() float64 {
	for i := range c.contrib {
		if c.contrib[i].N > 0 {
			return c.contrib[i].Size
		}
	}
	return c.contrib[0].Size
}

// Narrow lets the collector, when its input says what it holds before its
// records (parse.Beginner), keep only the kind of value a report on that
// one input shows by default (unbias.DefaultValue). For a report whose
// value is chosen from this input alone.
func (c *Collector) Narrow() { c.narrow = true }

// DropStacks lets the collector, when its input says what it holds before
// its records (parse.Beginner), keep no stacks if need says the report
// will not use them (a report --by type without --focus or --ignore).
func (c *Collector) DropStacks(need func(*parse.Profile) bool) { c.needStacks = need }

// Begin is parse.Beginner: with Narrow, the values of the other kind are
// left out; with DropStacks, the stacks may be.
func (c *Collector) Begin(p *parse.Profile) {
	if c.needStacks != nil {
		c.noStacks = !c.needStacks(p)
	}
	if !c.narrow {
		return
	}
	c.skip = make([]bool, len(c.values))
	keepAlloc := unbias.DefaultValue(p).IsAlloc()
	for i, v := range c.values {
		c.skip[i] = v.IsAlloc() != keepAlloc
	}
}

// Reads is parse.Narrower: after Begin, the kinds of counts of the values
// kept. Record drops a record with nothing for them whose frames are all
// named, so it need not be sent. Within a time window, every record is
// read: its time counts.
func (c *Collector) Reads() (inUse, alloc bool) {
	if c.window.On {
		return true, true
	}
	for i, v := range c.values {
		if c.skip == nil || !c.skip[i] {
			alloc = alloc || v.IsAlloc()
			inUse = inUse || !v.IsAlloc()
		}
	}
	return inUse, alloc
}

// Reserve is parse.Reserver: before the first record, the tables of
// stacks and cells are made for that many at once, instead of grown by
// doubling (which copies them and leaves each old copy to the garbage
// collector).
func (c *Collector) Reserve(records int) {
	if c.stacks.len() == 0 && cap(c.stacks.spans) < records {
		c.stacks = newStackTable(records)
	}
	if len(c.cells.keys) == 0 && cap(c.cells.keys) < records {
		c.cells = newCellTable(records)
	}
}

// Len returns the number of cells collected.
func (c *Collector) Len() int {
	c.flush()
	return len(c.cells.keys)
}
