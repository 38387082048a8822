package aggregate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Namer names the frames a parser left unnamed: symbolize.Session for
// profiles with mappings, a format's own resolver for traces. Need is
// called for every frame that will need a name, then Resolve once, then
// Name for each, and Unresolved for the names left empty that are kept.
type Namer interface {
	Need(addr uint64, leaf bool)
	Resolve() error
	Name(f parse.Frame, leaf bool) (name string, kind parse.FrameKind)
	// Unresolved is called once per distinct address.
	Unresolved(addr uint64)
}

// handleNamer is a Namer that gives each address it is told of a handle
// and names a frame by it. The collector tells it each distinct address
// once per position (its unnamed frames are one per address), so the
// namer keeps no index of them, and naming them looks nothing up
// (symbolize.Session).
type handleNamer interface {
	// NeedHandle is Need, returning the address's handle, or false when
	// nothing can name it (Name then says what it is).
	NeedHandle(addr uint64, leaf bool) (uint32, bool)
	// NameHandle is Name for a frame whose address NeedHandle took.
	NameHandle(h uint32) (name string, kind parse.FrameKind)
}

// inliner is a Namer that also names the calls inlined at a frame's
// address (symbolize.Session): their functions, innermost first, are
// frames of their own before the frame's in its stack.
// alloc is how many of the innermost are the allocator's, dropped where
// the frame is the first its stack keeps (as allocator frames are).
type inliner interface {
	// AnyInlined reports whether any frame has inlined calls: a namer
	// with none is asked of no frame.
	AnyInlined() bool
	Inlined(f parse.Frame, leaf bool) (names []string, alloc int)
	InlinedHandle(h uint32) (names []string, alloc int)
}

// expecter is a Namer told, before its first Need, about how many
// addresses will need a name (symbolize.Session), so that it sizes its
// tables once.
type expecter interface{ Expect(n int) }

// FuncNamer adapts a format's own resolver (parse.Profile.Names) to Namer.
type FuncNamer func(addr uint64) string

// Need does nothing: the resolver needs no preparation.
func (FuncNamer) Need(uint64, bool) {}

// Resolve does nothing.
func (FuncNamer) Resolve() error { return nil }

// Name returns f.Func, else the resolver's name for the frame's
// instruction: f.Addr for the leaf, f.Addr-1 for a caller (a return
// address follows its call).
func (n FuncNamer) Name(f parse.Frame, leaf bool) (string, parse.FrameKind) {
	if f.Func != "" || f.Addr == 0 {
		return f.Func, parse.ProgramFrame
	}
	pc := f.Addr
	if !leaf {
		pc--
	}
	return n(pc), parse.ProgramFrame
}

// Unresolved does nothing.
func (FuncNamer) Unresolved(uint64) {}

// IDNamer is FuncNamer for a resolver whose frame addresses are
// identifiers (parse.Profile.NamesByID): every frame is looked up as
// written, none adjusted as a return address.
type IDNamer func(addr uint64) string

// Need does nothing: the resolver needs no preparation.
func (IDNamer) Need(uint64, bool) {}

// Resolve does nothing.
func (IDNamer) Resolve() error { return nil }

// Name returns f.Func, else the resolver's name for f.Addr.
func (n IDNamer) Name(f parse.Frame, _ bool) (string, parse.FrameKind) {
	if f.Func != "" || f.Addr == 0 {
		return f.Func, parse.ProgramFrame
	}
	return n(f.Addr), parse.ProgramFrame
}

// Unresolved does nothing.
func (IDNamer) Unresolved(uint64) {}

// ModuleNamer is a Namer that can also name an address it could not
// resolve by the file it lies in and its offset there ("libfoo.so+0x1a2b"):
// a name that, unlike the address, is the same in every process that
// loaded the same build of that file.
type ModuleNamer interface {
	// ModuleKey returns the module holding addr (the same string for
	// every address of one file, "libfoo.so[3f2a…]" with its build ID
	// where known), addr's offset in that file, and the mapping holding
	// it with the file's whole build ID, the same pointer for every
	// address it holds (pprof output writes it, so that pprof can
	// symbolize the frame later with the right file). The mapping is nil
	// when no mapping of a named file holds addr.
	ModuleKey(addr uint64) (module string, offset uint64, m *parse.Mapping)
}

// ModuleFrame is where a frame keyed by module and offset lies: the
// mapping of its module in the first input that had it, and its address
// in that input's address space.
type ModuleFrame struct {
	Mapping parse.Mapping
	Addr    uint64
}

// Table holds cells keyed by names: the mergeable form of any number of
// inputs. Its frames are function names (or 0x… addresses that stayed
// unnamed), its stacks sequences of them.
type Table struct {
	values []unbias.Value
	keys   Keys
	funcs  *strTable
	// anons are the functions no namer named (funcs.names holds "" for
	// them): frame addresses, or offsets in modules (KeyByModule).
	anons  anonTable
	stacks *stackTable
	strs   *strTable
	cells  *cellTable
	stats  valueStats
	// byModule keys unnamed frames by module and offset (see
	// KeyByModule).
	byModule bool
	// hide matches the names of the functions Hide drops from stacks;
	// hidden holds its verdict per function id (0: not asked yet,
	// keptFunc, hiddenFunc), and hid says some function matched.
	hide   *regexp.Regexp
	hidden []uint8
	hid    bool
}

// Verdicts of Table.hidden.
const (
	keptFunc   = 1
	hiddenFunc = 2
)

// KeyByModule makes frames that no namer could name keyed by the module
// they lie in and their offset in it, when the namer knows them
// (ModuleNamer), instead of by address: in a merge, one library loaded at
// different addresses in two processes is then one set of rows.
func (t *Table) KeyByModule() { t.byModule = true }

// Hide makes the frames whose function name matches re (pprof's -hide)
// gone from every stack the table takes after it, wherever they are in
// it: their samples count at the rest of their stack, whose first frame
// left is the leaf, and a stack left with no frame is no stack. Frames
// are hidden before anything groups or filters them: --focus and
// --ignore see what is left.
func (t *Table) Hide(re *regexp.Regexp) { t.hide = re }

// Hid reports whether a function was hidden (Hide) from a stack.
func (t *Table) Hid() bool { return t.hid }

// dropHidden removes the hidden functions (Hide) from the stack ids,
// matching each function's name once.
func (t *Table) dropHidden(ids []uint32) []uint32 {
	kept := ids[:0]
	for _, fn := range ids {
		if int(fn) >= len(t.hidden) {
			n := max(int(fn)+1, len(t.funcs.names))
			t.hidden = slices.Grow(t.hidden, n-len(t.hidden))[:n]
		}
		if t.hidden[fn] == 0 {
			t.hidden[fn] = keptFunc
			if matchName(t.hide, t.funcName(fn)) {
				t.hidden[fn], t.hid = hiddenFunc, true
			}
		}
		if t.hidden[fn] == keptFunc {
			kept = append(kept, fn)
		}
	}
	return kept
}

// NewTable returns an empty Table for values and keys (those of the
// Collectors that will be finished into it).
func NewTable(values []unbias.Value, keys Keys) *Table {
	return &Table{values: values, keys: keys, funcs: newStrTable(), stacks: newStackTable(1024),
		strs: newStrTable(), cells: newCellTable(1024), stats: newValueStats(len(values))}
}

// Values returns the values the table holds, in order.
func (t *Table) Values() []unbias.Value { return t.values }

// frameInfo is what one distinct frame in one position kind became.
type frameInfo struct {
	// fn is the Table.funcs id, and before the frame is named its
	// handleNamer handle + 1 (0: none).
	fn    uint32
	kind  parse.FrameKind // an allocator's frames are dropped from the leaf end
	named bool            // has a name (else fn is its 0x… address)
	done  bool
}

// Finish completes the collector with what its parser returned, p:
// records it kept because their encoding was unresolved are unbiased; the
// frames are named with namer (nil: the names the parser gave, 0x…
// addresses otherwise); leading allocator frames are dropped as the namer
// says; and every cell is added to t. When the input sent per-thread
// breakdowns (p.Breakdowns > 0), those cells replace the others where
// kept. The collector is spent.
func (c *Collector) Finish(t *Table, namer Namer, p *parse.Profile) error {
	c.flush()
	fresh := t.Len() == 0 && t.stacks.len() == 0 && t.stacks.frames.n == 0
	if !fresh {
		t.reserve(len(c.cells.keys)+c.deferred.len(), c.stacks.len())
	}
	useBreakdown := c.keys.Thread && p.Breakdowns > 0
	// info[0] is per frame as a caller, info[1] as the leaf.
	info := [2][]frameInfo{make([]frameInfo, len(c.frameAddrs)), make([]frameInfo, len(c.frameAddrs))}
	// Naming reads a frame's info before it writes it: callers are every
	// frame; leaves, one a stack, reach every page when stacks are many.
	prefault(info[0])
	if c.stacks.len() >= 4*pages(info[1]) {
		prefault(info[1])
	}
	hn, _ := namer.(handleNamer) // asked once: naming asks per frame
	if namer != nil {
		if e, ok := namer.(expecter); ok {
			e.Expect(len(c.frameAddrs) - len(c.named)) // frames without a name
		}
		var buf []uint32
		c.eachStack(useBreakdown, func(sp span) {
			if short, long := c.stacks.frames.view(sp, &buf); long == nil {
				need(c, short, &info, namer, hn)
			} else {
				need(c, long, &info, namer, hn)
			}
		})
		if err := namer.Resolve(); err != nil {
			return err
		}
	}
	unnamed := c.nameFrames(t, namer, hn, &info)
	c.counted = make([]bool, len(c.frameAddrs))
	m := finisher{c: c, t: t, namer: namer, info: &info, stackMap: make([]uint32, c.stacks.len()),
		ownTwice: p != nil && p.OwnMemoryTwice,
		unnamed:  namer != nil && unnamed}
	m.adopt(fresh)
	stats := &c.stats
	if m.shared {
		stats = &t.stats
	}
	m.mapStacks(useBreakdown)
	nv := len(c.values)
	row := make([]ci.Stats, nv)
	for id, k := range c.cells.keys {
		if k.breakdown == useBreakdown { // every cell has statistics (addCell)
			tk, ok := m.key(k)
			m.addOrOwn(tk, ok, stats.row(uint32(id), row))
		}
		if !m.shared {
			c.stats.release(uint32(id)) // the table grows as the collector shrinks
		}
	}
	// Records kept for their encoding go straight to the table: they
	// never needed a cell of their own here.
	st := make([]ci.Stats, nv)
	var rec parse.Record
	memo := newDeferredMemo(&c.deferred, nv)
	c.deferred.each(func(d *deferred) {
		if d.key.breakdown != useBreakdown || c.keptNothing(d) {
			return
		}
		k, ok := m.key(d.key)
		if pids, size, known := memo.of(d.nums); known && ok {
			k.size = size
			m.addPooled(k, pids)
			return
		}
		c.deferred.record(d.nums, &rec, p)
		k.size = c.contributeAll(&rec)
		for i := range st {
			st[i] = c.contrib[i].Stats
		}
		if !ok {
			m.addOrOwn(k, ok, st)
			return
		}
		m.add(k, st, memo.room(d.nums, st))
		memo.settle(d.nums, k.size)
	})
	if m.ownCells > 0 && p != nil {
		i := 0 // the first value kept (Narrow)
		for c.skip != nil && i+1 < len(c.values) && c.skip[i] {
			i++
		}
		p.Warnings = append(p.Warnings, ownWarning(m.ownCells, c.values[i], &m.ownStats[i]))
	}
	if m.keptOwn > 0 && p != nil && !p.OwnMemorySaid {
		p.Warnings = append(p.Warnings, keptOwnWarning(m.keptOwn))
	}
	if m.shared {
		// Cells the table did not reach (it has fewer when collector
		// stacks became one table stack) still hold collector statistics.
		for id := t.Len(); id < len(c.cells.keys); id++ {
			t.stats.reset(uint32(id))
		}
	}
	*c = Collector{}
	return nil
}

// addOrOwn adds a cell's statistics to the table (add), or, for a cell
// of the allocator's own memory (not ok: finisher.key), counts them.
func (m *finisher) addOrOwn(k cellKey, ok bool, st []ci.Stats) {
	if ok {
		m.add(k, st, nil)
		return
	}
	if m.ownStats == nil {
		m.ownStats = make([]ci.Stats, len(st))
	}
	m.ownCells++
	for i := range st {
		m.ownStats[i].Merge(&st[i])
	}
}

// keptOwnWarning says that n stacks of the allocator's own memory were
// kept, under the functions whose allocations it served, from an input
// that does not say whether they count that memory twice.
func keptOwnWarning(n int) string {
	return fmt.Sprintf("%d stacks of the allocator's own memory (tcmalloc growing its heap, the heap profiler's own arena) are counted "+
		"under the functions that allocated: gperftools' HEAP_PROFILE_MMAP records them beside the allocations that memory serves, "+
		"so they count it twice, and HEAP_PROFILE_ONLY_MMAP as the heap itself; this file does not say which "+
		"(a proto converted from the heap profile's text lost its header): the text itself tells them apart", n)
}

// ownWarning says what Finish left out as the allocator's own memory: n
// cells whose statistics of value v are st.
func ownWarning(n int, v unbias.Value, st *ci.Stats) string {
	return fmt.Sprintf("%d stacks of the allocator's own memory left out (%s of %s): tcmalloc growing its heap "+
		"(sbrk, mmap) and the heap profiler's own arena, which gperftools' HEAP_PROFILE_MMAP records beside the "+
		"allocations that memory serves, so they would count twice; --keep-allocator-frames keeps them, under the allocator's frames",
		n, units.Format(st.Estimate, v.IsSpace()), v)
}

// add merges a cell's statistics (one per value) into the table; pids,
// when not nil, are where they are in the table's pool, or where to note
// it (valueStats.addPooled).
func (m *finisher) add(k cellKey, st []ci.Stats, pids []uint32) {
	id := m.cell(k)
	for i := range st {
		if pids == nil {
			m.t.stats.add(id, i, &st[i])
		} else {
			m.t.stats.addPooled(id, i, &st[i], &pids[i])
		}
	}
}

// addPooled is add for statistics the table's pool holds (pids, one per
// value: its entry, or noPooled).
func (m *finisher) addPooled(k cellKey, pids []uint32) {
	id := m.cell(k)
	for i, p := range pids {
		if p != noPooled {
			m.t.stats.addPooled(id, i, m.t.stats.pool.get(p), &pids[i])
		}
	}
}

// cell returns the table cell of key k, made when new. When the table
// took the collector's statistics (shared), a new cell's room holds those
// of the collector's cell of that id, read already: they are cleared
// first.
func (m *finisher) cell(k cellKey) uint32 {
	id, added := m.t.cells.intern(k)
	if added && m.shared {
		m.t.stats.reset(id)
	}
	return id
}

// finisher maps collector cell keys to table cell keys.
type finisher struct {
	c     *Collector
	t     *Table
	namer Namer
	info  *[2][]frameInfo
	// stackMap maps collector stacks to table stacks (+1; 0: not yet).
	stackMap []uint32
	// from holds the collector's stack frames: its own chunks, or the
	// table's that adopted them.
	from *frameStore
	// left counts, per chunk of collector stack frames, the stacks not
	// mapped yet, when the table did not adopt them: a chunk is dropped
	// when it has none, so that the table grows as the collector shrinks.
	left []int32
	// buf, ends and hashes hold a batch of table stacks (mapAll), read
	// from collector stacks through frames.
	buf    []uint32
	frames []uint32
	ends   []int
	hashes []uint64
	one    [1]uint32
	// shared is set when the table took the collector's statistics, to
	// fill them again in place (adopt).
	shared bool
	// unnamed says some used frame has no name: a stack passed over
	// (skip) has its unnamed frames told to the namer all the same.
	unnamed bool
	told    []uint32 // skip's table frames, read for what they tell only
	own     []bool   // mapAll's: which of its stacks are allocatorOwn
	// ownTwice says the input counts the allocator's own memory twice
	// (parse.Profile.OwnMemoryTwice): its stacks are left out.
	ownTwice bool
	// ownCells counts the cells left out as the allocator's own memory,
	// and ownStats sums their statistics (one per value).
	ownCells int
	ownStats []ci.Stats
	// keptOwn counts the stacks of the allocator's own memory kept, in an
	// input that does not say whether they count it twice (keptOwnWarning).
	keptOwn int
}

// adopt gives a fresh table (no cell, no stack) the collector's room
// instead of new room: its chunks of stack frames, each stack rewritten
// in place as it is mapped (a table stack is never longer than its
// collector stack), its hash index of stacks and cell keys, cleared, and
// its statistics, each cell's read before the table writes there (add).
// The table holds no more stacks and cells than the collector, and takes
// them in the order of the collector's, so that it writes only where the
// collector has been read. So the table is one copy of the stacks, not
// two, and costs no fresh memory: each page of it touched first costs
// tens of microseconds here. A table that has stacks gets copies, and
// the collector's chunks are dropped as they are mapped instead.
func (m *finisher) adopt(fresh bool) {
	cs, t := m.c.stacks, m.t
	m.c.byStackID, m.c.byFrameID = nil, nil
	if !fresh {
		cs.slots, cs.hashes = slots{}, nil
		m.from = &cs.frames
		m.left = cs.perChunk()
		return
	}
	n := cs.len()
	clear(cs.ids)
	// The collector's hashes are read no more. Its spans are, but table
	// stack j's span is written only once the collector's stacks up to
	// j were mapped, when the stacks are mapped in the order of their
	// first cell, which is the order of their ids. Not so when some are
	// first used by a deferred record or a breakdown cell (--by thread).
	spans := cs.spans[:0]
	if m.c.deferred.len() > 0 || m.c.keys.Thread || m.c.lateCell {
		spans = make([]span, 0, n)
	}
	t.stacks = &stackTable{slots: cs.slots, spans: spans, hashes: cs.hashes[:0]}
	cs.slots, cs.hashes = slots{}, nil
	t.stacks.adopt(cs)
	m.from = &t.stacks.frames
	t.stats, m.c.stats, m.shared = m.c.stats, valueStats{}, true
	cc := m.c.cells
	clear(cc.byStack[:cap(cc.byStack)])
	t.cells = &cellTable{other: newKeyTable[cellKey](16), keys: cc.keys[:0], byStack: cc.byStack[:0]}
	cc.byStack = nil
	// The kept records' cells come after the collector's, and their
	// stacks may be any: when that is more room than the collector's, the
	// table starts with its own instead of growing by copying (megabytes
	// that nothing can preempt: a garbage collection starting meanwhile
	// spins until the copy ends).
	if cells := len(cc.keys) + m.c.deferred.len(); cap(cc.keys) < cells {
		t.cells.keys = make([]cellKey, 0, cells)
	}
	if cap(t.cells.byStack) < n {
		t.cells.byStack = make([]uint32, 0, n)
	}
}

// mapBatch is how many stacks mapStacks maps at a time.
const mapBatch = 16

// mapStacks maps the stacks of the cells and kept records Finish adds to
// table stacks, in the order Finish adds them (so in the order key
// would), mapBatch at a time: the table slots of a batch are loaded
// together before any of its stacks is interned, so that their cache
// misses overlap. One at a time, each stack waited on its own miss, most
// of Finish's time.
func (m *finisher) mapStacks(breakdown bool) {
	used, nUsed := m.usedStacks(breakdown)
	m.t.stacks.room(nUsed)
	// The stacks only records with nothing had (no cell) are passed over
	// first, before the table writes anything.
	for s, bare := range m.c.bare[b2i(breakdown)] {
		if bare && !used[s] {
			m.skip(uint32(s))
		}
	}
	var todo [mapBatch]uint32
	n := 0
	next := func(k cellKey) {
		if k.breakdown != breakdown || m.stackMap[k.stack] != 0 {
			return
		}
		if !used[k.stack] {
			m.skip(k.stack)
			return
		}
		m.stackMap[k.stack] = pending
		todo[n] = k.stack
		if n++; n == mapBatch {
			m.mapAll(todo[:n])
			n = 0
		}
	}
	for _, k := range m.c.cells.keys {
		next(k)
	}
	// Then those of the records kept for their encoding, which Finish
	// adds after the cells.
	m.c.deferred.each(func(d *deferred) { next(d.key) })
	m.mapAll(todo[:n])
}

// pending marks, in stackMap, a stack of mapStacks's batch not mapped
// yet; skipped a stack no cell with statistics has, never mapped;
// allocatorOwn a stack of the allocator's own memory (tableStack), whose
// cells the table leaves out.
const (
	pending      = ^uint32(0)
	skipped      = pending - 1
	allocatorOwn = pending - 2
)

// usedStacks marks the stacks that a cell of the kind Finish adds
// (breakdown or not; every cell has statistics) or a kept record with
// some has. The others, which only records with nothing had, are not
// mapped: in a Go heap profile read for an in-use value, most stacks.
// n is the number of stacks marked.
func (m *finisher) usedStacks(breakdown bool) (used []bool, n int) {
	used = make([]bool, len(m.stackMap)) // one per collector stack
	use := func(s uint32) {
		if !used[s] {
			used[s] = true
			n++
		}
	}
	for _, k := range m.c.cells.keys {
		if k.breakdown == breakdown {
			use(k.stack)
		}
	}
	m.c.deferred.each(func(d *deferred) {
		if d.key.breakdown == breakdown && !m.c.keptNothing(d) {
			use(d.key.stack)
		}
	})
	return used, n
}

// keptNothing reports whether kept record d has nothing for any value the
// collector keeps: zero counts are nothing in any encoding (as in a
// jemalloc dump's stacks with nothing in use).
func (c *Collector) keptNothing(d *deferred) bool {
	nums := c.deferred.numsAt(d.nums)
	for i, v := range c.values {
		n := nums.inUse
		if v.IsAlloc() {
			n = nums.alloc
		}
		if (c.skip == nil || !c.skip[i]) && (n[0] != 0 || n[1] != 0) {
			return false
		}
	}
	return true
}

// skip passes over collector stack s, which no cell with statistics
// has, in the place mapStacks would have mapped it (so that a table
// writing in the collector's room writes only where it was read): the
// namer is told of its unnamed frames as when it is mapped (appendFuncs),
// and its chunk of frames may go.
func (m *finisher) skip(s uint32) {
	m.stackMap[s] = skipped
	sp := m.c.stacks.spans[s]
	if m.unnamed {
		if short, long := m.from.view(sp, &m.frames); long == nil {
			m.told, _ = tableStack(m.c, short, m.info, m.namer, m.told[:0])
		} else {
			m.told, _ = tableStack(m.c, long, m.info, m.namer, m.told[:0])
		}
	}
	m.mapped(sp)
}

// mapped notes that collector stack sp is read no more: when the table
// did not adopt the collector's chunks, one whose stacks are all read
// may go.
func (m *finisher) mapped(sp span) {
	if m.left != nil {
		if m.left[sp.chunk]--; m.left[sp.chunk] == 0 {
			m.from.c[sp.chunk] = nil
		}
	}
}

// mapAll maps collector stacks to table stacks: their table frames and
// hashes first, then the slots their probes start at, then each.
func (m *finisher) mapAll(stacks []uint32) {
	m.buf, m.ends, m.hashes, m.own = m.buf[:0], m.ends[:0], m.hashes[:0], m.own[:0]
	for _, s := range stacks {
		from := len(m.buf)
		var own bool
		if short, long := m.from.view(m.c.stacks.spans[s], &m.frames); long == nil {
			m.buf, own = tableStack(m.c, short, m.info, m.namer, m.buf)
		} else {
			m.buf, own = tableStack(m.c, long, m.info, m.namer, m.buf)
		}
		if own && !m.ownTwice {
			m.keptOwn++
		}
		own = own && m.ownTwice
		if own {
			m.buf = m.buf[:from]
		} else if m.t.hide != nil {
			m.buf = m.buf[:from+len(m.t.dropHidden(m.buf[from:]))]
		}
		m.ends = append(m.ends, len(m.buf))
		m.hashes = append(m.hashes, hashIDs(m.buf[from:]))
		m.own = append(m.own, own)
	}
	m.t.stacks.touch(m.hashes)
	from := 0
	for i, s := range stacks {
		if m.own[i] {
			m.stackMap[s] = allocatorOwn
			m.mapped(m.c.stacks.spans[s])
		} else {
			m.stackMap[s] = m.intern(s, m.buf[from:m.ends[i]], m.hashes[i]) + 1
		}
		from = m.ends[i]
	}
}

// intern interns the table frames ids of collector stack s, of hash h.
func (m *finisher) intern(s uint32, ids []uint32, h uint64) uint32 {
	sp := m.c.stacks.spans[s]
	if m.left == nil {
		return m.t.stacks.internHashed(ids, h, &sp)
	}
	id := m.t.stacks.internHashed(ids, h, nil)
	m.mapped(sp)
	return id
}

// key is the table's key of collector cell key k; ok is false for a cell
// of the allocator's own memory (allocatorOwn), which the table leaves out.
func (m *finisher) key(k cellKey) (_ cellKey, ok bool) {
	if m.stackMap[k.stack] == 0 {
		m.one[0] = k.stack
		m.mapAll(m.one[:])
	}
	if m.stackMap[k.stack] == allocatorOwn {
		return cellKey{}, false
	}
	tk := cellKey{stack: m.stackMap[k.stack] - 1, size: k.size}
	if k.typ != 0 {
		tk.typ = m.t.strs.intern(m.c.strs.names[k.typ])
	}
	if k.thread != 0 {
		tk.thread = m.t.strs.intern(m.c.strs.names[k.thread])
	}
	return tk, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// need marks the frames of a used stack used, as the leaf or as callers,
// and tells namer those that have no name, once per frame and position.
// The callers are read from their own table: this loop runs for every
// frame of every stack.
func need[T word](c *Collector, stack []T, info *[2][]frameInfo, namer Namer, hn handleNamer) {
	if len(stack) == 0 {
		return
	}
	c.needFrame(uint32(stack[0]), &info[1][stack[0]], namer, hn, true)
	callers := info[0]
	for _, id := range stack[1:] {
		if fi := &callers[id]; !fi.done {
			c.needFrame(uint32(id), fi, namer, hn, false)
		}
	}
}

// needFrame marks frame id used in the position fi is for; hn is namer
// when it is a handleNamer.
func (c *Collector) needFrame(id uint32, fi *frameInfo, namer Namer, hn handleNamer, leaf bool) {
	if fi.done {
		return
	}
	fi.done = true
	switch f := c.frame(id); {
	case f.Func != "":
	case hn != nil:
		if h, ok := hn.NeedHandle(f.Addr, leaf); ok {
			fi.fn = h + 1
		}
	default:
		namer.Need(f.Addr, leaf)
	}
}

// eachStack calls f with where every stack a used cell, kept record or
// record with nothing (bare) has is (a stack may come more than once).
func (c *Collector) eachStack(breakdown bool, f func(span)) {
	for s, bare := range c.bare[b2i(breakdown)] {
		if bare {
			f(c.stacks.spans[s])
		}
	}
	for _, k := range c.cells.keys {
		if k.breakdown == breakdown {
			f(c.stacks.spans[k.stack])
		}
	}
	c.deferred.each(func(d *deferred) {
		if d.key.breakdown == breakdown {
			f(c.stacks.spans[d.key.stack])
		}
	})
}

// nameFrames fills info with each needed frame's table function id, and
// reports whether some frame stayed unnamed; hn is namer when it is a
// handleNamer.
// Unnamed frames are keyed after the named ones, once their number is
// known, so that a dump nothing names fills its table without regrowing.
func (c *Collector) nameFrames(t *Table, namer Namer, hn handleNamer, info *[2][]frameInfo) bool {
	type namedFrame struct {
		ref  frameRef
		name string
	}
	// chains are the calls inlined at the named frames that have any
	// (inliner): few frames have them.
	type chain struct {
		ref   frameRef
		names []string
		alloc int
	}
	var chains []chain
	in, _ := namer.(inliner)
	if in != nil && !in.AnyInlined() {
		in = nil
	}
	// The lists are made as large as they may grow: appending to them
	// copied megabytes on a dump of a hundred thousand addresses.
	n := len(c.frameAddrs)
	named, anons := make([]namedFrame, 0, n), make([]frameRef, 0, n)
	// An unnamed frame that is a leaf and a caller is one function, keyed
	// by its address either way: it is looked up once.
	var same []frameRef // leaves whose caller position has their function
	// The collector keeps one frame per address of frames without a
	// name: those, unnamed, are distinct functions.
	distinct := true
	for leaf := range info {
		for id := range info[leaf] {
			fi := &info[leaf][id]
			f := c.frame(uint32(id))
			name := f.Func
			var inl []string
			var inlAlloc int
			if namer != nil {
				if !fi.done {
					continue // no used stack has it here
				}
				var kind parse.FrameKind
				if hn != nil && fi.fn != 0 {
					name, kind = hn.NameHandle(fi.fn - 1)
					if in != nil {
						inl, inlAlloc = in.InlinedHandle(fi.fn - 1)
					}
				} else {
					name, kind = namer.Name(f, leaf == 1)
					if in != nil {
						inl, inlAlloc = in.Inlined(f, leaf == 1)
					}
				}
				fi.kind = kind
			}
			fi.named = name != ""
			ref := frameRef(leaf)<<31 | frameRef(id)
			switch {
			case fi.named:
				named = append(named, namedFrame{ref, name})
				if len(inl) > 0 {
					chains = append(chains, chain{ref, inl, inlAlloc})
				}
			case leaf == 1 && info[0][id].done && !info[0][id].named:
				same = append(same, ref)
			default:
				anons = append(anons, ref)
				distinct = distinct && f.Func == ""
			}
		}
	}
	// Names are interned in the order found, then unnamed functions, as
	// before the map was sized (function ids are in that order).
	t.funcs.reserve(len(named))
	for _, n := range named {
		n.ref.at(info).fn = t.funcs.internShared(n.name) // a namer hands out one string per function
	}
	// The inlined calls' functions after every frame's own, so that ids
	// are as without them where there are none.
	for _, ch := range chains {
		ids := make([]uint32, len(ch.names))
		for i, name := range ch.names {
			ids[i] = t.funcs.internShared(name)
		}
		c.inl = append(c.inl, inlined{ids, ch.alloc})
		leaf := ch.ref >> 31
		if c.inlAt[leaf] == nil {
			c.inlAt[leaf] = make([]uint32, len(info[leaf]))
		}
		c.inlAt[leaf][ch.ref.id()] = uint32(len(c.inl))
	}
	t.nameAnons(namer, info, anons, c.frameAddrs, distinct)
	for _, r := range same {
		info[1][r.id()].fn = info[0][r.id()].fn
	}
	return len(anons) > 0 || len(same) > 0
}

// frameRef is a frame and its position kind (leaf<<31 | id): an index of
// frameInfo, where a pointer would be one more for the garbage collector
// to follow, hundreds of thousands of them on a dump no binary names.
type frameRef uint32

// id is r's frame id.
func (r frameRef) id() uint32 { return uint32(r & (1<<31 - 1)) }

// at returns the frameInfo r refers to.
func (r frameRef) at(info *[2][]frameInfo) *frameInfo { return &info[r>>31][r.id()] }

// tableStack appends the table function ids of a collector stack to buf,
// without its leading allocator frames (always keeping one frame), and
// reports whether one of those is the allocator getting memory for itself
// (parse.AllocatorOwnFrame).
func tableStack[T word](c *Collector, stack []T, info *[2][]frameInfo, namer Namer, buf []uint32) (_ []uint32, own bool) {
	drop, lead := 0, parse.AllocatorLead{}
	for drop < len(stack)-1 {
		k := info[b2i(drop == 0)][stack[drop]].kind
		if !lead.Drop(k) {
			break
		}
		own = own || k == parse.AllocatorOwnFrame
		drop++
	}
	if len(stack) == 0 {
		return buf, own
	}
	if c.inlAt[0] == nil && c.inlAt[1] == nil {
		// Nothing inlined anywhere, as in most profiles: one loop.
		if drop == 0 {
			buf = appendFuncs(c, buf, stack[:1], info[1], nil, namer)
			drop = 1
		}
		return appendFuncs(c, buf, stack[drop:], info[0], nil, namer), own
	}
	// The first frame kept, as the leaf or a caller: the allocator's
	// calls inlined into it go, as its frames went. (A frame with inlined
	// calls is named: appendFuncs would tell the namer nothing of it.)
	leaf := b2i(drop == 0)
	pos, inlAt := info[leaf], c.inlAt[leaf]
	if first := &pos[stack[drop]]; inlAt != nil && inlAt[stack[drop]] != 0 && !lead.Drop(first.kind) {
		in := &c.inl[inlAt[stack[drop]]-1]
		buf = append(buf, in.ids[in.alloc:]...)
		buf = append(buf, first.fn)
	} else {
		buf = appendFuncs(c, buf, stack[drop:drop+1], pos, inlAt, namer)
	}
	return appendFuncs(c, buf, stack[drop+1:], info[0], c.inlAt[0], namer), own
}

// appendFuncs appends the table function ids of frames ids to buf, the
// frames all leaves or all callers, as pos (info[1] or info[0]) says: this
// loop runs for every frame of every stack.
func appendFuncs[T word](c *Collector, buf []uint32, ids []T, pos []frameInfo, inlAt []uint32, namer Namer) []uint32 {
	if inlAt != nil {
		return appendInlined(c, buf, ids, pos, inlAt, namer)
	}
	for _, id := range ids {
		fi := &pos[id]
		if !fi.named && namer != nil && !c.counted[id] {
			c.counted[id] = true // a frame's address is told once
			namer.Unresolved(c.frameAddrs[id])
		}
		buf = append(buf, fi.fn)
	}
	return buf
}

// appendInlined is appendFuncs where some frames have inlined calls
// (inlAt): their functions come before the frame's own. A loop of its own,
// so that the profiles without any pay nothing for them.
func appendInlined[T word](c *Collector, buf []uint32, ids []T, pos []frameInfo, inlAt []uint32, namer Namer) []uint32 {
	for _, id := range ids {
		fi := &pos[id]
		if !fi.named && namer != nil && !c.counted[id] {
			c.counted[id] = true // a frame's address is told once
			namer.Unresolved(c.frameAddrs[id])
		}
		if inlAt[id] != 0 {
			buf = append(buf, c.inl[inlAt[id]-1].ids...)
		}
		buf = append(buf, fi.fn)
	}
	return buf
}

// add merges a cell's statistics (one per value) into t.
func (t *Table) add(k cellKey, st []ci.Stats) {
	id, _ := t.cells.intern(k)
	for i := range st {
		t.stats.add(id, i, &st[i])
	}
}

// reserve makes room for about that many more cells and stacks, so that
// adding them does not regrow the tables many times.
func (t *Table) reserve(cells, stacks int) {
	if t.Len() == 0 && cap(t.cells.keys) < cells {
		t.cells = newCellTable(cells)
	}
	if t.stacks.len() == 0 && len(t.stacks.ids) < 2*stacks {
		t.stacks = newStackTable(stacks)
	}
}

// funcName is function id's name: 0x… for an unnamed frame address.
func (t *Table) funcName(id uint32) string {
	if k, _, ok := t.anon(id); ok {
		return t.anonName(k)
	}
	return t.funcs.names[id]
}

// Len returns the number of cells.
func (t *Table) Len() int { return len(t.cells.keys) }

// stackNames returns a table stack's names, leaf first.
func (t *Table) stackNames(id uint32) []string {
	ids := t.stacks.stack(id, nil)
	out := make([]string, len(ids))
	for i, f := range ids {
		out[i] = t.funcName(f)
	}
	return out
}

// sizeKey names a --by size row.
func sizeKey(size float64) string {
	if size > 0 {
		return strconv.FormatFloat(size, 'f', -1, 64)
	}
	return MixedSize
}

// Total returns the statistics of every cell that passes f, per value.
func (t *Table) Total(f Filter) []ci.Stats {
	keep := t.filterCells(f)
	nv := len(t.values)
	total := make([]ci.Stats, nv)
	row := make([]ci.Stats, nv)
	for id := range t.cells.keys {
		if keep[id] {
			mergeAll(total, t.stats.row(uint32(id), row))
		}
	}
	return total
}

// Correlate widens every cell's statistics for inputs whose samples may
// be correlated, at most k of them with one another (ci.Stats.Correlate).
// It comes after the last Merge: the cells' sums then carry the scaling,
// which commutes with adding them up.
func (t *Table) Correlate(k float64) {
	t.stats.each(func(s *ci.Stats) { s.Correlate(k) })
}

// AllowUnseen lets every cell's bytes (space values) hold up to one
// unseen sample of weight rate (ci.Stats.AllowUnseen), and its count of
// one size one unseen sample at that period (AllowUnseenCount): a table of inputs
// sampled at different periods, whose cells an input of the largest may
// hold without a sample. Statistics the pool shares are of one value
// each (a space value's differ from a count's), so raising them in place
// raises no count's.
func (t *Table) AllowUnseen(rate float64) {
	for v, val := range t.values {
		bytes := val.IsSpace()
		t.stats.eachOf(v, func(s *ci.Stats) { s.AllowUnseenOf(rate, bytes) })
	}
}

// Uncorrelate undoes Correlate(k) on every cell (ci.Stats.Uncorrelate).
func (t *Table) Uncorrelate(k float64) {
	t.stats.each(func(s *ci.Stats) { s.Uncorrelate(k) })
}

// Merge adds o's cells (same values and keys) into t. o is unchanged.
func (t *Table) Merge(o *Table) {
	funcs := make([]uint32, len(o.funcs.names))
	for i, n := range o.funcs.names {
		if k, f, ok := o.anon(uint32(i)); ok {
			funcs[i] = t.mergeAnon(o, k, f)
		} else {
			funcs[i] = t.funcs.intern(n)
		}
	}
	strs := make([]uint32, len(o.strs.names))
	for i, n := range o.strs.names {
		strs[i] = t.strs.intern(n)
	}
	stacks := make([]uint32, o.stacks.len())
	var buf []uint32
	for s := range stacks {
		buf = o.stacks.stack(uint32(s), buf)
		for i, f := range buf {
			buf[i] = funcs[f]
		}
		stacks[s] = t.stacks.intern(buf)
	}
	row := make([]ci.Stats, len(t.values))
	for id, k := range o.cells.keys {
		k.stack, k.typ, k.thread = stacks[k.stack], strs[k.typ], strs[k.thread]
		t.add(k, o.stats.row(uint32(id), row))
	}
}
