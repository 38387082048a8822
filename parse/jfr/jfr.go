package jfr

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"

	"github.com/grafana/jfr-parser/parser"
	"github.com/grafana/jfr-parser/parser/types/def"

	"github.com/heapest/heapest/parse"
)

// The chunk header: magic, version, then big-endian fields.
const (
	magic      = "FLR\x00"
	headerSize = 68
	// featureCompressedInts is the header's feature bit for LEB128
	// integers, the only encoding the readers here know.
	featureCompressedInts = 1
)

// Detect reports whether head is the start of a JFR recording.
func Detect(head []byte) bool {
	return len(head) >= len(magic) && string(head[:len(magic)]) == magic
}

// Parse reads a JFR recording chunk by chunk and streams its allocation
// events to sink. name is used in errors. With opt.KeepGoing, a recording
// that stops with a bad or truncated chunk keeps the events of the chunks
// before it (and those of the bad chunk already sent), with a warning.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	d := &decoder{name: name, opt: opt, sink: sink, names: interner{}}
	if err := d.run(r); err != nil {
		if !opt.KeepGoing || d.prof.Records == 0 {
			return nil, err
		}
		d.stopped = err
	}
	return d.profile()
}

// decoder holds what outlives a chunk: the output, the names handed out,
// the one chunk buffer (reused), and counts for the warnings.
type decoder struct {
	name  string
	opt   parse.Options
	sink  parse.Sink
	prof  parse.Profile
	rec   parse.Record
	names interner

	hdr    [headerSize]byte
	buf    []byte
	off    int64 // file offset of the next chunk
	chunks int
	// startNanos is the first chunk's start, the zero of Record.Time.
	startNanos uint64
	// seen are the chunks read, by a hash of their bytes, with their
	// number (repeats).
	seen map[uint64]int
	seed maphash.Seed
	// chunkStarts are every chunk's start, in nanoseconds (Source.Chunks).
	chunkStarts []string
	// jvm is the JVM's identity (jvmIdentity), from the first chunk that
	// has a jdk.JVMInformation event.
	jvm string
	// oldSnapshot are the records of the latest chunk's old object
	// samples, sent at the end; oldEvents counts the earlier chunks'
	// (n.old the latest's).
	oldSnapshot []parse.Record
	oldEvents   int

	firsts firstSamples
	held   heldSamples
	// started and ended are when threads started and ended, and
	// blocked when they waited (stalledTails).
	started    threadTimes
	ended      threadTimes
	blocked    blockedTimes
	version    jdkVersion
	vmVersion  bool // version came from java.vm.version (else java.version)
	nextStack  uint64
	stopped    error
	n          counts
	noObjSize  bool // OldObjectSample events without objectSize
	badOldPool error
}

// counts are the events read, by kind, for the profile's detail and
// warnings.
type counts struct {
	samples, inTLAB, outTLAB, old int
	// ignoredTLAB counts TLAB events of chunks that have
	// ObjectAllocationSample events (the same allocations, estimated
	// twice otherwise).
	ignoredTLAB int
	// truncated counts events whose stack was cut at the recording's
	// stack depth.
	truncated int
}

func (d *decoder) errAt(off int64, err error, format string, args ...any) error {
	return &parse.Error{File: d.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// run reads the chunks one after another: each is complete in itself
// (metadata, constant pools, events), so only one is in memory at a time.
func (d *decoder) run(r *bufio.Reader) error {
	for {
		buf, err := d.readChunk(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if d.repeats(buf) {
			d.off += int64(len(buf))
			continue
		}
		if err := d.chunk(buf); err != nil {
			return err
		}
		d.off += int64(len(buf))
		d.chunks++
	}
}

// repeats reports whether buf is a chunk read before, byte for byte, and
// says so in a warning: no recorder writes a chunk twice, but a file
// joined to itself (cat a.jfr a.jfr) holds each twice, and would count
// its allocations twice.
func (d *decoder) repeats(buf []byte) bool {
	if d.seen == nil {
		d.seen, d.seed = map[uint64]int{}, maphash.MakeSeed()
	}
	h := maphash.Bytes(d.seed, buf)
	first, ok := d.seen[h]
	if !ok {
		d.seen[h] = d.chunks + 1
		return false
	}
	d.prof.Warnings = append(d.prof.Warnings, fmt.Sprintf("the chunk at byte %d repeats chunk %d byte for byte (a file joined to itself?): read once", d.off, first))
	return true
}

// readChunk reads the next chunk whole, or returns io.EOF at the end of
// the input. The declared size is read in growing steps, so a header that
// lies costs at most twice the bytes that really follow it.
func (d *decoder) readChunk(r *bufio.Reader) ([]byte, error) {
	n, err := io.ReadFull(r, d.hdr[:])
	switch {
	case n == 0 && err == io.EOF && d.chunks > 0:
		return nil, io.EOF
	case err != nil:
		return nil, d.errAt(d.off+int64(n), err, "chunk %d: truncated chunk header (%d bytes expected, %d read)", d.chunks+1, headerSize, n)
	}
	if string(d.hdr[:4]) != magic {
		return nil, d.errAt(d.off, nil, "chunk %d: expected the JFR magic %q, got %q", d.chunks+1, magic, d.hdr[:4])
	}
	major, minor := binary.BigEndian.Uint16(d.hdr[4:]), binary.BigEndian.Uint16(d.hdr[6:])
	if major != 2 {
		return nil, d.errAt(d.off+4, nil, "chunk %d: JFR file format %d.%d; only 2.x (OpenJDK 11 and later, 8u262 and later) is read", d.chunks+1, major, minor)
	}
	if f := binary.BigEndian.Uint32(d.hdr[64:]); f&featureCompressedInts == 0 {
		return nil, d.errAt(d.off+64, nil, "chunk %d: integers are not compressed (features %#x); every JDK compresses them, this reader needs it", d.chunks+1, f)
	}
	size := binary.BigEndian.Uint64(d.hdr[8:])
	limit := uint64(d.opt.MaxDecompressed)
	if limit == 0 {
		limit = parse.DefaultMaxDecompressed
	}
	switch {
	case size == 0:
		return nil, d.errAt(d.off+8, nil, "chunk %d: size 0: the chunk was never finished (a recording still being written, or a JVM that died)", d.chunks+1)
	case size <= headerSize || size > limit:
		return nil, d.errAt(d.off+8, nil, "chunk %d: size %d outside (%d, %d]", d.chunks+1, size, headerSize, limit)
	case d.opt.SizeHint > 0 && uint64(d.off)+size > uint64(d.opt.SizeHint):
		return nil, d.errAt(d.off+8, nil, "chunk %d: truncated: its header says %d bytes, %d are left in the file", d.chunks+1, size, uint64(d.opt.SizeHint)-uint64(d.off))
	}
	buf := append(d.buf[:0], d.hdr[:]...)
	for uint64(len(buf)) < size {
		step := min(size-uint64(len(buf)), uint64(max(len(buf), 1<<20)))
		at := len(buf)
		if uint64(cap(buf)-at) < step {
			grown := make([]byte, at, uint64(at)+max(step, uint64(at)))
			copy(grown, buf)
			buf = grown
		}
		buf = buf[:at+int(step)]
		if n, err := io.ReadFull(r, buf[at:]); err != nil {
			return nil, d.errAt(d.off+int64(at+n), err, "chunk %d: truncated: its header says %d bytes, the input ends after %d", d.chunks+1, size, at+n)
		}
	}
	d.buf = buf
	return buf, nil
}

// next is the library's ParseEvent, with its panics on malformed input
// turned into errors.
func next(p *parser.Parser) (typ def.TypeID, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("malformed recording (the JFR reader failed: %v)", v)
		}
	}()
	return p.ParseEvent()
}

// chunk reads one chunk's events into records.
func (d *decoder) chunk(buf []byte) error {
	sc, err := validate(buf)
	if err != nil {
		return d.located(err, "damaged chunk")
	}
	p := parser.NewParser(buf, parser.Options{})
	// The first call reads the chunk's metadata and constant pools, then
	// returns its first event that the library decodes.
	typ, err := next(p)
	if err != nil && err != io.EOF {
		return d.errAt(d.off, err, "chunk %d", d.chunks+1)
	}
	c, err := d.newChunk(p, sc)
	if err != nil {
		return err
	}
	for err == nil {
		c.event(typ)
		typ, err = next(p)
	}
	if err != io.EOF {
		return d.errAt(d.off, err, "chunk %d: after %d records", d.chunks+1, d.prof.Records)
	}
	return nil
}

// located turns an error at a chunk byte into one at a file offset.
func (d *decoder) located(err error, what string) error {
	var ce *chunkError
	if errors.As(err, &ce) {
		return d.errAt(d.off+int64(ce.pos), nil, "chunk %d: %s: %s", d.chunks+1, what, ce.msg)
	}
	return d.errAt(d.off, err, "chunk %d: %s", d.chunks+1, what)
}

func (d *decoder) warnf(format string, args ...any) {
	d.prof.Warnings = append(d.prof.Warnings, fmt.Sprintf(format, args...))
}

// profile is what the recording says about itself, with its caveats.
func (d *decoder) profile() (*parse.Profile, error) {
	stalled := ""
	if d.n.samples > 0 { // only the throttled samples leave tails unsampled
		stalled = d.stalledTails()
	}
	d.flushSamples()
	p := &d.prof
	n := &d.n
	if n.samples+n.inTLAB+n.outTLAB+n.old == 0 {
		return nil, d.errAt(-1, nil, "no allocation events in %d chunk(s): the recording has no jdk.ObjectAllocationSample, "+
			"jdk.ObjectAllocationInNewTLAB/OutsideTLAB or jdk.OldObjectSample events (record with settings=profile, "+
			"or enable jdk.ObjectAllocationSample)", d.chunks)
	}
	p.Source.Format = "jfr"
	// When the recording started: its first chunk's start, which every
	// dump of the recording begins with (fleet.RecordingProcess).
	p.Source.Time = int64(d.startNanos)
	p.Source.Recording = strconv.FormatInt(int64(d.startNanos), 10)
	p.Source.Chunks = d.chunkStarts
	p.Source.Samples = float64(n.samples + n.inTLAB + n.outTLAB + n.old)
	p.Source.Detail = d.detail()
	p.HasAlloc = n.samples+n.inTLAB+n.outTLAB > 0
	p.HasInUse = n.old > 0
	if p.HasInUse {
		// The leak profiler's objects are the JVM's: every recording's
		// dump lists those still alive again.
		p.Source.Heap = d.jvm
	}
	p.Timed = true
	if d.opt.Rate > 0 {
		d.warnf("--rate %s ignored: JFR events carry their own weights (bytes), not a sampling period",
			parse.RateText(d.opt.Rate))
	}
	if n.samples > 0 {
		if w := firstSampleWarning(d.version); w != "" {
			d.warnf("%s%s", w, d.firsts.suspects(d.started))
		}
	}
	if stalled != "" {
		d.warnf("%s", stalled)
	}
	if n.ignoredTLAB > 0 {
		d.warnf("%d ObjectAllocationInNewTLAB/OutsideTLAB events ignored: their chunks have ObjectAllocationSample events, which estimate the same allocations", n.ignoredTLAB)
	}
	if n.inTLAB > 0 {
		d.warnf("%d ObjectAllocationInNewTLAB events are estimated with the TLAB size as the weight of the object that opened the TLAB (docs/jfr.md): "+
			"a TLAB's bytes all go to its first object's class and stack, and producers other than the JDK (async-profiler) write these events with their own meaning", n.inTLAB)
	}
	if n.truncated > 0 {
		d.warnf("%d of %d events have stacks cut at the recording's stack depth (jdk.ObjectAllocationSample#stackdepth, default 64): outer frames are missing from them", n.truncated, int(p.Source.Samples))
	}
	if n.old > 0 {
		which := fmt.Sprintf("%d jdk.OldObjectSample events", n.old)
		if d.oldEvents > 0 {
			which = fmt.Sprintf("the last chunk's %d jdk.OldObjectSample events (of %d: each chunk lists the objects alive at its end again, and the last list is the end's)", n.old, n.old+d.oldEvents)
		}
		d.warnf("%s give the inuse values: live objects the JVM's leak profiler kept (at most old-objects-count, 256 by default, chosen by allocation span), "+
			"counted as they are: not an estimate of the live heap, and no interval", which)
		if d.noObjSize {
			d.warnf("this JDK's OldObjectSample events have no objectSize (added after JDK 17): inuse_space is 0 for them; use --value inuse_objects")
		}
	}
	if d.badOldPool != nil {
		d.warnf("the classes of old object samples are unknown: %v", d.badOldPool)
	}
	if d.stopped != nil {
		d.warnf("stopped early (--keep-going): %v; the %d records before it were kept, everything after it was skipped", d.stopped, p.Records)
		p.Source.Salvaged = true
	}
	return p, nil
}

// detail names the runtime and the estimator for the report header.
func (d *decoder) detail() string {
	s := "JDK version unknown"
	if d.version.known() {
		s = "JDK " + d.version.text
	}
	n := d.n
	switch {
	case n.samples > 0 && n.inTLAB+n.outTLAB > 0:
		s += fmt.Sprintf(", %d ObjectAllocationSample weights and %d TLAB events", n.samples, n.inTLAB+n.outTLAB)
	case n.samples > 0:
		s += fmt.Sprintf(", %d ObjectAllocationSample weights", n.samples)
	case n.inTLAB+n.outTLAB > 0:
		s += fmt.Sprintf(", %d TLAB events", n.inTLAB+n.outTLAB)
	}
	if n.old > 0 {
		s += fmt.Sprintf(", %d old object samples", n.old)
	}
	if d.chunks > 1 {
		s += fmt.Sprintf(", %d chunks", d.chunks)
	}
	return s
}
