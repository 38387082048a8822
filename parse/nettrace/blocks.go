package nettrace

import (
	"bufio"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strings"

	"github.com/heapest/heapest/internal/grow"
	"github.com/heapest/heapest/parse"
)

// kind is what heapest does with an event type.
type kind uint8

const (
	kindIgnore       kind = iota
	kindAllocSampled      // runtime 303
	kindAllocTick         // runtime 10
	kindMethod            // runtime 143, rundown 143/144
	kindModule            // runtime 152, rundown 153/154
	kindCPUSample         // SampleProfiler 0: passed to decoder.onCPU (tests)
)

// meta is one metadata row, reduced to what the reader needs.
type meta struct {
	kind    kind
	version int
	defined bool
}

// header is a decoded event header; compressed headers are deltas from the
// previous one in the same block.
type header struct {
	metaID    uint32
	seq       uint32
	capThread uint64
	proc      uint32
	thread    uint64
	stackID   uint32
	ts        int64
	label     uint32
	payload   uint32
}

// thread is one row of a V6 Thread block.
type thread struct {
	tid, pid uint64
	hasTID   bool
	name     string
}

// decoder holds the state of one trace being read.
type decoder struct {
	name string
	r    *bufio.Reader
	opt  parse.Options
	sink parse.Sink
	off  int64 // file offset of the next unread byte

	small []byte // header scratch
	buf   []byte // block buffer, reused
	cur   cursor

	v6           bool
	major, minor int
	haveTrace    bool
	ptr          int
	syncQPC      int64
	syncUTC      int64 // the trace's start, ns since the Unix epoch (0: none)
	freq         int64
	nsPerTick    uint64 // 1e9/freq when freq divides 1e9, else 0
	pid          int64

	meta    metaTable
	stacks  regionStacks
	threads map[uint64]thread // V6 thread index → thread
	labels  map[uint32]int    // V6 label list → version override

	// Names outlive sequence points and records point at them, so each
	// distinct one is made once.
	types       map[string]typeEntry // UTF-16 type name → it and the name (id unused)
	nullTypes   map[uint64]string    // TypeID → name of a type the runtime calls "NULL"
	typeCache   [typeCacheSize]typeEntry
	threadNames map[uint64]string // OS thread id (V6: index | 1<<63 without one) → name
	thrID       uint64            // the last thread looked up
	thrName     string
	thrValid    bool
	thrUnknown  bool // the last thread has no OS thread id

	rec     parse.Record // reused for every record sent
	records int

	// allStacks numbers the stacks of the whole trace, for
	// Record.StackID, and keeps those of held-back ticks.
	allStacks stackTable
	// ticks are the GCAllocationTick events held back until the first
	// AllocationSampled event (see the package doc).
	ticks     tickList
	tickNames nameIDs

	methods []methodRange
	modules map[uint64]string

	// onCPU, when set (tests), receives the stack of each CPU sample.
	onCPU func(stack []parse.Frame)

	// lastSeq is the last sequence number per capture thread, for
	// dropped-event detection; the current capture thread's is cached
	// outside the map.
	lastSeq  map[uint64]uint32
	seqCur   uint64
	seqVal   uint32
	seqValid bool
	dropped  uint64

	nSampled, nTicks   int
	tickVersions       map[int]int
	badPayload         map[string]int
	firstBadPayload    int64
	unknownMeta        int
	firstUnknownMeta   int64
	unknownStack       int
	evAt               int64 // offset of the event being decoded
	firstUnknownStack  int64
	unknownThread      int
	unknownBlocks      map[string]int
	nMethods, nModules int
	stopped            error // what ended a --keep-going read early
	warnings           []string
}

func newDecoder(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) *decoder {
	return &decoder{
		name: name, r: r, opt: opt, sink: sink,
		meta:          metaTable{sparse: map[uint32]meta{}},
		stacks:        regionStacks{sparse: map[uint32]stackRef{}},
		threads:       map[uint64]thread{},
		labels:        map[uint32]int{},
		types:         map[string]typeEntry{},
		nullTypes:     map[uint64]string{},
		threadNames:   map[uint64]string{},
		allStacks:     newStackTable(),
		tickNames:     nameIDs{ids: map[string]int32{}},
		modules:       map[uint64]string{},
		lastSeq:       map[uint64]uint32{},
		tickVersions:  map[int]int{},
		badPayload:    map[string]int{},
		unknownBlocks: map[string]int{},
	}
}

// ---- metadata ----

// classify maps a provider and event id to what heapest reads from it.
func classify(provider string, id int) kind {
	switch {
	case strings.EqualFold(provider, "Microsoft-Windows-DotNETRuntime"):
		switch id {
		case 303:
			return kindAllocSampled
		case 10:
			return kindAllocTick
		case 143: // MethodLoadVerbose
			return kindMethod
		case 152: // ModuleLoad
			return kindModule
		}
	case strings.EqualFold(provider, "Microsoft-DotNETCore-SampleProfiler"):
		if id == 0 {
			return kindCPUSample
		}
	case strings.EqualFold(provider, "Microsoft-Windows-DotNETRuntimeRundown"):
		switch id {
		case 143, 144: // MethodDCStartVerbose, MethodDCEndVerbose
			return kindMethod
		case 153, 154: // ModuleDCStart, ModuleDCEnd
			return kindModule
		}
	}
	return kindIgnore
}

// metadataV5 reads the payload of one V4/V5 metadata event: id, UTF-16
// provider, event id, UTF-16 name, keywords, version, level. Field
// descriptions and V5 tags follow; nothing heapest needs is in them.
func (d *decoder) metadataV5(p []byte, at int64) error {
	c := cursor{b: p, base: at}
	id := c.u32()
	provider := c.str16()
	eventID := int32(c.u32())
	c.str16() // event name: empty for runtime events
	c.skip(8) // keywords
	version := int32(c.u32())
	if c.bad {
		return c.err(d, "metadata event")
	}
	return d.defineMeta(id, provider, int(eventID), int(version), at)
}

func (d *decoder) defineMeta(id uint32, provider string, eventID, version int, at int64) error {
	if id == 0 {
		return d.errAt(at, nil, "metadata defines id 0, which is reserved")
	}
	if _, dup := d.meta.get(id); dup {
		return d.errAt(at, nil, "metadata id %d defined twice", id)
	}
	d.meta.set(id, meta{kind: classify(provider, eventID), version: version, defined: true})
	return nil
}

// metaTable holds the metadata rows by id: in a slice for the small ids
// writers use (they count from 1), in a map for others, so that the
// lookup of every event is an index.
type metaTable struct {
	dense  []meta
	sparse map[uint32]meta
}

const maxDenseMeta = 1 << 12

func (t *metaTable) get(id uint32) (meta, bool) {
	if id < uint32(len(t.dense)) {
		m := t.dense[id]
		return m, m.defined
	}
	if id < maxDenseMeta {
		return meta{}, false
	}
	m, ok := t.sparse[id]
	return m, ok
}

func (t *metaTable) set(id uint32, m meta) {
	if id >= maxDenseMeta {
		t.sparse[id] = m
		return
	}
	for id >= uint32(len(t.dense)) {
		t.dense = append(t.dense, meta{})
	}
	t.dense[id] = m
}

// reset forgets every row (a V6 sequence point's metadata flush).
func (t *metaTable) reset() {
	t.dense = t.dense[:0]
	clear(t.sparse)
}

// metadataBlockV6 reads a V6 Metadata block: a uint16 header size and the
// header, then rows {uint16 size, varuint id, provider, varuint event id,
// name, field descriptions, optional metadata}.
func (d *decoder) metadataBlockV6(c *cursor) error {
	c.skip(int(c.u16()))
	for !c.bad && c.left() > 0 {
		at := c.off()
		n := int(c.u16())
		row := c.sub(n)
		if c.bad {
			break
		}
		id := row.uvarint32()
		provider := row.str8()
		eventID := row.uvarint32()
		row.str8() // event name
		nf := int(row.u16())
		for i := 0; i < nf && !row.bad; i++ {
			row.skip(int(row.u16()))
		}
		version := 0
		if !row.bad && row.left() > 0 {
			version = optionalVersion(row.sub(int(row.u16())))
		}
		if row.bad {
			return row.err(d, "metadata row")
		}
		if err := d.defineMeta(id, provider, int(eventID), version, at); err != nil {
			return err
		}
	}
	if c.bad {
		return c.err(d, "Metadata block")
	}
	return nil
}

// optionalVersion finds the Version element of V6 optional metadata; an
// unknown element kind ends the scan (its size is not known).
func optionalVersion(c *cursor) int {
	version := 0
	for !c.bad && c.left() > 0 {
		switch c.u8() {
		case 1, 8: // OpCode, Level
			c.skip(1)
		case 3: // Keyword
			c.skip(8)
		case 4, 5: // MessageTemplate, Description
			c.str8()
		case 6: // KeyValue
			c.str8()
			c.str8()
		case 7: // ProviderGuid
			c.skip(16)
		case 9:
			version = int(c.u8())
		default:
			return version
		}
	}
	return version
}

// ---- stacks ----

// stackRef locates a stack of the current sequence-point region in the
// region's frames.
type stackRef struct {
	start, n int32
	// global is the stack's id in decoder.allStacks once an event used
	// it, else -1.
	global int32
	// hash is the hash of the stack's bytes (stackTable.hashIPs).
	hash uint64
}

// regionStacks holds the stacks of the current sequence-point region,
// decoded to frames with addresses only: ids restart after each sequence
// point, so they are dropped there.
type regionStacks struct {
	dense  []stackRef          // ids 1..len(dense)
	sparse map[uint32]stackRef // ids that do not follow on
	frames []parse.Frame
	bytes  int64 // stack bytes read in the region
}

// maxRegionStackBytes bounds the stack bytes of one region, so that its
// frames fit int32 indexes.
const maxRegionStackBytes = 1<<31 - 1

// stackBlock reads {uint32 first id, uint32 count, count × {uint32 size,
// size bytes of IPs}} into the region's frames.
func (d *decoder) stackBlock(c *cursor) error {
	first := c.u32()
	count := c.u32()
	if !c.bad && uint64(count) > uint64(c.left()/4) {
		return d.errAt(c.off()-4, nil, "stack block declares %d stacks in %d bytes", count, c.left())
	}
	rs := &d.stacks
	for i := uint32(0); i < count && !c.bad; i++ {
		at := c.off()
		n := c.u32()
		ips := c.bytes(int(min(n, 1<<31-1)))
		if c.bad {
			break
		}
		if int(n)%d.ptr != 0 {
			return d.errAt(at, nil, "stack %d is %d bytes, not a multiple of the pointer size %d", first+i, n, d.ptr)
		}
		if rs.bytes += int64(len(ips)); rs.bytes > maxRegionStackBytes {
			return d.errAt(at, nil, "more than 2 GiB of stacks in one sequence-point region")
		}
		start := len(rs.frames)
		rs.frames = appendFrames(rs.frames, ips, d.ptr)
		rs.set(first+i, stackRef{start: int32(start), n: int32(len(rs.frames) - start), global: -1, hash: d.allStacks.hashIPs(ips)})
	}
	if c.bad {
		return c.err(d, "stack block")
	}
	if last := int(first) - 1 + int(count); first > 0 && last <= len(rs.dense) && len(rs.sparse) == 0 {
		d.allStacks.findAll(rs.dense[first-1:last], rs.frames)
	}
	return nil
}

// appendFrames appends the frames of a stack's little-endian IPs.
func appendFrames(frames []parse.Frame, ips []byte, ptr int) []parse.Frame {
	n := len(ips) / ptr
	frames = grow.Room(frames, n)
	if ptr == 8 {
		for i := 0; i+8 <= len(ips); i += 8 {
			frames = append(frames, parse.Frame{Addr: binary.LittleEndian.Uint64(ips[i:])})
		}
		return frames
	}
	for i := 0; i+4 <= len(ips); i += 4 {
		frames = append(frames, parse.Frame{Addr: uint64(binary.LittleEndian.Uint32(ips[i:]))})
	}
	return frames
}

func (rs *regionStacks) get(id uint32) (stackRef, bool) {
	if id-1 < uint32(len(rs.dense)) {
		return rs.dense[id-1], true
	}
	ref, ok := rs.sparse[id]
	return ref, ok
}

// set keeps the stacks in a slice while ids come in order from 1, as
// every writer does, and in a map otherwise.
func (rs *regionStacks) set(id uint32, ref stackRef) {
	switch {
	case id-1 < uint32(len(rs.dense)):
		rs.dense[id-1] = ref
	case id-1 == uint32(len(rs.dense)) && len(rs.sparse) == 0:
		rs.dense = append(rs.dense, ref)
	default:
		rs.sparse[id] = ref
	}
}

func (rs *regionStacks) slice(ref stackRef) []parse.Frame {
	end := ref.start + ref.n
	return rs.frames[ref.start:end:end]
}

// reset forgets the region's stacks.
func (rs *regionStacks) reset() {
	rs.dense = rs.dense[:0]
	clear(rs.sparse)
	rs.frames = rs.frames[:0]
	rs.bytes = 0
}

// stack returns the frames of the region's stack id and its id in
// d.allStacks, the same for every region that defines the same stack: nil
// and -1 for id 0, an empty stack, or an id the region does not define
// (counted for a warning). hold keeps the frames for a held-back tick.
func (d *decoder) stack(id uint32, hold bool) ([]parse.Frame, int32) {
	if id == 0 {
		return nil, -1
	}
	ref, ok := d.stacks.get(id)
	if !ok {
		if d.unknownStack == 0 {
			d.firstUnknownStack = d.evAt
		}
		d.unknownStack++
		return nil, -1
	}
	if ref.n == 0 {
		return nil, -1
	}
	frames := d.stacks.slice(ref)
	if ref.global < 0 {
		ref.global, _ = d.allStacks.intern(frames, ref.hash)
		d.stacks.set(id, ref)
	}
	if hold {
		d.allStacks.keep(ref.global, frames)
	}
	return frames, ref.global
}

// stackTable numbers the distinct stacks of the whole trace, once per
// region that uses one. It keeps every stack's addresses, in chunks that
// are never copied, and finds them again through an open-addressing table
// of where they are by a seeded hash of them. (A map keyed by their bytes
// allocated a string per stack, for the garbage collector to scan:
// reading a 10 MB trace, whose 13,800 stacks are looked up 42,800 times,
// took 7% longer.) It keeps the frames of the stacks that held-back ticks
// use.
type stackTable struct {
	// slots hold a tag of a stack's hash in their high 24 bits (never 0)
	// and where the stack is in the low 40 (chunk<<16 | offset: a
	// stack's header is there, its id and length, then its addresses),
	// at most half of them full; 0 is empty. A lookup that finds its
	// stack reads two places in memory, the slot and the stack, each a
	// cache miss in a large trace: the id is in the stack's header, not
	// in a third place.
	slots  []uint64
	stacks []storedStack // per id
	chunks [][]uint64    // headers and addresses; the last one is being filled
	seed   maphash.Seed  // of the hash: random, so a crafted trace cannot make stacks collide
	kept   []stackRef    // per id: its frames in frames, n < 0 when not kept
	frames []parse.Frame
}

// storedStack is where a stack's header is, and its hash.
type storedStack struct {
	hash       uint64
	chunk, off int32
	n          int32
}

// addrs returns the stack's addresses.
func (t *stackTable) addrs(st storedStack) []uint64 {
	return t.chunks[st.chunk][st.off+1 : st.off+1+st.n]
}

// stackChunk is the size of a chunk of addresses (512 KB): a stack
// longer than that has a chunk of its own.
const stackChunk = 1 << 16

func newStackTable() stackTable {
	return stackTable{slots: make([]uint64, 1024), seed: maphash.MakeSeed()}
}

// slotOf is the slot value of a stack of hash h stored at st.
func slotOf(h uint64, st storedStack) uint64 {
	return tagOf(h) | uint64(st.chunk)<<16 | uint64(st.off)
}

// tagOf is the part of a slot that a stack of hash h has in the slot's
// high bits (never 0: 0 is an empty slot).
func tagOf(h uint64) uint64 { return (h>>40 | 1) << 40 }

// at returns the chunk's words from the header of the stack slot s is of.
func (t *stackTable) at(s uint64) []uint64 {
	return t.chunks[s>>16&(1<<24-1)][s&(1<<16-1):]
}

// intern returns the id of a stack whose bytes hash to h (hashIPs),
// and whether it is new.
func (t *stackTable) intern(frames []parse.Frame, h uint64) (int32, bool) {
	tag := tagOf(h)
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return t.add(i, h, frames), true
		}
		if s&^(1<<40-1) != tag {
			continue
		}
		c := t.at(s)
		if hdr := c[0]; int(uint32(hdr)) == len(frames) && sameAddrs(c[1:1+len(frames)], frames) {
			return int32(hdr >> 32), false
		}
	}
}

// findAll gives each of a stack block's stacks (refs, their frames in
// frames) that is in the table its id. Events use nearly every stack of
// the block before them, and each lookup waits on a cache miss or two
// (the slot, the stored stack): made here for the whole block, with every
// slot loaded first, they overlap. A stack not in the table is added when
// an event first uses it (decoder.stack), so that ids follow first use.
func (t *stackTable) findAll(refs []stackRef, frames []parse.Frame) {
	mask := len(t.slots) - 1
	var any uint64
	for i := range refs {
		any |= t.slots[int(refs[i].hash)&mask]
	}
	if any == 0 {
		return // nothing stored yet
	}
	for i := range refs {
		r := &refs[i]
		if r.n > 0 && r.global < 0 {
			r.global = t.find(frames[r.start:r.start+r.n], r.hash)
		}
	}
}

// find returns the id of a stack whose bytes hash to h, or -1 when it is
// not in the table.
func (t *stackTable) find(frames []parse.Frame, h uint64) int32 {
	tag := tagOf(h)
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&^(1<<40-1) != tag {
			continue
		}
		c := t.at(s)
		if hdr := c[0]; int(uint32(hdr)) == len(frames) && sameAddrs(c[1:1+len(frames)], frames) {
			return int32(hdr >> 32)
		}
	}
}

// hashIPs hashes a stack's little-endian IPs as a stack block holds them,
// with the runtime's hash of bytes (AES rounds where the CPU has them:
// hashing the decoded addresses one at a time took a sixth of reading a
// trace). Stacks are the same when their bytes are, as the trace has one
// pointer size.
func (t *stackTable) hashIPs(ips []byte) uint64 { return maphash.Bytes(t.seed, ips) }

// sameAddrs reports whether addrs are the addresses of frames, as long.
func sameAddrs(addrs []uint64, frames []parse.Frame) bool {
	for i, f := range frames {
		if addrs[i] != f.Addr {
			return false
		}
	}
	return true
}

// add gives frames the next id, in slot i, whose hash is h.
func (t *stackTable) add(i int, h uint64, frames []parse.Frame) int32 {
	g := int32(len(t.kept))
	st := t.store(g, frames, h)
	t.slots[i] = slotOf(h, st)
	t.stacks = append(grow.Room(t.stacks, 1), st)
	t.kept = append(grow.Room(t.kept, 1), stackRef{n: -1})
	if 2*len(t.kept) > len(t.slots) {
		t.grow()
	}
	return g
}

// store copies stack g's header and the addresses of frames into the
// chunks.
func (t *stackTable) store(g int32, frames []parse.Frame, h uint64) storedStack {
	n := len(t.chunks)
	if n == 0 || len(t.chunks[n-1])+1+len(frames) > cap(t.chunks[n-1]) {
		if n == 1<<24 {
			// 2^40 bytes of chunks, which no machine holds: slots have
			// room for no more.
			panic("nettrace: too many stack chunks")
		}
		t.chunks = append(t.chunks, make([]uint64, 0, max(stackChunk, 1+len(frames))))
		n++
	}
	c := t.chunks[n-1]
	st := storedStack{hash: h, chunk: int32(n - 1), off: int32(len(c)), n: int32(len(frames))}
	c = append(c, uint64(g)<<32|uint64(len(frames)))
	t.chunks[n-1] = appendAddrs(c, frames)
	return st
}

func appendAddrs(c []uint64, frames []parse.Frame) []uint64 {
	for _, f := range frames {
		c = append(c, f.Addr)
	}
	return c
}

// distinct returns the set of the addresses of every stack, each with
// whether it was first seen as a leaf (at the top of a stack), stacks
// taken in the order they were first used: the symbolized count's.
// Taking them from the chunks at the end, when their number is known,
// spares the set's buffer its growth.
func (t *stackTable) distinct() addrs {
	n := 0
	for _, c := range t.chunks {
		n += len(c)
	}
	n -= len(t.stacks) // less the headers
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, st := range t.stacks {
		for _, addr := range t.addrs(st) {
			lo, hi = min(lo, addr), max(hi, addr)
		}
	}
	if n > 0 && hi-lo < 1<<31 {
		return fillAddrs(t, newAddrSet[uint32](n, lo))
	}
	return fillAddrs(t, newAddrSet[uint64](n, 0))
}

// fillAddrs adds the addresses of every stack of t to s.
func fillAddrs[T uint32 | uint64](t *stackTable, s *addrSet[T]) *addrSet[T] {
	for _, st := range t.stacks {
		for i, addr := range t.addrs(st) {
			s.add(addr, i == 0)
		}
	}
	return s
}

// grow doubles the slots.
func (t *stackTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := len(t.slots) - 1
	for _, st := range t.stacks {
		i := int(st.hash) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = slotOf(st.hash, st)
	}
}

// keep keeps the frames of stack g.
func (t *stackTable) keep(g int32, frames []parse.Frame) {
	if t.kept[g].n < 0 {
		t.kept[g] = stackRef{start: int32(len(t.frames)), n: int32(len(frames))}
		t.frames = append(t.frames, frames...)
	}
}

// get returns the kept frames of stack g, nil for -1.
func (t *stackTable) get(g int32) []parse.Frame {
	if g < 0 {
		return nil
	}
	s := t.kept[g]
	end := s.start + s.n
	return t.frames[s.start:end:end]
}

// ---- sequence points ----

// flushRegion forgets the stacks (and V6 label lists) of the region that a
// sequence point closes: their ids restart after it.
func (d *decoder) flushRegion() {
	d.stacks.reset()
	clear(d.labels)
}

// sequencePointV5 reads {int64 timestamp, int32 count, count × {int64
// thread id, int32 sequence number}}.
func (d *decoder) sequencePointV5(c *cursor) error {
	c.skip(8)
	n := c.u32()
	if !c.bad && uint64(n) > uint64(c.left()/12) {
		return d.errAt(c.off()-4, nil, "sequence point declares %d threads in %d bytes", n, c.left())
	}
	for i := uint32(0); i < n && !c.bad; i++ {
		tid := c.u64()
		seq := c.u32()
		d.checkpoint(tid, seq)
	}
	if c.bad {
		return c.err(d, "sequence point")
	}
	d.flushRegion()
	return nil
}

// sequencePointV6 reads {uint64 timestamp, uint32 flags, uint32 count, count
// × {varuint thread index, varuint sequence number}}; flag 1 also flushes
// the thread table, flag 2 the metadata.
func (d *decoder) sequencePointV6(c *cursor) error {
	c.skip(8)
	flags := c.u32()
	n := c.u32()
	if !c.bad && uint64(n) > uint64(c.left()/2) {
		return d.errAt(c.off()-4, nil, "sequence point declares %d threads in %d bytes", n, c.left())
	}
	for i := uint32(0); i < n && !c.bad; i++ {
		idx := c.uvarint()
		seq := c.uvarint32()
		d.checkpoint(idx, seq)
	}
	if c.bad {
		return c.err(d, "sequence point")
	}
	d.flushRegion()
	if flags&1 != 0 {
		clear(d.threads)
		d.thrValid = false
	}
	if flags&2 != 0 {
		d.meta.reset()
	}
	return nil
}

// checkpoint compares a sequence point's lower bound for a capture thread
// with the last sequence number seen from it: a higher bound means that
// thread's events were dropped.
func (d *decoder) checkpoint(thread uint64, seq uint32) {
	d.syncSeq()
	last, ok := d.lastSeq[thread]
	if ok && int32(seq-last) > 0 {
		d.dropped += uint64(seq - last)
	}
	if !ok || int32(seq-last) > 0 {
		d.lastSeq[thread] = seq
	}
}

// ---- V6 threads and label lists ----

// threadBlock reads rows {uint16 size, varuint index, optional elements}.
func (d *decoder) threadBlock(c *cursor) error {
	for !c.bad && c.left() > 0 {
		at := c.off()
		row := c.sub(int(c.u16()))
		if c.bad {
			break
		}
		idx := row.uvarint()
		var t thread
	elems:
		for !row.bad && row.left() > 0 {
			switch row.u8() {
			case 1:
				t.name = row.str8()
			case 2:
				t.pid = row.uvarint()
			case 3:
				t.tid = row.uvarint()
				t.hasTID = true
			case 4:
				row.str8()
				row.str8()
			default:
				break elems // unknown element: its size is unknown, skip the rest of the row
			}
		}
		if row.bad {
			return row.err(d, "thread row")
		}
		if _, dup := d.threads[idx]; dup {
			return d.errAt(at, nil, "thread index %d defined twice", idx)
		}
		d.threads[idx] = t
		d.thrValid = false
	}
	if c.bad {
		return c.err(d, "thread block")
	}
	return nil
}

// removeThreadBlock reads {varuint index, varuint sequence number} pairs.
func (d *decoder) removeThreadBlock(c *cursor) error {
	for !c.bad && c.left() > 0 {
		idx := c.uvarint()
		seq := c.uvarint32()
		if c.bad {
			break
		}
		d.checkpoint(idx, seq)
		delete(d.threads, idx)
		d.thrValid = false
	}
	if c.bad {
		return c.err(d, "remove-thread block")
	}
	return nil
}

// labelListBlock reads {uint32 first index, uint32 count, lists of labels}.
// Only a Version label matters here (it overrides the metadata's version).
func (d *decoder) labelListBlock(c *cursor) error {
	first := c.u32()
	count := c.u32()
	if !c.bad && uint64(count) > uint64(c.left()) {
		return d.errAt(c.off()-4, nil, "label list block declares %d lists in %d bytes", count, c.left())
	}
	for i := uint32(0); i < count && !c.bad; i++ {
		version := -1
		for !c.bad {
			at := c.off()
			kind := c.u8()
			switch kind & 0x7F {
			case 1, 2, 3: // ActivityId, RelatedActivityId, TraceId
				c.skip(16)
			case 4, 8: // SpanId, Keywords
				c.skip(8)
			case 5:
				c.str8()
				c.str8()
			case 6:
				c.str8()
				c.uvarint()
			case 7, 9: // OpCode, Level
				c.skip(1)
			case 10:
				version = int(c.u8())
			default:
				if !c.bad {
					return d.errAt(at, nil, "unknown label kind %d", kind&0x7F)
				}
			}
			if kind&0x80 != 0 {
				break
			}
		}
		d.labels[first+i] = version
	}
	if c.bad {
		return c.err(d, "label list block")
	}
	return nil
}
