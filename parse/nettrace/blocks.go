package nettrace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
)

// ntKind is what heapest does with an event type.
type ntKind uint8

const (
	ntIgnore       ntKind = iota
	ntAllocSampled        // runtime 303
	ntAllocTick           // runtime 10
	ntMethod              // runtime 143, rundown 143/144
	ntModule              // runtime 152, rundown 153/154
	ntCPUSample           // SampleProfiler 0: kept only when keepCPU is set (tests)
)

// ntMeta is one metadata row, reduced to what the reader needs.
type ntMeta struct {
	kind    ntKind
	version int
}

// ntStackRef locates a stack of the current sequence-point region in the
// region arena; global is its interned index once an event used it.
type ntStackRef struct {
	start, n int32
	global   int32
}

// ntThread is one row of a V6 Thread block.
type ntThread struct {
	tid, pid uint64
	hasTID   bool
	name     string
}

// ntEvent is one kept allocation event. For AllocationSampled a is the
// object size and b the sampled byte offset; for GCAllocationTick a is the
// allocation amount and b the object size (0 when unknown).
type ntEvent struct {
	time          int64
	a, b          uint64
	typ, thr, stk int32
	tick          bool
}

// ntHeader is a decoded event header; compressed headers are deltas from the
// previous one in the same block.
type ntHeader struct {
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

// ntDecoder holds the state of one trace being read.
type ntDecoder struct {
	name string
	r    *bufio.Reader
	opt  Options
	off  int64 // file offset of the next unread byte

	small []byte // header scratch
	buf   []byte // block buffer, reused
	cur   ntCursor

	v6           bool
	major, minor int
	haveTrace    bool
	ptr          int
	syncQPC      int64
	freq         int64
	pid          int64

	meta    map[uint32]ntMeta
	stacks  map[uint32]ntStackRef // current region, ids that do not fit dense
	dense   []ntStackRef          // current region, ids 1..len(dense)
	arena   []byte                // IP bytes of the current region's stacks
	threads map[uint64]ntThread   // V6 thread index → thread
	labels  map[uint32]int        // V6 label list → version override

	// Interned data that outlives sequence points.
	stackIdx   map[string]int32
	stackIPs   [][]uint64
	threadName map[uint64]int32
	typeNames  map[string]int32

	// events are the kept allocation events in compact form; records are
	// built once, at the end, at their final size.
	events  []ntEvent
	types   []string // interned type names, indexed by ntEvent.typ
	threadS []string // interned thread names, indexed by ntEvent.thread

	// keepCPU makes CPU samples keep their stacks in cpuStacks, so tests
	// can check symbolization against traces without allocation events.
	keepCPU   bool
	cpuStacks []int32

	methods []ntMethodRange
	modules map[uint64]string

	// Sequence numbers per capture thread, for dropped-event detection;
	// the current capture thread's is cached outside the map.
	lastSeq  map[uint64]uint32
	seqCur   uint64
	seqVal   uint32
	seqValid bool
	// The last thread looked up, and its interned name.
	thrID    uint64
	thrIdx   int32
	thrValid bool
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
	warnings           []string
}

func newNtDecoder(name string, r *bufio.Reader, opt Options) *ntDecoder {
	return &ntDecoder{
		name: name, r: r, opt: opt,
		meta:          map[uint32]ntMeta{},
		stacks:        map[uint32]ntStackRef{},
		threads:       map[uint64]ntThread{},
		labels:        map[uint32]int{},
		stackIdx:      map[string]int32{},
		threadName:    map[uint64]int32{},
		typeNames:     map[string]int32{},
		modules:       map[uint64]string{},
		lastSeq:       map[uint64]uint32{},
		tickVersions:  map[int]int{},
		badPayload:    map[string]int{},
		unknownBlocks: map[string]int{},
	}
}

// ---- metadata ----

// ntClassify maps a provider and event id to what heapest reads from it.
func ntClassify(provider string, id int) ntKind {
	switch {
	case strings.EqualFold(provider, "Microsoft-Windows-DotNETRuntime"):
		switch id {
		case 303:
			return ntAllocSampled
		case 10:
			return ntAllocTick
		case 143: // MethodLoadVerbose
			return ntMethod
		case 152: // ModuleLoad
			return ntModule
		}
	case strings.EqualFold(provider, "Microsoft-DotNETCore-SampleProfiler"):
		if id == 0 {
			return ntCPUSample
		}
	case strings.EqualFold(provider, "Microsoft-Windows-DotNETRuntimeRundown"):
		switch id {
		case 143, 144: // MethodDCStartVerbose, MethodDCEndVerbose
			return ntMethod
		case 153, 154: // ModuleDCStart, ModuleDCEnd
			return ntModule
		}
	}
	return ntIgnore
}

// metadataV5 reads the payload of one V4/V5 metadata event: id, UTF-16
// provider, event id, UTF-16 name, keywords, version, level. Field
// descriptions and V5 tags follow; nothing heapest needs is in them.
func (d *ntDecoder) metadataV5(p []byte, at int64) error {
	c := ntCursor{b: p, base: at}
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

func (d *ntDecoder) defineMeta(id uint32, provider string, eventID, version int, at int64) error {
	if id == 0 {
		return d.errAt(at, nil, "metadata defines id 0, which is reserved")
	}
	if _, dup := d.meta[id]; dup {
		return d.errAt(at, nil, "metadata id %d defined twice", id)
	}
	d.meta[id] = ntMeta{kind: ntClassify(provider, eventID), version: version}
	return nil
}

// metadataBlockV6 reads a V6 Metadata block: a uint16 header size and the
// header, then rows {uint16 size, varuint id, provider, varuint event id,
// name, field descriptions, optional metadata}.
func (d *ntDecoder) metadataBlockV6(c *ntCursor) error {
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
			version = ntOptionalVersion(row.sub(int(row.u16())))
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

// ntOptionalVersion finds the Version element of V6 optional metadata; an
// unknown element kind ends the scan (its size is not known).
func ntOptionalVersion(c *ntCursor) int {
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

// stackBlock reads {uint32 first id, uint32 count, count × {uint32 size,
// size bytes of IPs}} into the region arena. Stacks are interned only when
// an event that heapest keeps refers to them.
func (d *ntDecoder) stackBlock(c *ntCursor) error {
	first := c.u32()
	count := c.u32()
	if !c.bad && uint64(count) > uint64(c.left()/4) {
		return d.errAt(c.off()-4, nil, "stack block declares %d stacks in %d bytes", count, c.left())
	}
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
		if len(d.arena)+len(ips) > 1<<31-1 {
			return d.errAt(at, nil, "more than 2 GiB of stacks in one sequence-point region")
		}
		d.setStack(first+i, ntStackRef{start: int32(len(d.arena)), n: int32(len(ips)), global: -1})
		d.arena = append(d.arena, ips...)
	}
	if c.bad {
		return c.err(d, "stack block")
	}
	return nil
}

// internStack returns the global index of the region's stack id, or -1 for
// the empty stack; ok is false when the id is not defined in this region.
func (d *ntDecoder) internStack(id uint32) (int32, bool) {
	if id == 0 {
		return -1, true
	}
	ref, ok := d.stack(id)
	if !ok {
		return -1, false
	}
	if ref.global >= 0 || ref.n == 0 {
		return ref.global, true
	}
	raw := d.arena[ref.start : ref.start+ref.n]
	g, ok := d.stackIdx[string(raw)]
	if !ok {
		ips := make([]uint64, len(raw)/d.ptr)
		for i := range ips {
			if d.ptr == 8 {
				ips[i] = binary.LittleEndian.Uint64(raw[8*i:])
			} else {
				ips[i] = uint64(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		g = int32(len(d.stackIPs))
		d.stackIPs = append(d.stackIPs, ips)
		d.stackIdx[string(raw)] = g
	}
	ref.global = g
	d.setStack(id, ref)
	return g, true
}

// stack and setStack keep the region's stacks in a slice while ids come
// in order from 1, as every writer does, and in a map otherwise.
func (d *ntDecoder) stack(id uint32) (ntStackRef, bool) {
	if id-1 < uint32(len(d.dense)) {
		return d.dense[id-1], true
	}
	ref, ok := d.stacks[id]
	return ref, ok
}

func (d *ntDecoder) setStack(id uint32, ref ntStackRef) {
	switch {
	case id-1 < uint32(len(d.dense)):
		d.dense[id-1] = ref
	case id-1 == uint32(len(d.dense)) && len(d.stacks) == 0:
		d.dense = append(d.dense, ref)
	default:
		d.stacks[id] = ref
	}
}

// ---- sequence points ----

// flushRegion forgets the stacks (and V6 label lists) of the region that a
// sequence point closes: their ids restart after it.
func (d *ntDecoder) flushRegion() {
	clear(d.stacks)
	d.dense = d.dense[:0]
	clear(d.labels)
	d.arena = d.arena[:0]
}

// sequencePointV5 reads {int64 timestamp, int32 count, count × {int64
// thread id, int32 sequence number}}.
func (d *ntDecoder) sequencePointV5(c *ntCursor) error {
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
func (d *ntDecoder) sequencePointV6(c *ntCursor) error {
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
	}
	if flags&2 != 0 {
		clear(d.meta)
	}
	return nil
}

// checkpoint compares a sequence point's lower bound for a capture thread
// with the last sequence number seen from it: a higher bound means that
// thread's events were dropped.
func (d *ntDecoder) checkpoint(thread uint64, seq uint32) {
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
func (d *ntDecoder) threadBlock(c *ntCursor) error {
	for !c.bad && c.left() > 0 {
		at := c.off()
		row := c.sub(int(c.u16()))
		if c.bad {
			break
		}
		idx := row.uvarint()
		var t ntThread
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
	}
	if c.bad {
		return c.err(d, "thread block")
	}
	return nil
}

// removeThreadBlock reads {varuint index, varuint sequence number} pairs.
func (d *ntDecoder) removeThreadBlock(c *ntCursor) error {
	for !c.bad && c.left() > 0 {
		idx := c.uvarint()
		seq := c.uvarint32()
		if c.bad {
			break
		}
		d.checkpoint(idx, seq)
		delete(d.threads, idx)
	}
	if c.bad {
		return c.err(d, "remove-thread block")
	}
	return nil
}

// labelListBlock reads {uint32 first index, uint32 count, lists of labels}.
// Only a Version label matters here (it overrides the metadata's version).
func (d *ntDecoder) labelListBlock(c *ntCursor) error {
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

// ---- cursor over one block in memory ----

// ntCursor reads little-endian values from bytes held in memory. A read past
// the end sets bad and returns zeros, so decoding code checks bad once per
// unit and never acts on a value read after the failure.
type ntCursor struct {
	b    []byte
	pos  int
	base int64 // file offset of b[0]
	bad  bool
	why  string
	at   int
}

func (c *ntCursor) fail(why string) {
	if !c.bad {
		c.bad, c.why, c.at = true, why, c.pos
	}
}

func (c *ntCursor) need(n int) bool {
	if c.bad {
		return false
	}
	if n < 0 || len(c.b)-c.pos < n {
		c.fail(fmt.Sprintf("needs %d bytes, %d remain", n, len(c.b)-c.pos))
		return false
	}
	return true
}

func (c *ntCursor) left() int   { return len(c.b) - c.pos }
func (c *ntCursor) off() int64  { return c.base + int64(c.pos) }
func (c *ntCursor) skip(n int)  { c.bytes(n) }
func (c *ntCursor) u8() byte    { return c.fixed(1)[0] }
func (c *ntCursor) u16() uint16 { return binary.LittleEndian.Uint16(c.fixed(2)) }
func (c *ntCursor) u32() uint32 { return binary.LittleEndian.Uint32(c.fixed(4)) }
func (c *ntCursor) u64() uint64 { return binary.LittleEndian.Uint64(c.fixed(8)) }

var ntZeros [16]byte

// fixed returns n ≤ 16 bytes, or zeros after a failure.
func (c *ntCursor) fixed(n int) []byte {
	if !c.need(n) {
		return ntZeros[:n]
	}
	c.pos += n
	return c.b[c.pos-n : c.pos]
}

func (c *ntCursor) bytes(n int) []byte {
	if !c.need(n) {
		return nil
	}
	c.pos += n
	return c.b[c.pos-n : c.pos]
}

// sub returns a cursor over the next n bytes and moves past them.
func (c *ntCursor) sub(n int) *ntCursor {
	base := c.off()
	b := c.bytes(n)
	s := &ntCursor{b: b, base: base}
	if c.bad {
		s.bad, s.why = true, c.why
	}
	return s
}

func (c *ntCursor) uvarint() uint64 {
	if c.bad {
		return 0
	}
	if c.pos < len(c.b) && c.b[c.pos] < 0x80 {
		c.pos++
		return uint64(c.b[c.pos-1])
	}
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 {
		if n == 0 {
			c.fail("variable-length integer runs past the end")
		} else {
			c.fail("variable-length integer overflows 64 bits")
		}
		return 0
	}
	c.pos += n
	return v
}

func (c *ntCursor) uvarint32() uint32 {
	v := c.uvarint()
	if v > 1<<32-1 {
		c.pos-- // point into the integer
		c.fail(fmt.Sprintf("variable-length integer %d does not fit 32 bits", v))
		return 0
	}
	return uint32(v)
}

// str8 reads a varuint-length-prefixed UTF-8 string (V6).
func (c *ntCursor) str8() string {
	n := c.uvarint()
	if n > uint64(c.left()) {
		c.fail(fmt.Sprintf("string of %d bytes, %d remain", n, c.left()))
		return ""
	}
	return string(c.bytes(int(n)))
}

// str16 reads a NUL-terminated UTF-16LE string (V4/V5 metadata, payloads).
func (c *ntCursor) str16() string {
	raw, ok := ntUTF16z(c.b[min(c.pos, len(c.b)):])
	if !ok || c.bad {
		c.fail("UTF-16 string without its NUL terminator")
		return ""
	}
	c.pos += len(raw) + 2
	return ntDecodeUTF16(raw)
}

// err turns a failed cursor into a located error.
func (c *ntCursor) err(d *ntDecoder, what string) error {
	return d.errAt(c.base+int64(c.at), nil, "malformed %s: %s", what, c.why)
}

// ntUTF16z returns the code units of a NUL-terminated UTF-16LE string at the
// start of b (without the terminator).
func ntUTF16z(b []byte) ([]byte, bool) {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return b[:i], true
		}
	}
	return nil, false
}

func ntDecodeUTF16(raw []byte) string {
	ascii := true
	for i := 1; i < len(raw); i += 2 {
		if raw[i] != 0 || raw[i-1] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		s := make([]byte, len(raw)/2)
		for i := range s {
			s[i] = raw[2*i]
		}
		return string(s)
	}
	u := make([]uint16, len(raw)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return string(utf16.Decode(u))
}
