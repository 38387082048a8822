package pprof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/heapest/heapest/parse"
	"github.com/klauspost/compress/gzip"
)

// Detect accepts input whose first byte is a field tag profile.proto can
// start with (fields 1–15, varint or length-delimited), or a second gzip
// layer. Protobuf has no magic number, so this is the last format tried.
func Detect(head []byte) bool {
	if len(head) == 0 {
		return false
	}
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	field, wire := head[0]>>3, head[0]&7
	return field >= 1 && field <= 15 && (wire == 0 || wire == 2)
}

// Parse reads a profile.proto and sends its samples to sink as records
// once the whole input has been read (see the package documentation for
// why and how they are kept until then). The Record, its Stack and its Pre
// are reused from call to call, and the next stack is built on the frames
// of the last: the sink copies what it keeps and changes nothing. The
// caller has already removed (and bounded) one gzip layer; a second one is
// removed here under the same bound, a third refused.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	r, closeInner, err := innerGzip(name, r, opt)
	if err != nil {
		return nil, err
	}
	defer closeInner()
	d, err := decodeStream(name, r)
	if err != nil {
		return nil, err
	}
	d.wantLines = opt.Lines
	if err := d.resolve(); err != nil {
		return nil, &parse.Error{File: name, Offset: -1, Msg: "not a valid pprof protobuf (profile.proto)", Err: err}
	}
	return fromProto(d, opt, sink)
}

// innerGzip removes a second gzip layer if there is one.
func innerGzip(name string, r *bufio.Reader, opt parse.Options) (*bufio.Reader, func(), error) {
	nop := func() {}
	head, err := r.Peek(2)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return nil, nop, readError(name, err)
		}
		return nil, nop, &parse.Error{File: name, Offset: -1, Msg: "empty pprof profile"}
	}
	if !isGzip(head) {
		return r, nop, nil
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, gzip.ErrHeader) {
			return nil, nop, &parse.Error{File: name, Offset: 0, Msg: "bad inner gzip header", Err: err}
		}
		return nil, nop, readError(name, err)
	}
	inner := bufio.NewReaderSize(parse.Bounded(name, zr, opt.MaxDecompressed), 64<<10)
	head, err = inner.Peek(2)
	switch {
	case isGzip(head):
		zr.Close()
		return nil, nop, &parse.Error{File: name, Offset: 0, Msg: "gzip nested more than twice: expected a pprof protobuf"}
	case len(head) == 0 && (err == nil || err == io.EOF):
		zr.Close()
		return nil, nop, &parse.Error{File: name, Offset: -1, Msg: "empty pprof profile"}
	}
	return inner, func() { zr.Close() }, nil
}

// readError wraps a read failure, keeping errors that already name the file.
func readError(name string, err error) error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &parse.Error{File: name, Offset: -1, Msg: "truncated gzip input", Err: err, Whole: true}
	}
	return &parse.Error{File: name, Offset: -1, Msg: "reading", Err: err}
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// fromProto recognises the producer of a decoded profile and sends its
// records.
func fromProto(d *decoded, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	types, err := indexTypes(d)
	if err != nil {
		return nil, err
	}
	if isHeapestProfile(d) {
		return readHeapest(d, opt, sink)
	}
	return readProducer(d, types, opt, sink)
}

// readProducer dispatches on the sample types and period.
func readProducer(d *decoded, types sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	switch {
	case types.isGo():
		return readScaledHeap(d, types, opt, "pprof-go", sink)
	case types.isHeapprofd():
		return readHeapprofd(d, types, opt, sink)
	case isV8(d, types):
		return readV8(d, types, opt, sink)
	case types.isObjectsSpace() && d.Period == 1:
		return readComplete(d, types, opt, sink)
	case types.isObjectsSpace() && d.Period <= 0:
		return readTcmalloc(d, types, opt, sink)
	case types.isObjectsSpace():
		// objects/space with a period: a legacy heapz profile converted to
		// proto by pprof, scaled by the same formula as Go's.
		return readScaledHeap(d, types, opt, "pprof", sink)
	case types.inuseSpace >= 0 || types.allocSpace >= 0:
		return readUnknown(d, types, opt, sink)
	}
	return nil, &parse.Error{File: d.name, Offset: -1, Msg: notHeap(d)}
}

// notHeap says what a profile with no heap sample types is, where its
// types tell, and what to give instead.
func notHeap(d *decoded) string {
	has := func(names ...string) bool {
		for _, st := range d.SampleType {
			if slices.Contains(names, st.Type) {
				return true
			}
		}
		return false
	}
	types := typeList(d)
	switch {
	case has("alloc_in_new_tlab_bytes", "alloc_outside_tlab_bytes", "alloc_sample_bytes", "live", "malloc_bytes"):
		return fmt.Sprintf("a JFR recording converted to pprof (grafana/jfr-parser, as Pyroscope converts Java profiles: sample types %s): "+
			"its allocation events' weights summed per stack, which give no interval; give heapest the .jfr recording itself", types)
	case has("cpu", "wall", "samples") && !has("space", "bytes"):
		return fmt.Sprintf("a CPU profile (sample types %s), not a heap profile: for a Go program take /debug/pprof/heap (or pprof.WriteHeapProfile)", types)
	case has("contentions", "delay"):
		return fmt.Sprintf("a mutex or block profile (sample types %s), not a heap profile", types)
	case has("goroutine", "threadcreate"):
		return fmt.Sprintf("a %s profile, not a heap profile: for a Go program take /debug/pprof/heap", d.SampleType[0].Type)
	}
	return fmt.Sprintf("not a heap profile: sample types %s (expected inuse_space/alloc_space, objects/space or heapprofd's malloc sizes)", types)
}

// sampleTypes holds the column of each sample type heapest understands, -1
// when absent.
type sampleTypes struct {
	inuseObjects, inuseSpace, allocObjects, allocSpace int
	objects, space                                     int
	heapprofd                                          bool
}

// isGo recognises runtime/pprof's heap profile: alloc_* and inuse_*
// (inuse_* may have been dropped from a delta profile).
func (t sampleTypes) isGo() bool {
	return t.allocObjects >= 0 && t.allocSpace >= 0 && !t.heapprofd &&
		(t.inuseObjects >= 0) == (t.inuseSpace >= 0)
}

func (t sampleTypes) isObjectsSpace() bool { return t.objects >= 0 && t.space >= 0 }

func (t sampleTypes) isHeapprofd() bool { return t.heapprofd }

// Expected units of the sample types heapest reads, by name.
var typeUnits = map[string]string{
	"inuse_objects": "count", "inuse_space": "bytes",
	"alloc_objects": "count", "alloc_space": "bytes",
	"objects": "count", "space": "bytes",
}

// heapprofd's sample type names (traceconv's pprof_builder.cc): the
// "Unreleased" pair is in use, the "Total" pair allocated.
var heapprofdTypes = map[string]struct {
	inuse, space bool
}{
	"Total malloc count": {false, false}, "Total malloc size": {false, true},
	"Unreleased malloc count": {true, false}, "Unreleased malloc size": {true, true},
	"Total allocation count": {false, false}, "Total allocation size": {false, true},
	"Total count": {false, false}, "Total size": {false, true},
	"Unreleased count": {true, false}, "Unreleased size": {true, true},
}

// indexTypes finds the columns of the known sample types, refusing
// duplicated names and known names with the wrong unit: values read from
// the wrong column would be silently wrong.
func indexTypes(d *decoded) (sampleTypes, error) {
	t := sampleTypes{-1, -1, -1, -1, -1, -1, false}
	seen := map[string]bool{}
	for i, st := range d.SampleType {
		if seen[st.Type] {
			return t, &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("inconsistent sample types: %q appears twice", st.Type)}
		}
		seen[st.Type] = true
		if hp, ok := heapprofdTypes[st.Type]; ok {
			want := "count"
			if hp.space {
				want = "bytes"
			}
			if st.Unit != want {
				return t, unitError(d.name, st, want)
			}
			t.heapprofd = true
			t.setHeapprofd(i, hp.inuse, hp.space)
			continue
		}
		want, ok := typeUnits[st.Type]
		if !ok {
			continue
		}
		if st.Unit != want {
			return t, unitError(d.name, st, want)
		}
		t.set(st.Type, i)
	}
	return t, nil
}

func unitError(name string, st valueType, want string) error {
	return &parse.Error{File: name, Offset: -1, Msg: fmt.Sprintf(
		"inconsistent sample types: %s has unit %q, expected %q", st.Type, st.Unit, want)}
}

func (t *sampleTypes) set(typ string, i int) {
	switch typ {
	case "inuse_objects":
		t.inuseObjects = i
	case "inuse_space":
		t.inuseSpace = i
	case "alloc_objects":
		t.allocObjects = i
	case "alloc_space":
		t.allocSpace = i
	case "objects":
		t.objects = i
	case "space":
		t.space = i
	}
}

func (t *sampleTypes) setHeapprofd(i int, inuse, space bool) {
	switch {
	case inuse && space:
		t.inuseSpace = i
	case inuse:
		t.inuseObjects = i
	case space:
		t.allocSpace = i
	default:
		t.allocObjects = i
	}
}

func typeList(d *decoded) string {
	var names []string
	for _, st := range d.SampleType {
		names = append(names, st.Type+"/"+st.Unit)
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// sampleChecker refuses negative values in the columns heapest reads: a
// heap profile has none; a pprof -diff_base result does, and is not a sample
// of anything. One exception is made for delta profiles (parca's, taken over
// DurationNanos), whose alloc_* columns are valid per-period counts but whose
// inuse_* columns are differences of two snapshots: negative in-use values
// there are counted, zeroed, and (for the producers that drop them) the
// in-use pairs removed.
type sampleChecker struct {
	d        *decoded
	t        sampleTypes
	negInUse int
}

// check checks sample i's values, zeroing the in-use values of a delta
// profile's sample where they are negative.
func (c *sampleChecker) check(i int, s *sample) error {
	for _, col := range []int{c.t.allocObjects, c.t.allocSpace, c.t.objects, c.t.space} {
		if col >= 0 && s.Value[col] < 0 {
			return c.negative(i, col, s)
		}
	}
	for _, col := range []int{c.t.inuseObjects, c.t.inuseSpace} {
		if col >= 0 && s.Value[col] < 0 {
			if c.t.allocSpace < 0 {
				return c.negative(i, col, s)
			}
			c.negInUse++
			for _, z := range []int{c.t.inuseObjects, c.t.inuseSpace} {
				if z >= 0 {
					s.Value[z] = 0
				}
			}
			break
		}
	}
	return nil
}

func (c *sampleChecker) negative(i, col int, s *sample) error {
	if slices.Contains(c.d.Comments, DiffComment) {
		return &parse.Error{File: c.d.name, Offset: -1, Msg: "heapest diff's pprof output: NEW's estimates and BASE's negated, " +
			"a difference and no heap profile; open it with go tool pprof, or give heapest diff the two profiles"}
	}
	return &parse.Error{File: c.d.name, Offset: -1, Msg: fmt.Sprintf(
		"sample %d: negative %s value %d (a heap profile has none; a diff of two profiles cannot be unbiased)",
		i, c.d.SampleType[col].Type, s.Value[col])}
}

// delta reports whether the profile is a delta (net/http/pprof's
// ?seconds=N, parca's): taken over DurationNanos, with allocation columns.
// Its in-use columns are then the differences of two snapshots, whether
// or not one of them is negative. So are those of a profile with negative
// in-use values and none in its allocation columns (go tool pprof -proto
// -base=a b): its allocations are those made between the two.
func (c *sampleChecker) delta() bool {
	return c.t.allocSpace >= 0 && (c.t.inuseObjects >= 0 || c.t.inuseSpace >= 0) && (c.d.DurationNanos > 0 || c.negInUse > 0)
}

// deltaWarning is the warning of a delta profile whose in-use pairs were
// dropped.
func (c *sampleChecker) deltaWarning() string {
	neg := ""
	if c.negInUse > 0 {
		neg = fmt.Sprintf(" (negative in %d samples)", c.negInUse)
	}
	if c.d.DurationNanos <= 0 {
		return fmt.Sprintf(
			"a difference of two profiles (go tool pprof -base): its in-use values are differences of two snapshots%s, not heap contents; only alloc_* is read, the allocations made between them (heapest diff compares two snapshots)", neg)
	}
	return fmt.Sprintf(
		"delta profile over %.3gs: its in-use values are differences of two snapshots%s, not heap contents; only alloc_* is read (heapest diff compares two snapshots)",
		float64(c.d.DurationNanos)/1e9, neg)
}

// converter is what a producer's reader tells emit: how to sample and
// convert each sample.
type converter struct {
	chk    *sampleChecker
	scheme parse.Scheme
	rate   float64
	// dropInUse removes the in-use pairs of a delta profile with negative
	// in-use values (Go's and unknown producers'), with a warning.
	dropInUse bool
	counts    func(s *sample) (inuse, alloc parse.Counts)
	// values, when set, says which values (bit i for value i) counts
	// reads for the in-use counts and which for the allocations.
	values func() (inUse, alloc uint64)
	// measured, when set, says which samples no sampler took: a value the
	// producer measured and wrote as a sample (@datadog/pprof's
	// "(external)"), sent as exact.
	measured func(s *sample) bool
}

// emitter sends records: it owns the one Record, its stack and the sums
// finish needs.
type emitter struct {
	d                     *decoded
	out                   *parse.Profile
	sink                  parse.Sink
	rec                   parse.Record
	inuseSamples, allocSm float64
	// The stack sent last is kept: the next sample's stack often starts
	// with the same locations (Go writes related stacks one after the
	// other), whose frames need not be copied again. ends[k] is the number
	// of frames of its first k+1 locations; sentRaw is its location ids
	// as varints.
	ends    []int32
	sentRaw []byte
	// readsInUse and readsAlloc are the kinds of counts the sink reads
	// (parse.Reads, asked once the kinds are settled): when every frame
	// of the profile is named, a sample with none of them is counted but
	// not sent (idle), and its stack is not made.
	readsInUse, readsAlloc bool
}

func newEmitter(d *decoded, out *parse.Profile, sink parse.Sink) *emitter {
	out.DefaultType = d.DefaultSampleType
	return &emitter{d: d, out: out, sink: sink}
}

// send fills the record's stack from the sample's locations and sends it.
func (e *emitter) send(i int, s *sample) error {
	// The leading locations the sample shares with the stack sent last
	// keep their frames.
	pre, _ := sharedVarints(s.raw, e.sentRaw)
	valid := countVarints(s.raw[:pre])
	keep := 0
	if valid > 0 {
		keep = int(e.ends[valid-1])
	}
	locs := s.decodeLocs()
	stack, ids, ends, ok := e.d.stacks.appendStack(e.rec.Stack[:keep], e.rec.FrameIDs[:keep], e.ends[:valid], locs[valid:])
	e.rec.Stack, e.rec.FrameIDs, e.ends = stack, ids, ends
	if !ok {
		e.sentRaw = e.sentRaw[:0]
		return &parse.Error{File: e.d.name, Offset: -1, Msg: fmt.Sprintf("sample %d", i), Err: e.d.check(s, true)}
	}
	e.sentRaw = append(e.sentRaw[:0], s.raw...)
	e.count()
	e.sink.Record(&e.rec)
	return nil
}

// toSend returns how many records emit sends at most: a sample each, or
// when it leaves idle ones unsent, each with a value the sink reads. (A
// collector sized for every sample of a Go heap profile read for an
// in-use value would make its probe arrays ten times the size it fills,
// and fault in each of their pages.)
func (e *emitter) toSend(c converter) int {
	if !e.d.stacks.named || c.values == nil {
		return e.d.samples.n
	}
	inUse, alloc := c.values()
	var read uint64
	if e.readsInUse {
		read |= inUse
	}
	if e.readsAlloc {
		read |= alloc
	}
	if n, ok := e.d.samples.withAny(read); ok {
		return n
	}
	return e.d.samples.n
}

// count counts the record as sent.
func (e *emitter) count() { e.countSamples(e.rec.InUse.Samples, e.rec.Alloc.Samples) }

// countSamples counts a record of the given sample counts, sent or idle.
func (e *emitter) countSamples(inUse, alloc float64) {
	e.inuseSamples += inUse
	e.allocSm += alloc
	e.out.Records++
}

// idle reports whether a record whose in-use and allocation counts are
// zero or not as said changes nothing in the sink (parse.Narrower): a
// record of named frames with nothing the sink reads.
func (e *emitter) idle(inUseZero, allocZero bool) bool {
	return e.d.stacks.named && (!e.readsInUse || inUseZero) && (!e.readsAlloc || allocZero)
}

// finish sets the profile-level fields derived from the records.
func (e *emitter) finish(rate float64) *parse.Profile {
	e.out.Source.Rate = rate
	e.out.Source.Time = e.d.TimeNanos
	e.out.Source.Samples = e.allocSm
	if e.out.HasInUse {
		e.out.Source.Samples = e.inuseSamples
	}
	return e.out
}

// scan reads the samples back once, in order, and calls f for each. With
// full, each is first checked against the tables: that is the pass made
// before any record is sent when needsCheck says a sample may be bad.
func (d *decoded) scan(full bool, f func(i int, s *sample) error) error {
	rd := d.samples.reader()
	for i := range d.samples.n {
		s := rd.next()
		if full {
			s.decodeLocs()
			if err := d.check(s, true); err != nil {
				return &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("sample %d", i), Err: err}
			}
		}
		if f != nil {
			if err := f(i, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// emitted counts what emit skipped or flagged.
type emitted struct {
	// empty counts all-zero samples (e.g. Go's not-yet-published GC
	// cycles), approx those with a pair marked Approx.
	empty, approx int
}

// warnApprox warns of the samples whose pairs emit flagged approximate,
// saying why they are (what they are not).
func (n emitted) warnApprox(out *parse.Profile, why string) {
	if n.approx > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d of %d samples %s; their sample counts are approximate", n.approx, out.Records, why))
	}
}

// emit checks every sample, converts it with c and sends a record for each
// that has something to estimate. A sample whose values and labels repeat
// the previous one's converts to the same pairs, which are reused.
func emit(e *emitter, c converter) (n emitted, err error) {
	e.rec = parse.Record{Stack: e.rec.Stack[:0], FrameIDs: e.rec.FrameIDs[:0], Scheme: c.scheme, Rate: c.rate}
	// Bad samples are found, and a delta profile's negative in-use values
	// counted, before any record is sent: the count decides whether the
	// in-use pairs are kept.
	if e.d.needsCheck() {
		if err := e.d.scan(true, c.chk.check); err != nil {
			return n, err
		}
	}
	drop := c.dropInUse && c.chk.delta()
	if drop {
		e.out.HasInUse = false
		e.out.Source.Delta = true
		e.out.Warnings = append(e.out.Warnings, c.chk.deltaWarning())
	}
	parse.Begin(e.sink, e.out) // which pairs the records have is settled
	e.readsInUse, e.readsAlloc = parse.Reads(e.sink)
	parse.Reserve(e.sink, e.toSend(c))
	var inuse, alloc parse.Counts
	var inZero, allocZero, approx bool
	converted := false
	err = e.d.scan(false, func(i int, s *sample) error {
		if !s.repeat || !converted {
			if err := c.chk.check(i, s); err != nil {
				return err
			}
			inuse, alloc = c.counts(s)
			inZero, allocZero, approx = inuse.IsZero(), alloc.IsZero(), inuse.Approx || alloc.Approx
			converted = true
		}
		if approx {
			n.approx++
		}
		switch {
		case inZero && allocZero:
			n.empty++
			return nil
		case drop && allocZero:
			return nil
		case e.idle(inZero || drop, allocZero):
			// Every location is known: checked before (needsCheck).
			if drop {
				e.countSamples(0, alloc.Samples)
			} else {
				e.countSamples(inuse.Samples, alloc.Samples)
			}
			return nil
		}
		e.rec.InUse, e.rec.Alloc = inuse, alloc
		if c.measured != nil {
			e.rec.Scheme, e.rec.Rate = c.scheme, c.rate
			if c.measured(s) {
				e.rec.Scheme, e.rec.Rate = parse.Exact, 1
			}
		}
		if drop {
			e.rec.InUse = parse.Counts{}
		}
		return e.send(i, s)
	})
	return n, err
}
