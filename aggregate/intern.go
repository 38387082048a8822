package aggregate

import (
	"math/bits"
	"slices"
	"unsafe"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/grow"
	hashmix "github.com/heapest/heapest/internal/mix"
	"github.com/heapest/heapest/parse"
)

// Interning: every distinct frame, stack and cell gets a dense integer id
// once, and everything after works on slices indexed by id. The tables are
// open-addressing hash tables of ids whose keys live in flat slices without
// pointers, so a dump with a million stacks costs the garbage collector
// nothing to scan and a lookup one or two cache misses.

// mix is mix.Finish: linear probing stays short on addresses and ids,
// which are far from random in their low bits.
func mix(x uint64) uint64 { return hashmix.Finish(x) }

// slots is the probe array of a table: per slot, 0 for empty, else the
// entry's id+1 in the low 32 bits and its hash's high 32 bits (a tag)
// above them, so that a probe passes over other entries without reading
// their keys: in a table larger than the cache, each read of a key is a
// miss.
type slots struct {
	ids  []uint64
	mask uint64
	sink uint64 // what touch read, kept so that its loads are not dropped
}

func newSlots(hint int) slots {
	// The next power of two with room for hint entries at three
	// quarters full: eight slots share a cache line and their tags spare
	// reading keys, so a longer probe costs little, where a table twice
	// as large costs its pages (a large part of reading a big input on
	// this project's machines).
	n := 1 << max(4, bits.Len(uint(hint*4/3)))
	return slots{ids: make([]uint64, n), mask: uint64(n - 1)}
}

// slot is the slot value of entry id with hash h.
func slot(id uint32, h uint64) uint64 { return h>>32<<32 | uint64(id+1) }

// tagged reports whether slot e may hold an entry of hash h, and which.
func tagged(e, h uint64) (id uint32, ok bool) { return uint32(e) - 1, e>>32 == h>>32 }

// place puts entry id of hash h in the first free slot of its probe.
func (s *slots) place(id uint32, h uint64) {
	i := h & s.mask
	for s.ids[i] != 0 {
		i = (i + 1) & s.mask
	}
	s.ids[i] = slot(id, h)
}

// touch reads the first slot of hash h's probe, so that a batch of
// lookups can have their cache misses together (see addrTable.hashes).
func (s *slots) touch(h uint64) { s.sink += s.ids[h&s.mask] }

// prefault writes one element of each page of s, just made, once. Code
// that reads an element before it writes it (a probe, a "seen yet?"
// test) makes a page the kernel has not given yet map the zero page,
// and the write then faults again: two faults a page instead of one. For
// a slice about to be used densely (every page gets written anyway).
func prefault[E any](s []E) {
	var zero E
	step := max(1, pageSize/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
}

// pageSize is the size of a page of memory.
const pageSize = 4096

// pages is about how many pages of memory s takes.
func pages[E any](s []E) int {
	var zero E
	return len(s) * int(unsafe.Sizeof(zero)) / pageSize
}

// prefault prefaults a probe array about to be filled (at least three
// eighths full: every page gets entries).
func (s *slots) prefault() { prefault(s.ids) }

// full reports whether n entries need a bigger table (load factor 3/4).
func (s *slots) full(n int) bool { return 4*n >= 3*len(s.ids) }

// frameKey identifies a frame as a parser gave it. Func is compared by the
// address and length of its bytes, not by content: Go strings are
// immutable, and a parser hands out the same string for the same name
// (its string table), so equal names almost always share their bytes; two
// copies of one name become two frames here that are joined again when
// names are interned (Table), which is correct, only slower.
type frameKey struct {
	addr uint64
	fn   uintptr
	n    int
}

func (k frameKey) hash() uint64 { return mix(k.addr ^ mix(uint64(k.fn)^uint64(k.n)<<48)) }

// addrTable maps the addresses of frames without names to frame ids: the
// frames of a jemalloc dump, millions of lookups of some ten thousand
// addresses. A slot holds its address beside its id, so that a lookup
// reads one cache line where a keyTable reads two (its slots and keys
// outgrow the cache).
type addrTable struct {
	slots []addrSlot
	mask  uint64
	n     int
	sink  uint32 // what hashes read, kept so that its loads are not dropped
	// written says each page of slots was written: hashes reads slots
	// before put writes them, and a page read first is mapped twice,
	// once to read zeros and again to write. A table no address goes in
	// (a profile whose frames have names) is never written.
	written bool
}

// addrSlot is one entry: id+1 (0: empty) and its address.
type addrSlot struct {
	addr uint64
	id   uint32
}

// newAddrTable returns a table with room for hint addresses. It is
// filled to three quarters before it grows: four slots share a cache
// line, so a longer probe costs little, and a smaller table is fewer
// pages to fault in, on this project's machines a large part of reading
// a dump of a hundred thousand addresses.
func newAddrTable(hint int) addrTable {
	n := 1 << max(4, bits.Len(uint(hint*4/3))) // the next power of two
	return addrTable{slots: make([]addrSlot, n), mask: uint64(n - 1)}
}

// find returns addr's id, or false when addr is not in the table yet; h
// is mix(addr).
func (t *addrTable) find(addr, h uint64) (uint32, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.id == 0 {
			return 0, false
		}
		if e.addr == addr {
			return e.id - 1, true
		}
	}
}

// hashes appends to hs the hash (mix) of each unnamed frame's address of
// stack, 0 for a named frame, for find and put, and reads the first slot
// of each probe, so that their cache misses overlap before the lookups,
// which each wait on theirs, begin.
func (t *addrTable) hashes(stack []parse.Frame, hs []uint64) []uint64 {
	if !t.written {
		prefault(t.slots)
		t.written = true
	}
	var x uint32
	for i := range stack {
		h := uint64(0)
		if stack[i].Func == "" {
			h = mix(stack[i].Addr)
			x += t.slots[h&t.mask].id
		}
		hs = append(hs, h)
	}
	t.sink += x
	return hs
}

// put adds addr, not in the table, with id; h is mix(addr).
func (t *addrTable) put(addr, h uint64, id uint32) {
	if 4*(t.n+1) >= 3*len(t.slots) {
		old, n := t.slots, t.n
		*t = newAddrTable(len(old)) // twice as large
		t.n, t.written = n, true
		prefault(t.slots) // filled to three eighths at once
		for _, e := range old {
			if e.id != 0 {
				t.place(e, mix(e.addr))
			}
		}
	}
	t.place(addrSlot{addr, id + 1}, h)
	t.n++
}

func (t *addrTable) place(e addrSlot, h uint64) {
	i := h & t.mask
	for t.slots[i].id != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = e
}

// stackTable interns stacks: sequences of frame ids, leaf first.
type stackTable struct {
	slots
	placed int // stacks in slots (not stored by add)
	frames frameStore
	spans  []span
	hashes []uint64
}

func newStackTable(hint int) *stackTable {
	return &stackTable{slots: newSlots(hint), spans: make([]span, 0, hint), hashes: make([]uint64, 0, hint)}
}

// len is the number of distinct stacks.
func (t *stackTable) len() int { return len(t.hashes) }

// stack returns stack id's frames, in buf's room.
func (t *stackTable) stack(id uint32, buf []uint32) []uint32 {
	return t.frames.get(t.spans[id], buf[:0])
}

// leaf returns stack id's first frame, if it has one.
func (t *stackTable) leaf(id uint32) (uint32, bool) { return t.frames.first(t.spans[id]) }

// perChunk counts the stacks whose frames lie in each chunk.
func (t *stackTable) perChunk() []int32 {
	n := make([]int32, len(t.frames.c))
	for _, sp := range t.spans {
		n[sp.chunk]++
	}
	return n
}

// hashIDs hashes a stack: two lanes of two ids a step, so that the chain
// of multiplies a long stack waits on is a quarter of its length.
func hashIDs(ids []uint32) uint64 {
	a, b := uint64(len(ids))*0x9e3779b97f4a7c15, uint64(0x6a09e667f3bcc909)
	i := 0
	for ; i+4 <= len(ids); i += 4 {
		a = (a ^ (uint64(ids[i]) | uint64(ids[i+1])<<32)) * 0x9e3779b97f4a7c15
		b = (b ^ (uint64(ids[i+2]) | uint64(ids[i+3])<<32)) * 0xc2b2ae3d27d4eb4f
		a ^= a >> 29
		b ^= b >> 31
	}
	for ; i < len(ids); i++ {
		a = (a ^ uint64(ids[i])) * 0x100000001b3
		a ^= a >> 29
	}
	return mix(a ^ bits.RotateLeft64(b, 27))
}

// intern returns the id of stack ids, adding it when new.
func (t *stackTable) intern(ids []uint32) uint32 { return t.internHashed(ids, hashIDs(ids), nil) }

// internHashed is intern for a stack whose hash h is known, storing a new
// stack in the room of span at, when not nil and long enough, instead of
// in new room: at is a stack of chunks t adopted (adopt) that nothing
// reads any more.
func (t *stackTable) internHashed(ids []uint32, h uint64, at *span) uint32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.ids[i]
		if e == 0 {
			id := uint32(len(t.hashes))
			t.ids[i] = slot(id, h)
			t.placed++
			t.hashes = append(grow.Room(t.hashes, 1), h)
			sp, ok := span{}, false
			if at != nil {
				sp, ok = t.frames.putIn(*at, ids)
			}
			if !ok {
				sp = t.frames.put(ids)
			}
			t.spans = append(grow.Room(t.spans, 1), sp)
			if t.full(t.placed) {
				t.grow()
			}
			return id
		}
		if id, ok := tagged(e, h); ok && t.hashes[id] == h && t.frames.equal(t.spans[id], ids) {
			return id
		}
	}
}

// unhashed is the hash noted for a stack stored by add: such stacks are
// never found by intern. (A stack whose real hash is unhashed is then not
// found either: it is interned again as a stack of its own, which costs a
// cell, not a wrong answer, as the table joins stacks by names.)
const unhashed = 0

// add stores stack ids, which the caller knows to be new, without looking
// it up, and returns its id: intern will not find it.
func (t *stackTable) add(ids []uint32) uint32 {
	id := uint32(len(t.hashes))
	t.hashes = append(grow.Room(t.hashes, 1), unhashed)
	t.spans = append(grow.Room(t.spans, 1), t.frames.put(ids))
	return id
}

// touch loads the first slot of the probe of each hash: loads that do
// not wait on each other wait for memory together, where lookups one
// after the other would each wait on their own (a table of a million
// stacks is larger than the cache).
func (t *stackTable) touch(hs []uint64) {
	for _, h := range hs {
		t.slots.touch(h)
	}
}

// adopt makes the chunks of o's frames t's, for internHashed to rewrite o's
// stacks in place: a table finished from one collector then holds its
// stacks in the collector's room instead of a second copy of them. t
// must hold no stack; o must be read no more but for the stacks that are
// yet to be rewritten, each once.
func (t *stackTable) adopt(o *stackTable) {
	t.frames = o.frames
	o.frames = frameStore{}
}

// room makes the probe array large enough for n stacks when none was
// looked up in it yet, so that interning them does not regrow it at every
// doubling: a table that adopted a collector's stacks, which a parser of
// distinct stacks stored without lookup, starts with the smallest one.
func (t *stackTable) room(n int) {
	if t.placed == 0 && t.full(n) {
		t.slots = newSlots(n)
		t.prefault()
	}
}

func (t *stackTable) grow() {
	t.slots = newSlots(t.placed * 2)
	t.prefault()
	for id, h := range t.hashes {
		if h != unhashed {
			t.place(uint32(id), h)
		}
	}
}

// cellKey is what a cell is: the records of one stack with one type,
// thread and size (thread and size only when the grouping needs them).
// (The size comes first: so the key takes 24 bytes, not 32, a cell.)
type cellKey struct {
	// size is the allocation size shared by the cell's samples (0: mixed
	// or not kept).
	size               float64
	stack, typ, thread uint32
	// breakdown separates per-thread breakdown records from the records
	// they break down: only one kind is used, decided at the end.
	breakdown bool
}

func (k cellKey) hash() uint64 {
	h := uint64(k.stack) | uint64(k.typ)<<32
	h = mix(h ^ mix(uint64(k.thread)^bits.RotateLeft64(uint64(int64(k.size)), 17)))
	if k.breakdown {
		h = ^h
	}
	return h
}

// keyTable interns comparable keys with a hash method.
type keyTable[K interface {
	comparable
	hash() uint64
}] struct {
	slots
	keys []K
}

func newKeyTable[K interface {
	comparable
	hash() uint64
}](hint int) *keyTable[K] {
	return &keyTable[K]{slots: newSlots(hint), keys: make([]K, 0, hint)}
}

// intern returns k's id, adding k when new.
func (t *keyTable[K]) intern(k K) (id uint32, added bool) {
	h := k.hash()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.ids[i]
		if e == 0 {
			id := uint32(len(t.keys))
			t.ids[i] = slot(id, h)
			t.keys = append(grow.Room(t.keys, 1), k)
			if t.full(len(t.keys)) {
				t.grow()
			}
			return id, true
		}
		if id, ok := tagged(e, h); ok && t.keys[id] == k {
			return id, false
		}
	}
}

// reserve makes room for n more keys without growing.
func (t *keyTable[K]) reserve(n int) {
	if n += len(t.keys); t.full(n) {
		t.keys = slices.Grow(t.keys, n-len(t.keys))
		t.rehash(n)
	}
}

func (t *keyTable[K]) grow() { t.rehash(len(t.keys)) }

// rehash makes room for twice n keys.
func (t *keyTable[K]) rehash(n int) {
	t.slots = newSlots(n * 2)
	for id, k := range t.keys {
		t.place(uint32(id), k.hash())
	}
}

// strTable interns strings (type and thread names, function names).
type strTable struct {
	ids   map[string]uint32
	names []string
	// byData finds a string by the address and length of its bytes
	// first, as frameKey does: a parser hands out the same string for
	// the same type or thread again and again, and this spares hashing
	// its content each time. byDataID holds the string id per entry.
	byData   *keyTable[strKey]
	byDataID []uint32
	keep     []string // the strings byData's addresses belong to
}

// strKey is a string's bytes: address and length.
type strKey struct {
	p uintptr
	n int
}

func (k strKey) hash() uint64 { return mix(uint64(k.p) ^ uint64(k.n)<<48) }

// internShared is intern for a string a parser may hand out many times:
// looked up by its bytes' address before its content. The table keeps the
// first such string alive, so its address cannot be reused meanwhile.
func (t *strTable) internShared(s string) uint32 {
	if s == "" {
		return 0
	}
	if t.byData == nil {
		t.byData = newKeyTable[strKey](64)
	}
	k := strKey{p: uintptr(unsafe.Pointer(unsafe.StringData(s))), n: len(s)}
	e, added := t.byData.intern(k)
	if !added {
		return t.byDataID[e]
	}
	id := t.intern(s)
	t.byDataID = append(t.byDataID, id)
	t.keep = append(t.keep, s)
	return id
}

func newStrTable() *strTable {
	t := &strTable{ids: map[string]uint32{}}
	t.intern("") // id 0 is "none"
	return t
}

// reserve sizes an empty table's map for about n strings: a map that
// grows to tens of thousands of function names rehashes them all many
// times over.
func (t *strTable) reserve(n int) {
	if len(t.names) > 1 || len(t.ids) > 1 {
		return
	}
	t.ids = make(map[string]uint32, n)
	t.ids[""] = 0
}

func (t *strTable) intern(s string) uint32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := uint32(len(t.names))
	t.ids[s] = id
	t.names = append(t.names, s)
	return id
}

// cellTable interns cell keys. Most cells of a dump are a stack alone (no
// type, thread or size): those are found by stack id in a slice, without
// hashing; the others go through a hash table.
type cellTable struct {
	byStack   []uint32 // stack id -> cell id+1, for bare-stack keys
	other     *keyTable[cellKey]
	otherCell []uint32 // other's id -> cell id
	keys      []cellKey
}

func newCellTable(hint int) *cellTable {
	return &cellTable{other: newKeyTable[cellKey](16), keys: make([]cellKey, 0, hint), byStack: make([]uint32, 0, hint)}
}

func (k cellKey) bare() bool { return k.typ == 0 && k.thread == 0 && k.size == 0 && !k.breakdown }

// intern returns k's cell id, adding it when new.
func (t *cellTable) intern(k cellKey) (id uint32, added bool) {
	if !k.bare() {
		oid, added := t.other.intern(k)
		if !added {
			return t.otherCell[oid], false
		}
		t.otherCell = append(t.otherCell, uint32(len(t.keys)))
		t.keys = append(grow.Room(t.keys, 1), k)
		return uint32(len(t.keys) - 1), true
	}
	if int(k.stack) < len(t.byStack) {
		if c := t.byStack[k.stack]; c != 0 {
			return c - 1, false
		}
	} else {
		n := int(k.stack) + 1
		t.byStack = grow.Room(t.byStack, n-len(t.byStack))[:n]
	}
	t.keys = append(grow.Room(t.keys, 1), k)
	t.byStack[k.stack] = uint32(len(t.keys))
	return uint32(len(t.keys) - 1), true
}

// valueStats holds each cell's statistics, per value, in chunks of
// 1<<statShift cells made only when some cell of the chunk has something
// for the value: a trace's in-use value, or a dump's allocations without
// prof_accum, cost nothing. Within a chunk only the cells that have
// something take room: most cells of a Go heap profile have nothing in
// use (their objects were freed), and a statistics slot for every cell
// cost such a profile hundreds of MB. Growing never copies.
//
// A cell of one contribution (nearly every cell of a dump or a profile:
// a stack comes once) holds statistics that many other cells hold too,
// bit for bit: they depend on the record's sample count and size alone.
// Those are kept once, in a pool (statPool), and the cell refers to them;
// a cell gets statistics of its own (in its chunk's pages) when a second
// contribution merges into it. A 30 MB jemalloc dump's 98,600 cells hold
// 17,700 distinct statistics a value, and a 60 MB Go heap profile's
// 920,000 cells a handful in use: read for every value (pprof and Parquet
// output), their 200-byte statistics took most of 509 MB (Go) and 278 MB
// (a 150 MB dump), every page of it faulted in; 253 and 169 MB now.
type valueStats struct {
	byValue [][]*statChunk // value -> chunk
	pool    statPool
	sink    int64 // what touch read, kept so that its loads are not dropped
}

const (
	statShift = 12 // 4096 cells a chunk
	statPage  = 64 // statistics a page (12.8 KB)
)

// statChunk is the statistics of one chunk's cells that have any: at is
// per cell 0 (none), i<<1 for the i-th (from 1) of the chunk's own
// statistics, or p<<1|1 for entry p of the pool.
type statChunk struct {
	at    [1 << statShift]uint32
	pages [][]ci.Stats // statPage each
	n     int
}

func newValueStats(nv int) valueStats { return valueStats{byValue: make([][]*statChunk, nv)} }

// add merges s into cell's statistics of value v.
func (vs *valueStats) add(cell uint32, v int, s *ci.Stats) { vs.addPooled(cell, v, s, nil) }

// addPooled is add, told where s is in the pool when pid is not nil: *pid
// is its entry (0: not known yet, and then set when the pool takes s).
func (vs *valueStats) addPooled(cell uint32, v int, s *ci.Stats, pid *uint32) {
	if s.N == 0 {
		return
	}
	ch := int(cell >> statShift)
	chunks := vs.byValue[v]
	for len(chunks) <= ch {
		chunks = append(chunks, nil)
	}
	if chunks[ch] == nil {
		chunks[ch] = new(statChunk)
	}
	vs.byValue[v] = chunks
	c, off := chunks[ch], cell&(1<<statShift-1)
	switch e := c.at[off]; {
	case e == 0:
		if pid != nil && *pid != 0 {
			c.at[off] = *pid<<1 | 1
			return
		}
		if p, ok := vs.pool.intern(s); ok {
			c.at[off] = p<<1 | 1
			if pid != nil {
				*pid = p
			}
			return
		}
		// Merging into new statistics copies s; written without reading
		// them first, as merging would: a page the kernel has not given
		// yet is then faulted in once, not read as the zero page and
		// faulted again to be written.
		*c.own(off) = *s
	case e&1 != 0:
		st := c.own(off)
		*st = *vs.pool.get(e >> 1)
		st.Merge(s)
	default:
		c.page(e >> 1).Merge(s)
	}
}

// own makes cell off of c statistics of its own, and returns them.
func (c *statChunk) own(off uint32) *ci.Stats {
	if c.n%statPage == 0 {
		c.pages = append(c.pages, make([]ci.Stats, statPage))
	}
	c.n++
	c.at[off] = uint32(c.n) << 1
	return c.page(uint32(c.n))
}

// page returns c's own statistics i (from 1).
func (c *statChunk) page(i uint32) *ci.Stats {
	i--
	return &c.pages[i/statPage][i%statPage]
}

// find returns cell's statistics of value v, nil when it has none. They
// may be shared with other cells: they are read, never written.
func (vs *valueStats) find(cell uint32, v int) *ci.Stats {
	ch, chunks := int(cell>>statShift), vs.byValue[v]
	if ch >= len(chunks) || chunks[ch] == nil {
		return nil
	}
	switch e := chunks[ch].at[cell&(1<<statShift-1)]; {
	case e == 0:
		return nil
	case e&1 != 0:
		return vs.pool.get(e >> 1)
	default:
		return chunks[ch].page(e >> 1)
	}
}

// get returns cell's statistics of value v.
func (vs *valueStats) get(cell uint32, v int) ci.Stats {
	if st := vs.find(cell, v); st != nil {
		return *st
	}
	return ci.Stats{}
}

// reset empties cell's statistics, for the cell to be filled again.
func (vs *valueStats) reset(cell uint32) {
	ch, off := int(cell>>statShift), cell&(1<<statShift-1)
	for _, chunks := range vs.byValue {
		if ch >= len(chunks) || chunks[ch] == nil {
			continue
		}
		c := chunks[ch]
		switch e := c.at[off]; {
		case e&1 != 0:
			c.at[off] = 0 // the pool's statistics are others' too
		case e != 0:
			*c.page(e >> 1) = ci.Stats{}
		}
	}
}

// some reports whether cell has something (N > 0) for some value: a
// cell may hold emptied statistics (reset).
func (vs *valueStats) some(cell uint32) bool {
	for v := range vs.byValue {
		if st := vs.find(cell, v); st != nil && st.N > 0 {
			return true
		}
	}
	return false
}

// release drops the chunk of statistics that ends with cell, when it
// does: cells read in order need a chunk no more once past it.
func (vs *valueStats) release(cell uint32) {
	if (cell+1)&(1<<statShift-1) != 0 {
		return
	}
	ch := int(cell >> statShift)
	for _, chunks := range vs.byValue {
		if ch < len(chunks) {
			chunks[ch] = nil
		}
	}
}

// each calls fn once on every statistics vs holds, the pool's included
// (each of those once, however many cells share it).
func (vs *valueStats) each(fn func(*ci.Stats)) {
	for _, chunks := range vs.byValue {
		for _, c := range chunks {
			if c != nil {
				for i := 1; i <= c.n; i++ {
					fn(c.page(uint32(i)))
				}
			}
		}
	}
	for i := 1; i <= vs.pool.n; i++ {
		fn(vs.pool.get(uint32(i)))
	}
}

// eachOf calls fn with every statistics of value v: the cells' own, and
// the pool's entries its cells use, once each.
func (vs *valueStats) eachOf(v int, fn func(*ci.Stats)) {
	var pooled map[uint32]bool
	for _, c := range vs.byValue[v] {
		if c == nil {
			continue
		}
		for i := 1; i <= c.n; i++ {
			fn(c.page(uint32(i)))
		}
		for _, e := range c.at {
			if e&1 != 0 && !pooled[e>>1] {
				if pooled == nil {
					pooled = map[uint32]bool{}
				}
				pooled[e>>1] = true
				fn(vs.pool.get(e >> 1))
			}
		}
	}
}

// touch reads the first and last words of the statistics of cells start
// to end that keep says are read, so that their cache misses overlap
// (see grouper.eachCell).
func (vs *valueStats) touch(start, end int, keep []bool) {
	var x int64
	for v := range vs.byValue {
		for id := start; id < end; id++ {
			if keep[id] {
				if st := vs.find(uint32(id), v); st != nil {
					x += st.N + int64(st.LargeMissedValue)
				}
			}
		}
	}
	vs.sink += x
}

// row fills buf (one per value) with cell's statistics.
func (vs *valueStats) row(cell uint32, buf []ci.Stats) []ci.Stats {
	for v := range vs.byValue {
		if st := vs.find(cell, v); st != nil {
			buf[v] = *st
		} else {
			buf[v] = ci.Stats{}
		}
	}
	return buf
}

// statPool keeps distinct statistics once, found by their bits. It stops
// taking more when they turn out not to repeat (a trace's first events of
// each stack, all of their own sizes), or when it is full: cells then get
// statistics of their own, as they would without it.
type statPool struct {
	slots
	pages      [][]ci.Stats // statPage each
	n          int
	tries, hit int
	judged     bool // after poolProbation tries
	off        bool
}

const (
	// poolProbation is how many statistics the pool is offered before it
	// judges whether they repeat: it goes on when a quarter of them were
	// there already. (A dump's first 16,000 were too few: its distinct
	// statistics come early.)
	poolProbation = 1 << 16
	// poolMax is the most distinct statistics the pool holds.
	poolMax = 1 << 22
)

// intern returns the pool entry of statistics s, added when new, or false
// when the pool takes no more.
func (p *statPool) intern(s *ci.Stats) (uint32, bool) {
	if p.off {
		return 0, false
	}
	if p.ids == nil {
		p.slots = newSlots(1024)
	}
	p.tries++
	if !p.judged && p.tries > poolProbation {
		p.judged = true
		if p.off = 4*p.hit < poolProbation; p.off {
			return 0, false
		}
	}
	h := statsHash(s)
	for i := h & p.mask; ; i = (i + 1) & p.mask {
		e := p.ids[i]
		if e == 0 {
			break
		}
		if id, ok := tagged(e, h); ok && p.get(id+1).SameBits(s) {
			p.hit++
			return id + 1, true
		}
	}
	if p.n == poolMax {
		p.off = true
		return 0, false
	}
	if p.n%statPage == 0 {
		p.pages = append(p.pages, make([]ci.Stats, statPage))
	}
	p.n++
	*p.get(uint32(p.n)) = *s
	p.place(uint32(p.n-1), h)
	if p.full(p.n) {
		p.rehash()
	}
	return uint32(p.n), true
}

// get returns entry i (from 1).
func (p *statPool) get(i uint32) *ci.Stats {
	i--
	return &p.pages[i/statPage][i%statPage]
}

// rehash makes room for twice the entries.
func (p *statPool) rehash() {
	p.slots = newSlots(2 * p.n)
	for i := 1; i <= p.n; i++ {
		p.place(uint32(i-1), statsHash(p.get(uint32(i))))
	}
}

// statsHash hashes the bits of s's first four words (N, Estimate, Var and
// Samples), which nearly always tell statistics apart; intern compares
// all of them.
func statsHash(s *ci.Stats) uint64 {
	w := (*[4]uint64)(unsafe.Pointer(s))
	return mix(mix(mix(w[0]^w[1])^w[2]) ^ w[3])
}

// chunked is an append-only store in chunks of fixed size: growing it
// never copies what it holds, and never makes memory it does not fill.
// (Doubling a slab copies it and leaves the old copy to the collector;
// where a page fault costs tens of microseconds, as on this project's
// machines, that is a large part of the run.)
type chunked[T any] struct {
	c [][]T
	n int // elements stored
}

// chunkLen is the largest length of a chunk: 64 K elements (256 KB of
// uint32); the first is firstChunk long.
const chunkLen, firstChunk = 1 << 16, 1 << 10

// put stores vs contiguously and returns where: chunk and offset.
func (s *chunked[T]) put(vs []T) (chunk, off uint32) {
	chunk, off, room := s.alloc(len(vs))
	copy(room, vs)
	return chunk, off
}

// alloc returns n contiguous elements, to be filled, and where they are:
// chunk and offset.
func (s *chunked[T]) alloc(n int) (chunk, off uint32, room []T) {
	last := len(s.c) - 1
	if last < 0 || cap(s.c[last])-len(s.c[last]) < n {
		// Chunks double from a small one up to chunkLen, so that a
		// small input costs little.
		size := firstChunk
		if last >= 0 {
			size = min(2*cap(s.c[last]), chunkLen)
		}
		s.c = append(s.c, make([]T, 0, max(size, n)))
		last++
	}
	c := s.c[last]
	off = uint32(len(c))
	s.c[last] = c[:len(c)+n]
	s.n += n
	return uint32(last), off, s.c[last][off:]
}
