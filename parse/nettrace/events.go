package nettrace

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"path"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// eventBlock reads an EventBlock, or a V4/V5 MetadataBlock (the same
// encoding, whose payloads are metadata rows): a header {int16 size, int16
// flags, int64 min and max timestamps, reserved} and then event rows.
func (d *decoder) eventBlock(c *cursor, metadata bool) error {
	what := "event block"
	if metadata {
		what = "metadata block"
	}
	hs := int(c.u16())
	flags := c.u16()
	if !c.bad && hs < 20 {
		return d.errAt(c.base, nil, "%s header size %d: expected at least 20", what, hs)
	}
	c.skip(hs - 4)
	if c.bad {
		return c.err(d, what+" header")
	}
	compressed := flags&1 != 0
	var h header
	for c.left() > 0 {
		at := c.off()
		var p []byte
		if compressed {
			p = d.compressedHeader(c, &h)
		} else {
			p = d.uncompressedHeader(c, &h)
		}
		if c.bad {
			return c.err(d, what+" event")
		}
		pat := c.off() - int64(len(p)) // the payload's file offset
		if !compressed {
			pat = at + fixedHeaderV4
			if d.v6 {
				pat = at + fixedHeaderV6
			}
		}
		if metadata {
			if err := d.metadataV5(p, pat); err != nil {
				return err
			}
			continue
		}
		if err := d.event(&h, p, at, pat); err != nil {
			return err
		}
	}
	return nil
}

// compressedHeader decodes a header-compressed event row (flags byte, then
// the fields its bits say are present, as deltas from the previous row) and
// returns the payload.
func (d *decoder) compressedHeader(c *cursor, h *header) []byte {
	flags := c.u8()
	if flags&1 != 0 {
		h.metaID = c.uvarint32()
	}
	if flags&2 != 0 {
		h.seq += c.uvarint32() + 1
		h.capThread = c.uvarint()
		h.proc = c.uvarint32()
	} else if h.metaID != 0 {
		h.seq++
	}
	if flags&4 != 0 {
		h.thread = c.uvarint()
	}
	if flags&8 != 0 {
		h.stackID = c.uvarint32()
	}
	// Deltas may be negative, written as 64-bit two's complement.
	h.ts += int64(c.uvarint())
	if d.v6 {
		if flags&16 != 0 {
			h.label = c.uvarint32()
		}
	} else {
		if flags&16 != 0 {
			c.skip(16) // ActivityId
		}
		if flags&32 != 0 {
			c.skip(16) // RelatedActivityId
		}
	}
	if flags&128 != 0 {
		h.payload = c.uvarint32()
	}
	return c.bytes(int(min(h.payload, math.MaxInt32)))
}

// Sizes of the fixed-layout event headers, EventSize included.
const (
	fixedHeaderV4 = 4 + 76
	fixedHeaderV6 = 4 + 48
)

// uncompressedHeader decodes a fixed-layout event row. EventSize counts
// everything after itself, including any alignment padding, so the next row
// starts exactly there.
func (d *decoder) uncompressedHeader(c *cursor, h *header) []byte {
	start := c.pos
	size := c.u32()
	meta := c.u32()
	h.metaID = meta & 0x7FFFFFFF // the high bit is the IsSorted flag
	h.seq = c.u32()
	h.thread = c.u64()
	h.capThread = c.u64()
	h.proc = c.u32()
	h.stackID = c.u32()
	h.ts = int64(c.u64())
	if d.v6 {
		h.label = c.u32()
	} else {
		c.skip(32) // ActivityId, RelatedActivityId
	}
	h.payload = c.u32()
	if c.bad {
		return nil
	}
	hdr := c.pos - start - 4
	if uint64(size) < uint64(hdr)+uint64(h.payload) || uint64(size) > uint64(len(c.b)-start-4) {
		c.pos = start
		c.fail(fmt.Sprintf("event size %d does not hold a %d-byte header and a %d-byte payload within the %d bytes left",
			size, hdr, h.payload, len(c.b)-start-4))
		return nil
	}
	p := c.bytes(int(h.payload))
	c.pos = start + 4 + int(size)
	return p
}

// event handles one event row of an EventBlock.
func (d *decoder) event(h *header, p []byte, at, pat int64) error {
	d.evAt = at
	m, ok := d.meta.get(h.metaID)
	if !ok {
		if d.unknownMeta == 0 {
			d.firstUnknownMeta = at
		}
		d.unknownMeta++
		return nil
	}
	d.trackSeq(h)
	var good bool
	switch m.kind {
	case kindIgnore:
		return nil
	case kindAllocSampled:
		good = d.allocSampled(h, p)
	case kindAllocTick:
		good = d.allocTick(h, p, d.version(m, h))
	case kindMethod:
		good = d.method(p)
	case kindModule:
		good = d.module(p)
	case kindCPUSample:
		if d.onCPU != nil {
			frames, _ := d.stack(h.stackID, false)
			d.onCPU(frames)
		}
		good = true
	}
	if !good {
		if len(d.badPayload) == 0 {
			d.firstBadPayload = pat
		}
		d.badPayload[m.kind.String()]++
	}
	return nil
}

// version is the event's version: its metadata's, unless a V6 label list
// overrides it.
func (d *decoder) version(m meta, h *header) int {
	if d.v6 && h.label != 0 {
		if v, ok := d.labels[h.label]; ok && v >= 0 {
			return v
		}
	}
	return m.version
}

// String names the event kind in warnings.
func (k kind) String() string {
	switch k {
	case kindAllocSampled:
		return "AllocationSampled"
	case kindAllocTick:
		return "GCAllocationTick"
	case kindMethod:
		return "method load/rundown"
	case kindModule:
		return "module load/rundown"
	case kindCPUSample:
		return "CPU sample"
	}
	return "other"
}

// trackSeq counts events a capture thread dropped: its sequence numbers
// increase by exactly one per event attempted.
func (d *decoder) trackSeq(h *header) {
	if !d.seqValid || h.capThread != d.seqCur {
		d.syncSeq()
		last, ok := d.lastSeq[h.capThread]
		d.seqCur, d.seqVal, d.seqValid = h.capThread, last, true
		if !ok {
			d.seqVal = h.seq - 1
		}
	}
	if h.seq != d.seqVal+1 && int32(h.seq-d.seqVal) > 0 {
		d.dropped += uint64(h.seq - d.seqVal - 1)
	}
	d.seqVal = h.seq
}

// syncSeq writes the cached capture thread's sequence number back.
func (d *decoder) syncSeq() {
	if d.seqValid {
		d.lastSeq[d.seqCur] = d.seqVal
		d.seqValid = false
	}
}

// ---- payloads ----

// allocSampled decodes AllocationSampled (runtime event 303, version 0):
// AllocationKind u32, ClrInstanceID u16, TypeID ptr, TypeName UTF-16z,
// Address ptr, ObjectSize u64, SampledByteOffset u64. There is no HeapIndex
// field (it was dropped before the event shipped). The event goes to the
// sink at once, with its stack as the region holds it.
func (d *decoder) allocSampled(h *header, p []byte) bool {
	P := d.ptr
	if len(p) < 6+P+2 {
		return false
	}
	typ, n, ok := d.typeAt(p[6+P:], d.pointer(p[6:]))
	if !ok {
		return false
	}
	rest := p[6+P+n:]
	if len(rest) < P+16 {
		return false
	}
	size := binary.LittleEndian.Uint64(rest[P:])
	off := binary.LittleEndian.Uint64(rest[P+8:])
	if size == 0 || off >= size || size > 1<<53 {
		return false
	}
	if d.nSampled++; d.nSampled == 1 {
		d.ticks = tickList{} // the samples describe the same allocations
	}
	// Field by field: assigning a whole Record costs more than the rest
	// of the event.
	r := &d.rec
	var g int32
	r.Stack, g = d.stack(h.stackID, false)
	r.StackID = uint64(g + 1)
	r.Thread = d.thread(h.thread)
	r.Type = typ
	r.Scheme, r.Rate = parse.Geometric, samplingRate // a trial per byte, p = 1/R
	z := float64(size)
	r.InUse = parse.Counts{}
	r.Alloc = parse.Counts{Objects: 1, Bytes: z, Enc: parse.Raw, Samples: 1, Size: z}
	// Approach 2's u: the bytes of the object after the sampled one.
	r.Offset, r.HasOffset = float64(size-off), true
	r.Time = d.nanos(h.ts)
	r.Pre, r.Breakdown = nil, false
	d.send()
	return true
}

func (d *decoder) send() {
	d.records++
	d.sink.Record(&d.rec)
}

// tick is a GCAllocationTick event held back (see the package doc):
// amount is the allocation amount, size the object size (0 when unknown),
// stack an id in decoder.allStacks (-1: none).
type tick struct {
	time               int64
	amount, size       uint64
	typ, thread, stack int32
}

// nameIDs numbers the (interned) names held-back ticks use.
type nameIDs struct {
	ids   map[string]int32
	names []string
}

func (n *nameIDs) id(s string) int32 {
	i, ok := n.ids[s]
	if !ok {
		i = int32(len(n.names))
		n.names = append(n.names, s)
		n.ids[s] = i
	}
	return i
}

// allocTick decodes GCAllocationTick (runtime event 10): AllocationAmount
// u32, AllocationKind u32; v1+ ClrInstanceID u16; v2+ AllocationAmount64
// u64, TypeID ptr, TypeName UTF-16z, HeapIndex u32; v3+ Address ptr; v4+
// ObjectSize u64. Each event stands for the ~100 KB allocated since the
// previous one on its heap: a fixed-stride estimate, not a random sample.
// It is held back while no AllocationSampled event was read, and only
// counted after one was.
func (d *decoder) allocTick(h *header, p []byte, version int) bool {
	P := d.ptr
	if len(p) < 8 {
		return false
	}
	amount := uint64(binary.LittleEndian.Uint32(p))
	var typ string
	var objSize uint64
	if version >= 2 {
		if len(p) < 18+P+2 {
			return false
		}
		amount = binary.LittleEndian.Uint64(p[10:])
		var n int
		var ok bool
		if typ, n, ok = d.typeAt(p[18+P:], d.pointer(p[18:])); !ok {
			return false
		}
		rest := p[18+P+n:]
		need := 4
		if version >= 3 {
			need += P
		}
		if version >= 4 {
			need += 8
		}
		if len(rest) < need {
			return false
		}
		if version >= 4 {
			objSize = binary.LittleEndian.Uint64(rest[4+P:])
		}
	}
	if amount > 1<<53 || objSize > 1<<53 {
		return false
	}
	d.nTicks++
	d.tickVersions[version]++
	hold := d.nSampled == 0
	_, g := d.stack(h.stackID, hold)
	thr := d.thread(h.thread)
	if hold {
		d.ticks.add(tick{time: d.nanos(h.ts), amount: amount, size: objSize,
			typ: d.tickNames.id(typ), thread: d.tickNames.id(thr), stack: g})
	}
	return true
}

// sendTicks sends the ticks held back, in trace order.
func (d *decoder) sendTicks() {
	for t := range d.ticks.all() {
		d.rec = parse.Record{
			Stack:   d.allStacks.get(t.stack),
			StackID: uint64(t.stack + 1),
			Thread:  d.tickNames.names[t.thread],
			Type:    d.tickNames.names[t.typ],
			Scheme:  parse.FixedStride,
			Rate:    tickStride,
			Alloc:   parse.Counts{Bytes: float64(t.amount), Enc: parse.Scaled, Samples: 1},
			Time:    t.time,
		}
		// Version 4 names the size of the object that crossed the stride:
		// the amount over that size is the usual (rough) object estimate.
		if t.size > 0 {
			d.rec.Alloc.Size = float64(t.size)
			d.rec.Alloc.Objects = float64(t.amount) / float64(t.size)
		}
		d.send()
	}
	d.ticks = tickList{}
}

// tickList holds ticks in chunks: appending never copies what is held.
type tickList struct {
	chunks [][]tick
	n      int
}

const tickChunk = 4096

func (l *tickList) add(t tick) {
	if l.n%tickChunk == 0 {
		l.chunks = append(l.chunks, make([]tick, 0, tickChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, t)
	l.n++
}

// all yields the ticks in the order they were added.
func (l *tickList) all() iter.Seq[tick] {
	return func(yield func(tick) bool) {
		for _, c := range l.chunks {
			for _, t := range c {
				if !yield(t) {
					return
				}
			}
		}
	}
}

// method decodes MethodLoadVerbose / MethodDC{Start,End}Verbose: MethodID
// u64, ModuleID u64, MethodStartAddress u64, MethodSize u32, MethodToken
// u32, MethodFlags u32, MethodNamespace, MethodName, MethodSignature
// (UTF-16z), then optional fields.
func (d *decoder) method(p []byte) bool {
	if len(p) < 36 {
		return false
	}
	start := binary.LittleEndian.Uint64(p[16:])
	size := uint64(binary.LittleEndian.Uint32(p[24:]))
	c := cursor{b: p, pos: 36}
	ns := c.str16()
	name := c.str16()
	if c.bad || start+size < start {
		return false
	}
	full := name
	if ns != "" {
		full = ns + "." + name
	}
	d.nMethods++
	d.methods = append(d.methods, methodRange{start: start, end: start + size, name: full})
	return true
}

// module decodes ModuleLoad / ModuleDC{Start,End}: ModuleID u64, AssemblyID
// u64, ModuleFlags u32, Reserved u32, ModuleILPath (UTF-16z), ...
func (d *decoder) module(p []byte) bool {
	if len(p) < 24 {
		return false
	}
	c := cursor{b: p, pos: 24}
	il := c.str16()
	if c.bad {
		return false
	}
	d.nModules++
	d.modules[binary.LittleEndian.Uint64(p)] = path.Base(strings.ReplaceAll(il, `\`, "/"))
	return true
}

func (d *decoder) pointer(b []byte) uint64 {
	if d.ptr == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	return uint64(binary.LittleEndian.Uint32(b))
}

// typeCacheSize is the number of (TypeID, name) pairs remembered in
// front of the name map (40 KB of them): a trace's allocations are mostly
// of a few hundred types at most. (With 64, a trace of 400 types missed
// often enough to spend 4% of its reading in the map.)
const (
	typeCacheBits = 10
	typeCacheSize = 1 << typeCacheBits
)

type typeEntry struct {
	id   uint64
	raw  string // the UTF-16 name as written
	name string
}

// typeAt reads a UTF-16z type name at the start of b and returns its
// interned name and its length in bytes with the terminator. A name in the
// cache is compared, not scanned for its end: a cached name has no
// terminator, so one that follows it ends the name there.
func (d *decoder) typeAt(b []byte, typeID uint64) (name string, n int, ok bool) {
	e := &d.typeCache[typeSlot(typeID)]
	if k := len(e.raw); e.name != "" && e.id == typeID && len(b) >= k+2 &&
		b[k] == 0 && b[k+1] == 0 && string(b[:k]) == e.raw {
		return e.name, k + 2, true
	}
	raw, ok := utf16z(b)
	if !ok {
		return "", 0, false
	}
	return d.typeName(raw, typeID), len(raw) + 2, true
}

// typeSlot is a TypeID's place in the cache. Method tables are aligned,
// so their low bits are equal: Fibonacci hashing mixes the others in.
func typeSlot(typeID uint64) uint64 { return (typeID * 0x9E3779B97F4A7C15) >> (64 - typeCacheBits) }

// typeName returns the interned name of a type from its UTF-16 name. The
// runtime writes "NULL" when it has no name (NativeAOT); the TypeID then
// keeps types apart. A TypeID is a method table address, which a
// collectible type's unloading can reuse, so the cache by TypeID checks
// the name too.
func (d *decoder) typeName(raw []byte, typeID uint64) string {
	e := &d.typeCache[typeSlot(typeID)]
	if e.id == typeID && e.raw == string(raw) && e.name != "" {
		return e.name
	}
	t, ok := d.types[string(raw)]
	if !ok {
		t = typeEntry{raw: string(raw), name: decodeUTF16(raw)}
		d.types[t.raw] = t
	}
	if t.name == "NULL" {
		if t.name, ok = d.nullTypes[typeID]; !ok {
			t.name = fmt.Sprintf("<type 0x%x>", typeID)
			d.nullTypes[typeID] = t.name
		}
	}
	*e = typeEntry{id: typeID, raw: t.raw, name: t.name}
	return t.name
}

// thread returns the interned name of a thread: its OS thread id (V6:
// through the thread table, "#index" when the table has none).
func (d *decoder) thread(id uint64) string {
	if !d.thrValid || id != d.thrID {
		d.thrName, d.thrUnknown = d.threadSlow(id)
		d.thrID, d.thrValid = id, true
	}
	if d.thrUnknown {
		d.unknownThread++ // counted per event, for the warning
	}
	return d.thrName
}

// threadSlow looks a thread up; unknown is set for a V6 index without an
// OS thread id.
func (d *decoder) threadSlow(id uint64) (name string, unknown bool) {
	if d.v6 {
		if t, ok := d.threads[id]; ok && t.hasTID {
			id = t.tid
		} else {
			name, unknown = "#"+strconv.FormatUint(id, 10), true
			id |= 1 << 63 // keep apart from OS ids
		}
	}
	if s, ok := d.threadNames[id]; ok {
		return s, unknown
	}
	if name == "" {
		name = strconv.FormatUint(id, 10)
	}
	d.threadNames[id] = name
	return name, unknown
}

// nanos converts a tick timestamp to nanoseconds since the trace start,
// saturating instead of overflowing.
func (d *decoder) nanos(ts int64) int64 {
	delta := ts - d.syncQPC
	neg := delta < 0
	u := uint64(delta)
	if neg {
		u = -u
	}
	var ns uint64
	switch f := uint64(d.freq); {
	case d.nsPerTick > 0 && u <= math.MaxInt64/d.nsPerTick:
		ns = u * d.nsPerTick // a clock whose period is whole nanoseconds
	default:
		hi, lo := bits.Mul64(u, 1e9)
		if hi >= f {
			ns = math.MaxInt64
		} else {
			ns, _ = bits.Div64(hi, lo, f)
		}
	}
	ns = min(ns, math.MaxInt64)
	if neg {
		return -int64(ns)
	}
	return int64(ns)
}
