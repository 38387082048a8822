package nettracetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf16"
)

// Version is the NetTrace format version to write.
type Version int

const (
	// V4 is the FastSerialization container the .NET runtime writes.
	V4 Version = 4
	// V5 is V4 with optional metadata tags (here an OpCode tag per row).
	V5 Version = 5
	// V6 is the block container with thread, label list and UTF-8 metadata.
	V6 Version = 6
)

// Provider names of the events heapest reads.
const (
	RuntimeProvider = "Microsoft-Windows-DotNETRuntime"
	RundownProvider = "Microsoft-Windows-DotNETRuntimeRundown"
)

// Options shape the written trace. The zero value writes V4 with
// compressed headers, 8-byte pointers and a 10 MHz clock.
type Options struct {
	Version Version
	// Uncompressed writes fixed-layout event headers instead of compressed ones.
	Uncompressed bool
	// PointerSize is 8 (default) or 4.
	PointerSize int
	// PID is the traced process id.
	PID int
	// Freq is the tick frequency (default 10,000,000: Windows QPC).
	Freq int64
	// SyncTicks is the tick count at the trace start (default 1,000,000).
	SyncTicks int64
	// MaxBlock bounds an event block's body (default 102,399 bytes, as the
	// runtime does).
	MaxBlock int
	// RegionEvents is the number of events between sequence points
	// (default 1000); stack ids restart after each.
	RegionEvents int
	// Labels makes V6 events refer to a label list carrying an activity id.
	Labels bool
}

func (o Options) withDefaults() Options {
	if o.Version == 0 {
		o.Version = V4
	}
	if o.PointerSize == 0 {
		o.PointerSize = 8
	}
	if o.Freq == 0 {
		o.Freq = 10_000_000
	}
	if o.SyncTicks == 0 {
		o.SyncTicks = 1_000_000
	}
	if o.MaxBlock == 0 {
		o.MaxBlock = 102399
	}
	if o.RegionEvents == 0 {
		o.RegionEvents = 1000
	}
	return o
}

// Event is one event to write.
type Event struct {
	Provider    string
	ID, Version int
	// Thread is the OS thread id that logged the event.
	Thread uint64
	// Time is in ticks (see Options.Freq and SyncTicks).
	Time int64
	// Stack is leaf first; nil for no stack.
	Stack   []uint64
	Payload []byte
	// StackID and MetadataID, when non-zero, replace the ids the writer
	// would assign: tests use them to refer to rows that do not exist.
	StackID, MetadataID uint32
}

type metaKey struct {
	provider    string
	id, version int
}

// header is the state header compression encodes deltas against.
type header struct {
	meta, seq, stack, label, payload uint32
	capThread, thread                uint64
	ts                               int64
}

// Writer builds one trace in memory. Metadata, stacks and threads are
// written before the first event block that refers to them.
type Writer struct {
	opt Options
	out bytes.Buffer

	meta     map[metaKey]uint32
	pendMeta bytes.Buffer // V4/V5: metadata event rows; V6: metadata rows
	nPending int

	stackIDs  map[string]uint32
	nextStack uint32
	pendStack bytes.Buffer
	firstPend uint32
	nPendStk  uint32

	threadIdx  map[uint64]uint64 // V6: OS thread id → index
	pendThread bytes.Buffer

	events    bytes.Buffer
	prev      header
	minTS     int64
	maxTS     int64
	lastTS    int64
	seq       map[uint64]uint32
	inRegion  int
	labelOut  bool   // V6 events refer to label list 1
	pendLabel []byte // label list block to write before the next events
}

// NewWriter starts a trace: stream header and Trace object or block.
func NewWriter(opt Options) *Writer {
	w := &Writer{
		opt:       opt.withDefaults(),
		meta:      map[metaKey]uint32{},
		stackIDs:  map[string]uint32{},
		nextStack: 1,
		threadIdx: map[uint64]uint64{},
		seq:       map[uint64]uint32{},
	}
	w.out.WriteString("Nettrace")
	if w.opt.Version == V6 {
		w.u32(&w.out, 0)
		w.u32(&w.out, 6)
		w.u32(&w.out, 0)
		var b bytes.Buffer
		w.syncTime(&b)
		w.u32(&b, uint32(w.opt.PointerSize))
		w.u32(&b, 1)
		str8(&b, "ProcessId")
		str8(&b, fmt.Sprint(w.opt.PID))
		w.block6(1, b.Bytes())
	} else {
		w.u32(&w.out, 20)
		w.out.WriteString("!FastSerialization.1")
		w.beginObject("Trace", 4, 4)
		var b bytes.Buffer
		w.syncTime(&b)
		w.u32(&b, uint32(w.opt.PointerSize))
		w.u32(&b, uint32(w.opt.PID))
		w.u32(&b, 4) // NumberOfProcessors
		w.u32(&b, 0) // ExpectedCPUSamplingRate
		w.out.Write(b.Bytes())
		w.out.WriteByte(6)
	}
	if w.opt.Version == V6 && w.opt.Labels {
		w.labelOut = true
		w.pendLabel = labelList()
	}
	return w
}

// labelList is a LabelList block defining list 1: one activity id, marked
// as the last label of its list.
func labelList() []byte {
	var b bytes.Buffer
	put32(&b, 1)
	put32(&b, 1)
	b.WriteByte(1 | 0x80)
	b.Write(bytes.Repeat([]byte{0xAB}, 16))
	return b.Bytes()
}

func (w *Writer) syncTime(b *bytes.Buffer) {
	for _, v := range []uint16{2026, 11, 0, 22, 0, 0, 0, 0} {
		put16(b, v)
	}
	w.u64(b, uint64(w.opt.SyncTicks))
	w.u64(b, uint64(w.opt.Freq))
}

// Write adds one event.
func (w *Writer) Write(e Event) {
	id := e.MetadataID
	if id == 0 {
		id = w.metadata(e.Provider, e.ID, e.Version)
	}
	stack := e.StackID
	if stack == 0 {
		stack = w.stack(e.Stack)
	}
	thread := e.Thread
	if w.opt.Version == V6 {
		thread = w.thread(e.Thread)
	}
	w.seq[thread]++
	h := header{meta: id, seq: w.seq[thread], capThread: thread, thread: thread, stack: stack,
		ts: e.Time, payload: uint32(len(e.Payload))}
	if w.labelOut {
		h.label = 1
	}
	if w.events.Len() == 0 {
		w.prev = header{}
		w.minTS, w.maxTS = e.Time, e.Time
	}
	w.minTS, w.maxTS = min(w.minTS, e.Time), max(w.maxTS, e.Time)
	w.lastTS = max(w.lastTS, e.Time)
	if w.opt.Uncompressed {
		w.uncompressed(&w.events, h, e.Payload)
	} else {
		w.compressed(&w.events, h, e.Payload)
	}
	w.prev = h
	if w.events.Len() >= w.opt.MaxBlock-1024 {
		w.flush()
	}
	w.inRegion++
	if w.inRegion >= w.opt.RegionEvents {
		w.SequencePoint()
	}
}

// compressed encodes a header-compressed event row.
func (w *Writer) compressed(b *bytes.Buffer, h header, payload []byte) {
	p := w.prev
	var flags byte
	if h.meta != p.meta {
		flags |= 1
	}
	if h.capThread != p.capThread || h.seq != p.seq+1 {
		flags |= 2
	}
	if h.thread != p.thread {
		flags |= 4
	}
	if h.stack != p.stack {
		flags |= 8
	}
	if w.opt.Version == V6 && h.label != p.label {
		flags |= 16
	}
	if h.payload != p.payload {
		flags |= 128
	}
	b.WriteByte(flags)
	if flags&1 != 0 {
		uvarint(b, uint64(h.meta))
	}
	if flags&2 != 0 {
		uvarint(b, uint64(h.seq-p.seq-1))
		uvarint(b, h.capThread)
		uvarint(b, 0) // processor
	}
	if flags&4 != 0 {
		uvarint(b, h.thread)
	}
	if flags&8 != 0 {
		uvarint(b, uint64(h.stack))
	}
	uvarint(b, uint64(h.ts-p.ts))
	if flags&16 != 0 {
		uvarint(b, uint64(h.label))
	}
	if flags&128 != 0 {
		uvarint(b, uint64(h.payload))
	}
	b.Write(payload)
}

// uncompressed encodes a fixed-layout event row, padded to 4 bytes; the
// padding is counted in EventSize.
func (w *Writer) uncompressed(b *bytes.Buffer, h header, payload []byte) {
	var r bytes.Buffer
	w.u32(&r, h.meta)
	w.u32(&r, h.seq)
	w.u64(&r, h.thread)
	w.u64(&r, h.capThread)
	w.u32(&r, 0) // processor
	w.u32(&r, h.stack)
	w.u64(&r, uint64(h.ts))
	if w.opt.Version == V6 {
		w.u32(&r, h.label)
	} else {
		r.Write(make([]byte, 32)) // activity ids
	}
	w.u32(&r, h.payload)
	r.Write(payload)
	for (r.Len()+4)%4 != 0 {
		r.WriteByte(0)
	}
	w.u32(b, uint32(r.Len()))
	b.Write(r.Bytes())
}

// metadata returns the id of an event type, queuing its row if new.
func (w *Writer) metadata(provider string, id, version int) uint32 {
	k := metaKey{provider, id, version}
	if m, ok := w.meta[k]; ok {
		return m
	}
	m := uint32(len(w.meta) + 1)
	w.meta[k] = m
	if w.opt.Version == V6 {
		var r bytes.Buffer
		uvarint(&r, uint64(m))
		str8(&r, provider)
		uvarint(&r, uint64(id))
		str8(&r, "")
		put16(&r, 0)                          // no field descriptions
		opt := []byte{9, byte(version), 8, 4} // Version, Level
		put16(&r, uint16(len(opt)))
		r.Write(opt)
		put16(&w.pendMeta, uint16(r.Len()))
		w.pendMeta.Write(r.Bytes())
	} else {
		var p bytes.Buffer
		w.u32(&p, m)
		utf16z(&p, provider)
		w.u32(&p, uint32(id))
		utf16z(&p, "")
		w.u64(&p, 0) // keywords
		w.u32(&p, uint32(version))
		w.u32(&p, 4) // level
		w.u32(&p, 0) // no fields
		if w.opt.Version == V5 {
			w.u32(&p, 1) // OpCode tag: 1 payload byte
			p.WriteByte(1)
			p.WriteByte(0)
		}
		if w.opt.Uncompressed {
			w.uncompressed(&w.pendMeta, header{payload: uint32(p.Len())}, p.Bytes())
		} else {
			// A compressed row with only a payload size: every other field
			// keeps the block's zero state.
			w.pendMeta.WriteByte(128)
			uvarint(&w.pendMeta, 0)
			uvarint(&w.pendMeta, uint64(p.Len()))
			w.pendMeta.Write(p.Bytes())
		}
	}
	w.nPending++
	return m
}

// stack returns the id of a stack in the current region, queuing it if new.
func (w *Writer) stack(ips []uint64) uint32 {
	if len(ips) == 0 {
		return 0
	}
	var raw bytes.Buffer
	for _, ip := range ips {
		if w.opt.PointerSize == 4 {
			w.u32(&raw, uint32(ip))
		} else {
			w.u64(&raw, ip)
		}
	}
	if id, ok := w.stackIDs[raw.String()]; ok {
		return id
	}
	id := w.nextStack
	w.nextStack++
	w.stackIDs[raw.String()] = id
	if w.nPendStk == 0 {
		w.firstPend = id
	}
	w.nPendStk++
	w.u32(&w.pendStack, uint32(raw.Len()))
	w.pendStack.Write(raw.Bytes())
	return id
}

// thread returns the V6 index of an OS thread, queuing its row if new.
func (w *Writer) thread(tid uint64) uint64 {
	if idx, ok := w.threadIdx[tid]; ok {
		return idx
	}
	idx := uint64(len(w.threadIdx) + 1)
	w.threadIdx[tid] = idx
	var r bytes.Buffer
	uvarint(&r, idx)
	r.WriteByte(2) // OSProcessId
	uvarint(&r, uint64(w.opt.PID))
	r.WriteByte(3) // OSThreadId
	uvarint(&r, tid)
	put16(&w.pendThread, uint16(r.Len()))
	w.pendThread.Write(r.Bytes())
	return idx
}

// flush writes pending metadata, threads, label lists, stacks and events,
// in that order, so every reference points backwards.
func (w *Writer) flush() {
	if w.pendMeta.Len() > 0 {
		if w.opt.Version == V6 {
			var b bytes.Buffer
			put16(&b, 0)
			b.Write(w.pendMeta.Bytes())
			w.block6(3, b.Bytes())
		} else {
			w.block("MetadataBlock", eventBlockBody(0, 0, w.pendMeta.Bytes(), !w.opt.Uncompressed))
		}
		w.pendMeta.Reset()
	}
	if w.pendThread.Len() > 0 {
		w.block6(6, w.pendThread.Bytes())
		w.pendThread.Reset()
	}
	if w.pendLabel != nil {
		w.block6(8, w.pendLabel)
		w.pendLabel = nil
	}
	if w.nPendStk > 0 {
		var b bytes.Buffer
		w.u32(&b, w.firstPend)
		w.u32(&b, w.nPendStk)
		b.Write(w.pendStack.Bytes())
		w.block("StackBlock", b.Bytes())
		w.pendStack.Reset()
		w.nPendStk = 0
	}
	if w.events.Len() > 0 {
		w.block("EventBlock", eventBlockBody(w.minTS, w.maxTS, w.events.Bytes(), !w.opt.Uncompressed))
		w.events.Reset()
	}
}

func eventBlockBody(minTS, maxTS int64, rows []byte, compressed bool) []byte {
	var b bytes.Buffer
	put16(&b, 20)
	var flags uint16
	if compressed {
		flags = 1
	}
	put16(&b, flags)
	put64(&b, uint64(minTS))
	put64(&b, uint64(maxTS))
	b.Write(rows)
	return b.Bytes()
}

// SequencePoint flushes pending blocks and writes a sequence point: stack
// ids restart after it, as the runtime does.
func (w *Writer) SequencePoint() {
	w.flush()
	var b bytes.Buffer
	w.u64(&b, uint64(w.lastTS))
	if w.opt.Version == V6 {
		w.u32(&b, 0) // flags
		w.u32(&b, uint32(len(w.seq)))
		for _, t := range w.threads() {
			uvarint(&b, t)
			uvarint(&b, uint64(w.seq[t]))
		}
		w.block6(4, b.Bytes())
		if w.opt.Labels {
			w.pendLabel = labelList() // label lists die with the region
		}
	} else {
		w.u32(&b, uint32(len(w.seq)))
		for _, t := range w.threads() {
			w.u64(&b, t)
			w.u32(&b, w.seq[t])
		}
		w.block("SPBlock", b.Bytes())
	}
	clear(w.stackIDs)
	w.nextStack = 1
	w.inRegion = 0
}

// threads lists the capture threads in order, for deterministic output.
func (w *Writer) threads() []uint64 {
	t := make([]uint64, 0, len(w.seq))
	for k := range w.seq {
		t = append(t, k)
	}
	slices.Sort(t)
	return t
}

// Finish ends the stream and returns the trace.
func (w *Writer) Finish() []byte {
	w.SequencePoint()
	if w.opt.Version == V6 {
		w.block6(0, nil)
	} else {
		w.out.WriteByte(1) // NullReference: end of stream
	}
	return w.out.Bytes()
}

// Block flushes what is pending and writes a block object with the given
// type name and body (V4/V5), for unknown or malformed blocks in tests.
func (w *Writer) Block(name string, body []byte) {
	w.flush()
	w.block(name, body)
}

// Block6 flushes what is pending and writes a V6 block of the given kind.
func (w *Writer) Block6(kind byte, body []byte) {
	w.flush()
	w.block6(kind, body)
}

// Raw flushes what is pending and appends bytes to the stream as they are.
func (w *Writer) Raw(b []byte) {
	w.flush()
	w.out.Write(b)
}

// Len is the number of bytes written so far (pending blocks excluded).
func (w *Writer) Len() int { return w.out.Len() }

// block writes a V4/V5 block object (or the V6 block of the same content).
func (w *Writer) block(name string, body []byte) {
	if w.opt.Version == V6 {
		kind := map[string]byte{"EventBlock": 2, "StackBlock": 5}[name]
		w.block6(kind, body)
		return
	}
	w.beginObject(name, 2, 2)
	w.u32(&w.out, uint32(len(body)))
	for w.out.Len()%4 != 0 {
		w.out.WriteByte(0)
	}
	w.out.Write(body)
	w.out.WriteByte(6)
}

func (w *Writer) beginObject(name string, version, minVersion uint32) {
	w.out.Write([]byte{5, 5, 1})
	w.u32(&w.out, version)
	w.u32(&w.out, minVersion)
	w.u32(&w.out, uint32(len(name)))
	w.out.WriteString(name)
	w.out.WriteByte(6)
}

func (w *Writer) block6(kind byte, body []byte) {
	w.u32(&w.out, uint32(len(body))|uint32(kind)<<24)
	w.out.Write(body)
}

func (w *Writer) u32(b *bytes.Buffer, v uint32) { put32(b, v) }
func (w *Writer) u64(b *bytes.Buffer, v uint64) { put64(b, v) }

func put16(b *bytes.Buffer, v uint16) {
	var t [2]byte
	binary.LittleEndian.PutUint16(t[:], v)
	b.Write(t[:])
}

func put32(b *bytes.Buffer, v uint32) {
	var t [4]byte
	binary.LittleEndian.PutUint32(t[:], v)
	b.Write(t[:])
}

func put64(b *bytes.Buffer, v uint64) {
	var t [8]byte
	binary.LittleEndian.PutUint64(t[:], v)
	b.Write(t[:])
}

func uvarint(b *bytes.Buffer, v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}

func str8(b *bytes.Buffer, s string) {
	uvarint(b, uint64(len(s)))
	b.WriteString(s)
}

func utf16z(b *bytes.Buffer, s string) {
	for _, u := range utf16.Encode([]rune(s)) {
		put16(b, u)
	}
	b.Write([]byte{0, 0})
}
