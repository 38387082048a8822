package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/heapest/heapest/parse"
)

const (
	streamMagic  = "Nettrace"
	fastSerMagic = "!FastSerialization.1"

	// samplingRate is the mean sampling period in bytes of the .NET
	// runtime's AllocationSampled events (p = 1/102400, fixed).
	samplingRate = 102400
	// tickStride is the allocation amount between two GCAllocationTick
	// events (about 100 KB).
	tickStride = 102400

	// FastSerialization tags.
	tagNull        = 1
	tagBeginObject = 5
	tagEndObject   = 6

	// readChunk bounds how much is allocated ahead of the bytes actually read
	// when a block declares a large size.
	readChunk = 1 << 20
)

// Detect reports whether head, the start of a decompressed input, is a
// nettrace stream.
func Detect(head []byte) bool { return bytes.HasPrefix(head, []byte(streamMagic)) }

// Parse reads a trace from r and sends each allocation event to sink as a
// record (see the package doc for the GCAllocationTick events it holds
// back). A record's Stack is shared with the other records of its stack
// until the next sequence point: a sink reads it and copies what it keeps.
// Record.StackID numbers the distinct stacks densely from 1 (0: none).
// name is used in errors. With opt.KeepGoing, a trace that stops early or
// goes bad keeps the records read before, with a warning.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	d := newDecoder(name, r, opt, sink)
	// What every trace holds is known before its first event: allocations
	// only, with event times.
	parse.Begin(sink, &parse.Profile{Source: parse.Source{Format: "nettrace"}, HasAlloc: true, Timed: true})
	err := d.run()
	if err == nil {
		err = d.trailing()
	}
	if err != nil {
		if !opt.KeepGoing || !d.haveTrace {
			return nil, err
		}
		d.stopped = err
	}
	p := d.profile()
	if opt.Lines {
		p.Warnings = append(p.Warnings, "--lines: a trace's stacks are methods, without source lines (those are in the PDB files, which heapest does not read): rows are by method")
	}
	return p, nil
}

// trailing reads what follows the end of the trace, to its end: a gzip
// stream's checksum is checked there, and bytes after the end (a second
// trace joined to the first, or damage) are said, not read.
func (d *decoder) trailing() error {
	at := d.off
	n, err := io.Copy(io.Discard, d.r)
	if err != nil {
		return d.errAt(at+n, err, "after the end of the trace")
	}
	if n > 0 {
		d.warnf("%d bytes after the end of the trace at byte %d (a second trace joined to the first, or damage): not read", n, at)
	}
	return nil
}

// run reads the stream header and dispatches to the container version.
func (d *decoder) run() error {
	magic, err := d.readFull(8)
	if err != nil {
		return err
	}
	if string(magic) != streamMagic {
		return d.errAt(0, nil, "not a nettrace file: expected magic %q", streamMagic)
	}
	word, err := d.readU32()
	if err != nil {
		return err
	}
	if word == 0 {
		return d.runV6()
	}
	if word != uint32(len(fastSerMagic)) {
		return d.errAt(8, nil, "expected the length %d of %q or a V6 header (0), got %d", len(fastSerMagic), fastSerMagic, word)
	}
	s, err := d.readFull(len(fastSerMagic))
	if err != nil {
		return err
	}
	if string(s) != fastSerMagic {
		return d.errAt(12, nil, "expected %q, got %q", fastSerMagic, s)
	}
	return d.runFastSerialization()
}

// runFastSerialization walks the objects of a NetTrace V4/V5 stream: a Trace
// object, then blocks, then a NullReference tag.
func (d *decoder) runFastSerialization() error {
	for {
		at := d.off
		tag, err := d.readByte()
		if err != nil {
			return d.truncated(at, "the next object or the end-of-stream tag", err)
		}
		if tag == tagNull {
			if !d.haveTrace {
				return d.errAt(at, nil, "stream ends before its Trace object")
			}
			return nil
		}
		if tag != tagBeginObject {
			return d.errAt(at, nil, "expected BeginPrivateObject tag (5) or NullReference (1), got %d", tag)
		}
		typeName, version, minVersion, err := d.readObjectType()
		if err != nil {
			return err
		}
		if err := d.readObject(typeName, version, minVersion); err != nil {
			return err
		}
		at = d.off
		tag, err = d.readByte()
		if err != nil {
			return d.truncated(at, "EndObject tag (6)", err)
		}
		if tag != tagEndObject {
			return d.errAt(at, nil, "expected EndObject tag (6) after %s, got %d", typeName, tag)
		}
	}
}

// readObjectType reads the type object that follows a BeginPrivateObject tag.
func (d *decoder) readObjectType() (name string, version, minVersion int32, err error) {
	at := d.off
	b, err := d.readFull(2 + 12)
	if err != nil {
		return "", 0, 0, d.truncated(at, "an object type header", err)
	}
	if b[0] != tagBeginObject || b[1] != tagNull {
		return "", 0, 0, d.errAt(at, nil, "expected a type object (tags 5, 1), got %d, %d", b[0], b[1])
	}
	version = int32(binary.LittleEndian.Uint32(b[2:]))
	minVersion = int32(binary.LittleEndian.Uint32(b[6:]))
	n := int32(binary.LittleEndian.Uint32(b[10:]))
	// Names are short ("MetadataBlock" is the longest); a negative length
	// crashed TraceEvent (perfview #2444), so both bounds are checked.
	if n < 0 || n > 64 {
		return "", 0, 0, d.errAt(at+10, nil, "object type name length %d outside 0..64", n)
	}
	nb, err := d.readFull(int(n))
	if err != nil {
		return "", 0, 0, d.truncated(at+14, "an object type name", err)
	}
	name = objectTypeName(nb)
	at = d.off
	tag, err := d.readByte()
	if err != nil {
		return "", 0, 0, d.truncated(at, "EndObject tag (6) of the type", err)
	}
	if tag != tagEndObject {
		return "", 0, 0, d.errAt(at, nil, "expected EndObject tag (6) after type %q, got %d", name, tag)
	}
	return name, version, minVersion, nil
}

// objectTypeName returns the object type name, without allocating for the
// names of the format.
func objectTypeName(b []byte) string {
	for _, n := range [...]string{"EventBlock", "StackBlock", "SPBlock", "MetadataBlock", "Trace"} {
		if string(b) == n {
			return n
		}
	}
	return string(b)
}

// readObject reads the body of one FastSerialization object.
func (d *decoder) readObject(typeName string, version, minVersion int32) error {
	at := d.off
	if typeName == "Trace" {
		if d.haveTrace {
			return d.errAt(at, nil, "second Trace object")
		}
		if version < 4 {
			return d.errAt(at, nil, "Trace object version %d: NetPerf (V3 and older) traces are not supported", version)
		}
		if minVersion > 5 {
			return d.errAt(at, nil, "Trace object needs a reader of version %d; this reader knows versions 4 and 5", minVersion)
		}
		d.major = int(version)
		b, err := d.readFull(48)
		if err != nil {
			return d.truncated(at, "the 48-byte Trace object", err)
		}
		return d.traceFields(b, at, false)
	}
	if !d.haveTrace {
		return d.errAt(at, nil, "%s object before the Trace object", typeName)
	}
	c, err := d.readSizedBlock(typeName)
	if err != nil {
		return err
	}
	switch typeName {
	case "EventBlock":
		return d.eventBlock(c, false)
	case "MetadataBlock":
		return d.eventBlock(c, true)
	case "StackBlock":
		return d.stackBlock(c)
	case "SPBlock":
		return d.sequencePointV5(c)
	}
	d.unknownBlocks[typeName]++
	return nil
}

// readSizedBlock reads the int32 size, the padding to a 4-byte file offset
// and the body of a V4/V5 block object.
func (d *decoder) readSizedBlock(typeName string) (*cursor, error) {
	at := d.off
	size, err := d.readU32()
	if err != nil {
		return nil, d.truncated(at, typeName+" size", err)
	}
	if int32(size) < 0 {
		return nil, d.errAt(at, nil, "%s size %d is negative", typeName, int32(size))
	}
	if pad := int((4 - d.off%4) % 4); pad > 0 {
		if _, err := d.readFull(pad); err != nil {
			return nil, d.truncated(d.off, typeName+" alignment padding", err)
		}
	}
	return d.readBlockBody(typeName, int64(size))
}

// readBlockBody reads n bytes of block body into the reusable buffer.
func (d *decoder) readBlockBody(what string, n int64) (*cursor, error) {
	start := d.off
	b, err := d.readBounded(n)
	if err != nil {
		return nil, d.errAt(start, io.ErrUnexpectedEOF, "truncated %s: declared %d bytes, %d remain", what, n, int64(len(b)))
	}
	d.cur = cursor{b: b, base: start}
	return &d.cur, nil
}

// runV6 walks the blocks of a NetTrace V6 stream.
func (d *decoder) runV6() error {
	b, err := d.readFull(8)
	if err != nil {
		return d.truncated(12, "the V6 version numbers", err)
	}
	d.v6 = true
	d.major = int(binary.LittleEndian.Uint32(b))
	d.minor = int(binary.LittleEndian.Uint32(b[4:]))
	if d.major != 6 {
		return d.errAt(12, nil, "NetTrace major version %d: this reader knows version 6", d.major)
	}
	for {
		at := d.off
		x, err := d.readU32()
		if err != nil {
			return d.truncated(at, "a block header or the EndOfStream block", err)
		}
		size, kind := int64(x&0xFFFFFF), x>>24
		if kind != 1 && !d.haveTrace {
			return d.errAt(at, nil, "block kind %d before the Trace block", kind)
		}
		c, err := d.readBlockBody(v6BlockName(kind), size)
		if err != nil {
			return err
		}
		if err := d.v6Block(kind, c); err != nil {
			return err
		}
		if kind == 0 {
			return nil // EndOfStream
		}
	}
}

func (d *decoder) v6Block(kind uint32, c *cursor) error {
	switch kind {
	case 0:
		return nil
	case 1:
		if d.haveTrace {
			return d.errAt(c.base, nil, "second Trace block")
		}
		return d.traceFields(c.b, c.base, true)
	case 2:
		return d.eventBlock(c, false)
	case 3:
		return d.metadataBlockV6(c)
	case 4:
		return d.sequencePointV6(c)
	case 5:
		return d.stackBlock(c)
	case 6:
		return d.threadBlock(c)
	case 7:
		return d.removeThreadBlock(c)
	case 8:
		return d.labelListBlock(c)
	}
	// The spec asks readers to skip unknown kinds (new minor versions).
	d.unknownBlocks[v6BlockName(kind)]++
	return nil
}

func v6BlockName(kind uint32) string {
	names := [...]string{"EndOfStream block", "Trace block", "Event block", "Metadata block",
		"SequencePoint block", "Stack block", "Thread block", "RemoveThread block", "LabelList block"}
	if int(kind) < len(names) {
		return names[kind]
	}
	return fmt.Sprintf("block of unknown kind %d", kind)
}

// syncTime reads SyncTimeUTC, a Windows SYSTEMTIME (year, month, day of
// week, day, hour, minute, second, millisecond as 16-bit numbers), as
// nanoseconds since the Unix epoch; 0 when it is no date.
func syncTime(c *cursor) int64 {
	var f [8]int
	for i := range f {
		f[i] = int(int16(c.u16()))
	}
	// The fields' ranges, day of week (f[2]) aside.
	limits := [8][2]int{{1970, 30827}, {1, 12}, {0, 6}, {1, 31}, {0, 23}, {0, 59}, {0, 59}, {0, 999}}
	for i, l := range limits {
		if i != 2 && (f[i] < l[0] || f[i] > l[1]) {
			return 0
		}
	}
	return time.Date(f[0], time.Month(f[1]), f[3], f[4], f[5], f[6], f[7]*1e6, time.UTC).UnixNano()
}

// traceFields reads the Trace object (V4/V5) or Trace block (V6).
func (d *decoder) traceFields(b []byte, at int64, v6 bool) error {
	c := cursor{b: b, base: at}
	d.syncUTC = syncTime(&c)
	d.syncQPC = int64(c.u64())
	d.freq = int64(c.u64())
	d.ptr = int(int32(c.u32()))
	if v6 {
		n := c.u32()
		if !c.bad && int64(n) > int64(c.left()/2) {
			return d.errAt(c.off()-4, nil, "Trace block declares %d key-value pairs in %d bytes", n, c.left())
		}
		for i := uint32(0); i < n && !c.bad; i++ {
			k, v := c.str8(), c.str8()
			if k == "ProcessId" {
				fmt.Sscan(v, &d.pid)
			}
		}
	} else {
		d.pid = int64(int32(c.u32()))
		c.skip(8) // NumberOfProcessors, ExpectedCPUSamplingRate
	}
	if c.bad {
		return c.err(d, "Trace fields")
	}
	if d.ptr != 4 && d.ptr != 8 {
		return d.errAt(at+32, nil, "pointer size %d: expected 4 or 8", d.ptr)
	}
	if d.freq <= 0 {
		return d.errAt(at+24, nil, "timestamp frequency %d: expected a positive number of ticks per second", d.freq)
	}
	if 1e9%d.freq == 0 {
		d.nsPerTick = uint64(1e9 / d.freq)
	}
	d.haveTrace = true
	return nil
}

// ---- byte-level reading of the stream outside blocks ----

func (d *decoder) readByte() (byte, error) {
	b, err := d.r.ReadByte()
	if err != nil {
		return 0, err
	}
	d.off++
	return b, nil
}

func (d *decoder) readU32() (uint32, error) {
	b, err := d.readFull(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// readFull reads n small bytes (headers); the result is valid until the next
// read.
func (d *decoder) readFull(n int) ([]byte, error) {
	if cap(d.small) < n {
		d.small = make([]byte, n)
	}
	b := d.small[:n]
	k, err := io.ReadFull(d.r, b)
	d.off += int64(k)
	if err != nil {
		return nil, d.truncated(d.off, fmt.Sprintf("%d bytes", n), err)
	}
	return b, nil
}

// readBounded reads n bytes into the block buffer, growing it only as bytes
// actually arrive, so a corrupt size cannot force a huge allocation. On a
// short read it returns what was read and an error.
func (d *decoder) readBounded(n int64) ([]byte, error) {
	buf := d.buf[:0]
	for int64(len(buf)) < n {
		step := n - int64(len(buf))
		if room := int64(cap(buf) - len(buf)); step > room {
			grow := max(int64(len(buf)), readChunk)
			step = min(step, max(room, grow))
			if step > room {
				nb := make([]byte, len(buf), int64(len(buf))+step)
				copy(nb, buf)
				buf = nb
			}
		}
		k, err := io.ReadFull(d.r, buf[len(buf):len(buf)+int(step)])
		buf = buf[:len(buf)+k]
		d.off += int64(k)
		if err != nil {
			d.buf = buf
			return buf, err
		}
	}
	d.buf = buf
	return buf, nil
}

// ---- errors ----

func (d *decoder) errAt(off int64, err error, format string, args ...any) error {
	return &parse.Error{File: d.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

func (d *decoder) truncated(off int64, what string, err error) error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		return err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return d.errAt(off, io.ErrUnexpectedEOF, "truncated: expected %s", what)
	}
	return d.errAt(off, err, "reading %s", what)
}

func (d *decoder) warnf(format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf(format, args...))
}
