package nettrace

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"path"
	"sort"
	"strconv"
	"strings"
)

// eventBlock reads an EventBlock, or a V4/V5 MetadataBlock (the same
// encoding, whose payloads are metadata rows): a header {int16 size, int16
// flags, int64 min and max timestamps, reserved} and then event rows.
func (d *ntDecoder) eventBlock(c *ntCursor, metadata bool) error {
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
	var h ntHeader
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
			pat = at + ntFixedHeaderV4
			if d.v6 {
				pat = at + ntFixedHeaderV6
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
func (d *ntDecoder) compressedHeader(c *ntCursor, h *ntHeader) []byte {
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
	ntFixedHeaderV4 = 4 + 76
	ntFixedHeaderV6 = 4 + 48
)

// uncompressedHeader decodes a fixed-layout event row. EventSize counts
// everything after itself, including any alignment padding, so the next row
// starts exactly there.
func (d *ntDecoder) uncompressedHeader(c *ntCursor, h *ntHeader) []byte {
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
func (d *ntDecoder) event(h *ntHeader, p []byte, at, pat int64) error {
	d.evAt = at
	m, ok := d.meta[h.metaID]
	if !ok {
		if d.unknownMeta == 0 {
			d.firstUnknownMeta = at
		}
		d.unknownMeta++
		return nil
	}
	d.trackSeq(h)
	if m.kind == ntIgnore {
		return nil
	}
	version := m.version
	if d.v6 && h.label != 0 {
		if v, ok := d.labels[h.label]; ok && v >= 0 {
			version = v
		}
	}
	var good bool
	switch m.kind {
	case ntAllocSampled:
		good = d.allocSampled(h, p)
	case ntAllocTick:
		good = d.allocTick(h, p, version)
	case ntMethod:
		good = d.method(p)
	case ntModule:
		good = d.module(p)
	case ntCPUSample:
		if d.keepCPU {
			g, _ := d.internStack(h.stackID)
			d.cpuStacks = append(d.cpuStacks, g)
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

// String names the event kind in warnings.
func (k ntKind) String() string {
	switch k {
	case ntAllocSampled:
		return "AllocationSampled"
	case ntAllocTick:
		return "GCAllocationTick"
	case ntMethod:
		return "method load/rundown"
	case ntModule:
		return "module load/rundown"
	case ntCPUSample:
		return "CPU sample"
	}
	return "other"
}

// trackSeq counts events a capture thread dropped: its sequence numbers
// increase by exactly one per event attempted.
func (d *ntDecoder) trackSeq(h *ntHeader) {
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
func (d *ntDecoder) syncSeq() {
	if d.seqValid {
		d.lastSeq[d.seqCur] = d.seqVal
		d.seqValid = false
	}
}

// ---- payloads ----

// allocSampled decodes AllocationSampled (runtime event 303, version 0):
// AllocationKind u32, ClrInstanceID u16, TypeID ptr, TypeName UTF-16z,
// Address ptr, ObjectSize u64, SampledByteOffset u64. There is no HeapIndex
// field (it was dropped before the event shipped).
func (d *ntDecoder) allocSampled(h *ntHeader, p []byte) bool {
	P := d.ptr
	if len(p) < 6+P+2 {
		return false
	}
	typeID := d.pointer(p[6:])
	raw, ok := ntUTF16z(p[6+P:])
	if !ok {
		return false
	}
	rest := p[6+P+len(raw)+2:]
	if len(rest) < P+16 {
		return false
	}
	size := binary.LittleEndian.Uint64(rest[P:])
	off := binary.LittleEndian.Uint64(rest[P+8:])
	if size == 0 || off >= size || size > 1<<53 {
		return false
	}
	d.nSampled++
	d.addEvent(h, ntEvent{a: size, b: off, typ: d.typeName(raw, typeID)})
	return true
}

// allocTick decodes GCAllocationTick (runtime event 10): AllocationAmount
// u32, AllocationKind u32; v1+ ClrInstanceID u16; v2+ AllocationAmount64
// u64, TypeID ptr, TypeName UTF-16z, HeapIndex u32; v3+ Address ptr; v4+
// ObjectSize u64. Each event stands for the ~100 KB allocated since the
// previous one on its heap: a fixed-stride estimate, not a random sample.
func (d *ntDecoder) allocTick(h *ntHeader, p []byte, version int) bool {
	P := d.ptr
	if len(p) < 8 {
		return false
	}
	amount := uint64(binary.LittleEndian.Uint32(p))
	typ := d.typeName(nil, 0)
	var objSize uint64
	if version >= 2 {
		if len(p) < 18+P+2 {
			return false
		}
		amount = binary.LittleEndian.Uint64(p[10:])
		typeID := d.pointer(p[18:])
		raw, ok := ntUTF16z(p[18+P:])
		if !ok {
			return false
		}
		typ = d.typeName(raw, typeID)
		rest := p[18+P+len(raw)+2:]
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
	d.addEvent(h, ntEvent{a: amount, b: objSize, typ: typ, tick: true})
	return true
}

// addEvent completes an event with its thread, time and stack.
func (d *ntDecoder) addEvent(h *ntHeader, e ntEvent) {
	e.thr = d.thread(h.thread)
	e.time = d.nanos(h.ts)
	g, ok := d.internStack(h.stackID)
	if !ok {
		if d.unknownStack == 0 {
			d.firstUnknownStack = d.evAt
		}
		d.unknownStack++
	}
	e.stk = g
	d.events = append(d.events, e)
}

// record turns a compact event into a Record.
func (d *ntDecoder) record(e *ntEvent, frames [][]Frame) Record {
	r := Record{Type: d.types[e.typ], Thread: d.threadS[e.thr], Time: e.time}
	if e.stk >= 0 {
		r.Stack = frames[e.stk]
	}
	if e.tick {
		r.Scheme, r.Rate = FixedStride, DotNetTickStride
		r.Alloc = Counts{Bytes: float64(e.a), Enc: Scaled, Samples: 1}
		// Version 4 names the size of the object that crossed the stride:
		// the amount over that size is the usual (rough) object estimate.
		if e.b > 0 {
			r.Alloc.Size = float64(e.b)
			r.Alloc.Objects = float64(e.a) / float64(e.b)
		}
		return r
	}
	z := float64(e.a)
	r.Scheme, r.Rate = Bernoulli, DotNetSamplingRate
	r.Alloc = Counts{Objects: 1, Bytes: z, Enc: Raw, Samples: 1, Size: z}
	r.Offset, r.HasOffset = float64(e.a-e.b), true
	return r
}

// method decodes MethodLoadVerbose / MethodDC{Start,End}Verbose: MethodID
// u64, ModuleID u64, MethodStartAddress u64, MethodSize u32, MethodToken
// u32, MethodFlags u32, MethodNamespace, MethodName, MethodSignature
// (UTF-16z), then optional fields.
func (d *ntDecoder) method(p []byte) bool {
	if len(p) < 36 {
		return false
	}
	start := binary.LittleEndian.Uint64(p[16:])
	size := uint64(binary.LittleEndian.Uint32(p[24:]))
	c := ntCursor{b: p, pos: 36}
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
	d.methods = append(d.methods, ntMethodRange{start: start, end: start + size, name: full})
	return true
}

// module decodes ModuleLoad / ModuleDC{Start,End}: ModuleID u64, AssemblyID
// u64, ModuleFlags u32, Reserved u32, ModuleILPath (UTF-16z), ...
func (d *ntDecoder) module(p []byte) bool {
	if len(p) < 24 {
		return false
	}
	c := ntCursor{b: p, pos: 24}
	il := c.str16()
	if c.bad {
		return false
	}
	d.nModules++
	d.modules[binary.LittleEndian.Uint64(p)] = path.Base(strings.ReplaceAll(il, `\`, "/"))
	return true
}

func (d *ntDecoder) pointer(b []byte) uint64 {
	if d.ptr == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	return uint64(binary.LittleEndian.Uint32(b))
}

// typeName interns a UTF-16 type name. The runtime writes "NULL" when it has
// no name (NativeAOT); the TypeID then keeps types apart. Events without a
// type name (GCAllocationTick before version 2) get the empty name.
func (d *ntDecoder) typeName(raw []byte, typeID uint64) int32 {
	if i, ok := d.typeNames[string(raw)]; ok {
		return i
	}
	s := ntDecodeUTF16(raw)
	if s == "NULL" {
		return d.internType(fmt.Sprintf("<type 0x%x>", typeID), fmt.Sprintf("\x00NULL %x", typeID))
	}
	return d.internType(s, string(raw))
}

func (d *ntDecoder) internType(name, key string) int32 {
	if i, ok := d.typeNames[key]; ok {
		return i
	}
	i := int32(len(d.types))
	d.types = append(d.types, name)
	d.typeNames[key] = i
	return i
}

// thread interns a thread's name: its OS thread id (V6: through the thread
// table, "#index" when the table has none).
func (d *ntDecoder) thread(id uint64) int32 {
	if d.thrValid && id == d.thrID {
		return d.thrIdx
	}
	i := d.threadSlow(id)
	if !d.v6 {
		// V6 indexes can be redefined after a thread flush: no cache.
		d.thrID, d.thrIdx, d.thrValid = id, i, true
	}
	return i
}

func (d *ntDecoder) threadSlow(id uint64) int32 {
	name := ""
	if d.v6 {
		t, ok := d.threads[id]
		if !ok || !t.hasTID {
			d.unknownThread++
			name = "#" + strconv.FormatUint(id, 10)
			id |= 1 << 63 // keep apart from OS ids
		} else {
			id = t.tid
		}
	}
	if i, ok := d.threadName[id]; ok {
		return i
	}
	if name == "" {
		name = strconv.FormatUint(id, 10)
	}
	i := int32(len(d.threadS))
	d.threadS = append(d.threadS, name)
	d.threadName[id] = i
	return i
}

// nanos converts a tick timestamp to nanoseconds since the trace start,
// saturating instead of overflowing.
func (d *ntDecoder) nanos(ts int64) int64 {
	delta := ts - d.syncQPC
	neg := delta < 0
	u := uint64(delta)
	if neg {
		u = -u
	}
	f := uint64(d.freq)
	var ns uint64
	if f == 1e9 {
		ns = u
	} else {
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

// ntMethodRange is the code range of one jitted or precompiled method body.
type ntMethodRange struct {
	start, end uint64
	name       string
}

// ntSymbols resolves instruction pointers to method names.
type ntSymbols struct {
	r      []ntMethodRange
	maxEnd []uint64 // maxEnd[i] = max end of r[0..i], for overlapping ranges
}

func newNtSymbols(methods []ntMethodRange) *ntSymbols {
	r := make([]ntMethodRange, 0, len(methods))
	for _, m := range methods {
		if m.end > m.start {
			r = append(r, m)
		}
	}
	// Stable: of two bodies at the same address the later-loaded one wins.
	sort.SliceStable(r, func(i, j int) bool { return r[i].start < r[j].start })
	s := &ntSymbols{r: r, maxEnd: make([]uint64, len(r))}
	var m uint64
	for i := range r {
		m = max(m, r[i].end)
		s.maxEnd[i] = m
	}
	return s
}

// lookup returns the innermost method whose range holds ip.
func (s *ntSymbols) lookup(ip uint64) string {
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].start > ip }) - 1
	for ; i >= 0 && s.maxEnd[i] > ip; i-- {
		if ip < s.r[i].end {
			return s.r[i].name
		}
	}
	return ""
}

// profile assembles the parse result: stacks symbolized once per distinct
// stack, records pointing at them, and warnings.
func (d *ntDecoder) profile() *Profile {
	if d.nSampled > 0 && d.nTicks > 0 {
		d.dropTicks()
	}
	frames, resolved, distinct := d.symbolize()
	recs := make([]Record, len(d.events))
	for i := range d.events {
		recs[i] = d.record(&d.events[i], frames)
	}
	d.events = nil
	d.finalWarnings()
	version := fmt.Sprintf("NetTrace V%d", d.major)
	if d.v6 {
		version = fmt.Sprintf("NetTrace V%d.%d", d.major, d.minor)
	}
	detail := fmt.Sprintf("%s, pointer size %d, pid %d; %d AllocationSampled, %d GCAllocationTick events; %d method ranges, %d modules; %d of %d distinct frames symbolized",
		version, d.ptr, d.pid, d.nSampled, d.nTicks, d.nMethods, d.nModules, resolved, distinct)
	return &Profile{
		Source: Source{
			Format:  "nettrace",
			Rate:    DotNetSamplingRate,
			Samples: float64(len(recs)),
			Detail:  detail,
		},
		Records:  recs,
		HasAlloc: true,
		Timed:    true,
		Warnings: d.warnings,
	}
}

// dropTicks keeps AllocationSampled records only: a trace with both events
// describes the same allocations twice.
func (d *ntDecoder) dropTicks() {
	k := 0
	for _, e := range d.events {
		if !e.tick {
			d.events[k] = e
			k++
		}
	}
	d.events = d.events[:k]
	d.warnf("the trace has both AllocationSampled and GCAllocationTick events; the %d GCAllocationTick events were ignored (they describe the same allocations)", d.nTicks)
}

// symbolize builds the frames of every interned stack, leaf first. Caller
// frames are return addresses, so they are looked up one byte earlier: a
// call that ends its method would otherwise resolve to the next method.
func (d *ntDecoder) symbolize() (frames [][]Frame, resolved, distinct int) {
	syms := newNtSymbols(d.methods)
	n := 0
	for _, s := range d.stackIPs {
		n += len(s)
	}
	arena := make([]Frame, 0, n)
	seen := map[uint64]bool{}
	frames = make([][]Frame, len(d.stackIPs))
	for g, ips := range d.stackIPs {
		start := len(arena)
		for i, ip := range ips {
			look := ip
			if i > 0 && ip > 0 {
				look = ip - 1
			}
			name := syms.lookup(look)
			arena = append(arena, Frame{Addr: ip, Func: name})
			if !seen[ip] {
				seen[ip] = true
				distinct++
				if name != "" {
					resolved++
				}
			}
		}
		frames[g] = arena[start:len(arena):len(arena)]
	}
	return frames, resolved, distinct
}

func (d *ntDecoder) finalWarnings() {
	if d.nSampled == 0 && d.nTicks == 0 {
		d.warnf("no AllocationSampled (runtime event 303) or GCAllocationTick events: the runtime is older than .NET 10 or the AllocationSampling keyword 0x80000000000 was not enabled")
	}
	if d.nTicks > 0 && d.nSampled == 0 {
		d.warnf("%d GCAllocationTick events: fixed-stride sampling (one event per ~100 KB allocated) gives estimates only, with no confidence interval; collect AllocationSampled events (.NET 10+, keyword 0x80000000000) for intervals", d.nTicks)
		if d.tickVersions[4] < d.nTicks {
			d.warnf("GCAllocationTick events before version 4 carry no object size: alloc_objects is not available from them")
		}
	}
	if d.dropped > 0 {
		d.warnf("%d events were dropped by the runtime (gaps in sequence numbers): estimates are biased low", d.dropped)
	}
	if d.unknownMeta > 0 {
		d.warnf("%d events refer to metadata ids never defined (first at byte %d); they were skipped", d.unknownMeta, d.firstUnknownMeta)
	}
	if d.unknownStack > 0 {
		d.warnf("%d allocation events refer to stack ids not defined in their sequence-point region (first in the block at byte %d); they have no stack", d.unknownStack, d.firstUnknownStack)
	}
	if d.unknownThread > 0 {
		d.warnf("%d allocation events refer to thread indexes without an OS thread id; they are named #index", d.unknownThread)
	}
	for _, k := range ntSortedKeys(d.badPayload) {
		d.warnf("%d %s events have a malformed payload (first at byte %d); they were skipped", d.badPayload[k], k, d.firstBadPayload)
	}
	for _, k := range ntSortedKeys(d.unknownBlocks) {
		d.warnf("skipped %d blocks of unknown type %q", d.unknownBlocks[k], k)
	}
}

func ntSortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
