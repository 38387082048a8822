package pprof

// pprof profile.proto input: Go runtime, tcmalloc, heapprofd and unknown
// producers, and heapest's own output. The legacy text formats are in
// pprof_legacy.go, the per-producer readers in pprof_producers.go.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

func init() {
	Register(Format{Name: "gperftools", Detect: detectLegacyHeap, Parse: parseLegacyHeap})
	RegisterFallback(Format{Name: "pprof", Detect: detectProto, Parse: parsePprof})
}

// detectProto accepts input whose first byte is a field tag profile.proto
// can start with (fields 1–15, varint or length-delimited), or a second gzip
// layer. Protobuf has no magic number, so this is the fallback's test.
func detectProto(head []byte) bool {
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	field, wire := head[0]>>3, head[0]&7
	return field >= 1 && field <= 15 && (wire == 0 || wire == 2)
}

// parsePprof reads a whole profile.proto. parse.Read has already removed
// (and bounded) one gzip layer; a second one is removed here under the same
// bound, a third refused.
func parsePprof(name string, r *bufio.Reader, opt Options) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, readError(name, err)
	}
	if isGzip(data) {
		if data, err = gunzipBounded(name, data, opt); err != nil {
			return nil, err
		}
		if isGzip(data) {
			return nil, &Error{File: name, Offset: 0, Msg: "gzip nested more than twice: expected a pprof protobuf"}
		}
	}
	if len(data) == 0 {
		return nil, &Error{File: name, Offset: -1, Msg: "empty pprof profile"}
	}
	p, err := decodePprof(data)
	if err != nil {
		return nil, &Error{File: name, Offset: -1, Msg: "not a valid pprof protobuf (profile.proto)", Err: err}
	}
	return fromProto(name, p, opt)
}

// readError wraps a read failure, keeping errors that already name the file.
func readError(name string, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{File: name, Offset: -1, Msg: "truncated gzip input", Err: err}
	}
	return &Error{File: name, Offset: -1, Msg: "reading", Err: err}
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// gunzipBounded removes one gzip layer, stopping at opt.MaxDecompressed.
func gunzipBounded(name string, data []byte, opt Options) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, &Error{File: name, Offset: 0, Msg: "bad inner gzip header", Err: err}
	}
	max := opt.MaxDecompressed
	if max <= 0 {
		max = DefaultMaxDecompressed
	}
	out, err := io.ReadAll(&boundedReader{r: zr, left: max, name: name})
	if err != nil {
		return nil, readError(name, err)
	}
	return out, nil
}

// fromProto recognises the producer of a decoded profile and converts it.
func fromProto(name string, p *pbProfile, opt Options) (*Profile, error) {
	types, err := indexTypes(name, p)
	if err != nil {
		return nil, err
	}
	if isHeapestProfile(p) {
		return readHeapest(name, p)
	}
	return readProducer(name, p, types, opt)
}

// readProducer dispatches on the sample types and period.
func readProducer(name string, p *pbProfile, types sampleTypes, opt Options) (*Profile, error) {
	switch {
	case types.isGo():
		return readScaledHeap(name, p, types, opt, "pprof-go")
	case types.isHeapprofd():
		return readHeapprofd(name, p, types, opt)
	case types.isObjectsSpace() && p.Period <= 1:
		return readTcmalloc(name, p, types, opt)
	case types.isObjectsSpace():
		// objects/space with a period: a legacy heapz profile converted to
		// proto by pprof, scaled by the same formula as Go's.
		return readScaledHeap(name, p, types, opt, "pprof")
	case types.inuseSpace >= 0 || types.allocSpace >= 0:
		return readUnknown(name, p, types, opt)
	}
	return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf(
		"not a heap profile: sample types %s (expected inuse_space/alloc_space, objects/space or heapprofd's malloc sizes)",
		typeList(p))}
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
func indexTypes(name string, p *pbProfile) (sampleTypes, error) {
	t := sampleTypes{-1, -1, -1, -1, -1, -1, false}
	seen := map[string]bool{}
	for i, st := range p.SampleType {
		if seen[st.Type] {
			return t, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("inconsistent sample types: %q appears twice", st.Type)}
		}
		seen[st.Type] = true
		if hp, ok := heapprofdTypes[st.Type]; ok {
			want := "count"
			if hp.space {
				want = "bytes"
			}
			if st.Unit != want {
				return t, unitError(name, st, want)
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
			return t, unitError(name, st, want)
		}
		t.set(st.Type, i)
	}
	return t, nil
}

func unitError(name string, st pbValueType, want string) error {
	return &Error{File: name, Offset: -1, Msg: fmt.Sprintf(
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

func typeList(p *pbProfile) string {
	var names []string
	for _, st := range p.SampleType {
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
// there are counted, and dropInUse then removes the in-use pairs.
type sampleChecker struct {
	name     string
	p        *pbProfile
	t        sampleTypes
	negInUse int
}

// check decodes sample i into s and checks its values.
func (c *sampleChecker) check(i int, s *pbSample) error {
	if err := c.p.Sample(i, s); err != nil {
		return &Error{File: c.name, Offset: -1, Msg: fmt.Sprintf("sample %d", i), Err: err}
	}
	for _, col := range []int{c.t.allocObjects, c.t.allocSpace, c.t.objects, c.t.space} {
		if col >= 0 && s.Value[col] < 0 {
			return c.negative(i, col, s)
		}
	}
	for _, col := range []int{c.t.inuseObjects, c.t.inuseSpace} {
		if col >= 0 && s.Value[col] < 0 {
			if c.t.allocSpace < 0 || c.p.DurationNanos <= 0 {
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

func (c *sampleChecker) negative(i, col int, s *pbSample) error {
	return &Error{File: c.name, Offset: -1, Msg: fmt.Sprintf(
		"sample %d: negative %s value %d (a heap profile has none; a diff of two profiles cannot be unbiased)",
		i, c.p.SampleType[col].Type, s.Value[col])}
}

// dropInUse removes the in-use pairs of a delta profile that had negative
// in-use values, with a warning.
func (c *sampleChecker) dropInUse(out *Profile) {
	if c.negInUse == 0 {
		return
	}
	out.HasInUse = false
	kept := out.Records[:0]
	for _, r := range out.Records {
		r.InUse = Counts{}
		if !r.Alloc.IsZero() {
			kept = append(kept, r)
		}
	}
	out.Records = kept
	out.Warnings = append(out.Warnings, fmt.Sprintf(
		"delta profile over %.3gs with negative in-use values in %d samples: in-use values of a delta are differences of two snapshots, not heap contents; only alloc_* is read",
		float64(c.p.DurationNanos)/1e9, c.negInUse))
}

// newProfile fills what every pprof-derived Profile shares: mappings and an
// empty record slice of the right capacity.
func newProfile(p *pbProfile, format string) *Profile {
	return &Profile{Source: Source{Format: format}, Records: make([]Record, 0, p.NumSamples()), Mappings: p.Mappings}
}

// stacker turns location lists into leaf-first Frame stacks, expanding
// inlined frames (a location's first line is the innermost). Stacks are
// carved from large chunks: a profile has many short stacks, and one
// allocation per stack would dominate parsing time. A sample repeating its
// predecessor's location list (Go writes one sample per (stack, size))
// shares its stack.
type stacker struct {
	p     *pbProfile
	dense [][]Frame // by location id, when the profile's ids are dense
	byLoc map[uint64][]Frame
	refs  [][]Frame
	chunk []Frame
	prevL []uint64
	prevS []Frame
}

func newStacker(p *pbProfile) *stacker {
	st := &stacker{p: p, byLoc: map[uint64][]Frame{}}
	if p.dense != nil {
		st.dense = make([][]Frame, len(p.dense))
	}
	return st
}

const stackChunk = 1 << 14

func (st *stacker) stack(locs []uint64) []Frame {
	if st.prevS != nil && slices.Equal(locs, st.prevL) {
		return st.prevS
	}
	st.refs = st.refs[:0]
	n := 0
	for _, id := range locs {
		f := st.frames(id)
		st.refs = append(st.refs, f)
		n += len(f)
	}
	if len(st.chunk)+n > cap(st.chunk) {
		st.chunk = make([]Frame, 0, max(stackChunk, n))
	}
	start := len(st.chunk)
	for _, f := range st.refs {
		st.chunk = append(st.chunk, f...)
	}
	st.prevL = append(st.prevL[:0], locs...)
	st.prevS = st.chunk[start:len(st.chunk):len(st.chunk)]
	return st.prevS
}

func (st *stacker) frames(id uint64) []Frame {
	if st.dense != nil {
		if f := st.dense[id]; f != nil {
			return f
		}
	} else if f, ok := st.byLoc[id]; ok {
		return f
	}
	l := st.p.loc(id) // Sample checked that it exists
	var f []Frame
	for _, ln := range l.lines {
		fn := st.p.functions[ln.fn]
		f = append(f, Frame{Addr: l.addr, Func: fn.name})
	}
	if len(f) == 0 {
		f = []Frame{{Addr: l.addr}}
	}
	if st.dense != nil {
		st.dense[id] = f
	} else {
		st.byLoc[id] = f
	}
	return f
}

// finish sets the profile-level fields derived from the records.
func finish(out *Profile, rate float64) *Profile {
	out.Source.Rate = rate
	var samples float64
	for i := range out.Records {
		if out.HasInUse {
			samples += out.Records[i].InUse.Samples
		} else {
			samples += out.Records[i].Alloc.Samples
		}
	}
	out.Source.Samples = samples
	return out
}
