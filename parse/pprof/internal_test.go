package pprof

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/parse"
)

// TestDetectProto: the fallback accepts what profile.proto can start with
// and rejects text.
func TestDetectProto(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		want bool
	}{
		{[]byte{0x0a, 0x02}, true},       // sample_type
		{[]byte{0x12, 0x00}, true},       // sample
		{[]byte{0x60, 0x80}, true},       // period
		{[]byte{0x1f, 0x8b, 0x08}, true}, // a second gzip layer
		{[]byte("--- heapz 1 ---"), false},
		{[]byte{0x00}, false},
		{[]byte{0x0d}, false}, // field 1, fixed32: not in profile.proto
	} {
		if got := Detect(tt.head); got != tt.want {
			t.Errorf("Detect(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

// decodeAll decodes a profile.proto held in memory and checks its tables.
func decodeAll(data []byte) (*decoded, error) {
	d, err := decodeStream("test", bufio.NewReaderSize(bytes.NewReader(data), 4096))
	if err != nil {
		return nil, err
	}
	return d, d.resolve()
}

// labels returns a sample's labels as pprof reads them: a string when str
// is set, else a number when the number or its unit is set, else nothing.
func labels(d *decoded, s *sample) (nums map[string][]int64, strs map[string][]string) {
	nums, strs = map[string][]int64{}, map[string][]string{}
	for _, l := range s.labels {
		key := string(d.strs.at(int(l.key)))
		switch {
		case l.str != 0:
			strs[key] = append(strs[key], string(d.strs.at(int(l.str))))
		case l.num != 0 || l.unit != 0:
			nums[key] = append(nums[key], l.num)
		}
	}
	return nums, strs
}

// samePprof compares heapest's decoder with google/pprof's on one input:
// sample types, period, comments, mappings, and every sample's values,
// frames and labels. It returns "" when they agree.
func samePprof(data []byte) string {
	want, err := profile.ParseUncompressed(data)
	if err != nil || want.CheckValid() != nil {
		return "" // only inputs pprof accepts are compared
	}
	got, err := decodeAll(data)
	if err != nil {
		return fmt.Sprintf("pprof accepts the input, heapest's decoder says %v", err)
	}
	if len(got.SampleType) != len(want.SampleType) || got.Period != want.Period ||
		got.DefaultSampleType != want.DefaultSampleType || !slices.Equal(got.Comments, want.Comments) ||
		got.samples.n != len(want.Sample) || len(got.Mappings) != len(want.Mapping) {
		return fmt.Sprintf("header: %+v vs %+v", got, want)
	}
	for i, st := range want.SampleType {
		if got.SampleType[i] != (valueType{st.Type, st.Unit}) {
			return fmt.Sprintf("sample type %d: %v vs %v", i, got.SampleType[i], st)
		}
	}
	for i, m := range want.Mapping {
		g := got.Mappings[i]
		if g.Start != m.Start || g.Limit != m.Limit || g.Offset != m.Offset || g.File != m.File || g.BuildID != m.BuildID {
			return fmt.Sprintf("mapping %d: %+v vs %+v", i, g, m)
		}
	}
	var diff string
	err = got.scan(true, func(i int, s *sample) error {
		ws := want.Sample[i]
		if !slices.Equal(s.Value, ws.Value) {
			diff = fmt.Sprintf("sample %d values %v vs %v", i, s.Value, ws.Value)
			return errors.New(diff)
		}
		var wantFrames []parse.Frame
		for _, l := range ws.Location {
			if len(l.Line) == 0 {
				wantFrames = append(wantFrames, parse.Frame{Addr: l.Address})
			}
			for _, ln := range l.Line {
				f := parse.Frame{Addr: l.Address}
				if ln.Function != nil {
					f.Func = ln.Function.Name
				}
				wantFrames = append(wantFrames, f)
			}
		}
		gotFrames, gotIDs, _, _ := got.stacks.appendStack(nil, nil, nil, s.locs)
		if !slices.Equal(gotFrames, wantFrames) {
			diff = fmt.Sprintf("sample %d frames %v vs %v", i, gotFrames, wantFrames)
			return errors.New(diff)
		}
		for j, id := range gotIDs { // an id names one frame
			if id == 0 || got.stacks.frames[id-1] != gotFrames[j] || len(gotIDs) != len(gotFrames) {
				diff = fmt.Sprintf("sample %d frame %d: id %d for %v", i, j, id, gotFrames[j])
				return errors.New(diff)
			}
		}
		nums, strs := labels(got, s)
		for k, vs := range ws.NumLabel {
			if !slices.Equal(nums[k], vs) {
				diff = fmt.Sprintf("sample %d numeric label %s: %v vs %v", i, k, nums[k], vs)
				return errors.New(diff)
			}
		}
		for k, vs := range ws.Label {
			if !slices.Equal(strs[k], vs) {
				diff = fmt.Sprintf("sample %d label %s: %q vs %q", i, k, strs[k], vs)
				return errors.New(diff)
			}
		}
		if len(nums) != len(ws.NumLabel) || len(strs) != len(ws.Label) {
			diff = fmt.Sprintf("sample %d labels %v %v vs %v %v", i, nums, strs, ws.NumLabel, ws.Label)
			return errors.New(diff)
		}
		return nil
	})
	if diff == "" && err != nil {
		diff = fmt.Sprintf("pprof accepts the input, heapest's decoder says %v", err)
	}
	return diff
}

func gunzipAll(t testing.TB, data []byte) []byte {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return data
	}
	out, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return data
	}
	return out
}

// TestPprofDecoderMatchesPprof: heapest's decoder reads every real proto
// exactly as google/pprof's profile package does.
func TestPprofDecoderMatchesPprof(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "samples", "pprof", "*.pb.gz"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.pb.gz"))
	files = append(files, more...)
	if len(files) < 2 {
		t.Skip("no pprof sample files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := samePprof(gunzipAll(t, data)); diff != "" {
			t.Errorf("%s: %s", filepath.Base(f), diff)
		}
	}
}

// smallSeed cuts a profile down to its first few samples and what they
// use: large seeds make every mutation and minimization slow (minimizing
// a 50 KB input takes the fuzzer a minute), and the regular tests read the
// whole files.
func smallSeed(t testing.TB, data []byte) []byte {
	if len(data) < 8<<10 {
		return data
	}
	p, err := profile.ParseUncompressed(data)
	if err != nil {
		t.Fatal(err)
	}
	p.Sample = p.Sample[:min(len(p.Sample), 6)]
	p = p.Compact()
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzPprofDecode: heapest's decoder never panics, and agrees with
// google/pprof's on every input pprof accepts.
func FuzzPprofDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "samples", "pprof", "*.pb.gz"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.pb.gz"))
	for _, file := range append(files, more...) {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(smallSeed(f, gunzipAll(f, data)))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := decodeAll(data); err == nil {
			d.scan(true, nil)
		}
		if diff := samePprof(data); diff != "" {
			t.Error(diff)
		}
	})
}

// withAny counts the samples with some value of a mask not zero, and
// says so when it cannot (a value past the eighth).
func TestWithAny(t *testing.T) {
	var b sampleBuf
	for _, vals := range [][]int64{{1, 0, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 0}, {3, 4, 5, 6}, {0, -1, 0, 0}} {
		b.countNonzero(vals)
	}
	for _, tt := range []struct {
		mask uint64
		n    int
		ok   bool
	}{{0b0001, 2, true}, {0b1100, 2, true}, {0b0010, 2, true}, {0b1111, 4, true}, {0, 0, true}, {1 << 8, 0, false}} {
		if n, ok := b.withAny(tt.mask); n != tt.n || ok != tt.ok {
			t.Errorf("withAny(%b) = %d, %v; want %d, %v", tt.mask, n, ok, tt.n, tt.ok)
		}
	}
	b.countNonzero(make([]int64, 9))
	if _, ok := b.withAny(1); ok {
		t.Error("withAny known after a sample of nine values")
	}
}

// parseSampleFast reads the messages every writer makes as parseSample's
// general loop does, and leaves every other message to it: a sample read
// either way has the same location ids, values and labels.
func TestParseSampleFast(t *testing.T) {
	key := func(field, wire int) []byte { return binary.AppendUvarint(nil, uint64(field<<3|wire)) }
	bytesField := func(field int, payload []byte) []byte {
		b := append(key(field, pbWireBytes), binary.AppendUvarint(nil, uint64(len(payload)))...)
		return append(b, payload...)
	}
	varints := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	label := bytesField(3, append(append(key(1, pbWireVarint), 5), append(key(3, pbWireVarint), 64)...))
	longLocs := make([]uint64, 100) // a packed field of more than 127 bytes: a two-byte length
	for i := range longLocs {
		longLocs[i] = uint64(200 + i)
	}
	cases := []struct {
		name string
		msg  []byte
		fast bool
	}{
		{"as Go writes it", concat(bytesField(1, varints(1, 2, 3)), bytesField(2, varints(10, 20, 30, 40)), label), true},
		{"a two-byte length", concat(bytesField(1, varints(longLocs...)), bytesField(2, varints(1, 2, 3, 4))), true},
		{"no locations", bytesField(2, varints(1, 2, 3, 4)), true},
		{"empty", nil, true},
		{"values not packed", concat(bytesField(1, varints(1, 2)), key(2, pbWireVarint), varints(7), key(2, pbWireVarint), varints(8)), false},
		{"two location fields", concat(bytesField(1, varints(1)), bytesField(1, varints(2))), false},
		{"an unknown field", concat(bytesField(1, varints(1)), key(9, pbWireVarint), varints(1)), false},
		{"cut short", bytesField(1, varints(1, 2, 3))[:3], false},
	}
	for _, tc := range cases {
		var fast, slow sample
		fast.locs, slow.locs = fast.locs[:0], slow.locs[:0]
		if ok := parseSampleFast(tc.msg, &fast); ok != tc.fast {
			t.Errorf("%s: parseSampleFast took it %v, want %v", tc.name, ok, tc.fast)
		}
		errSlow := parseSample(tc.msg, &slow)
		if !tc.fast {
			continue // parseSample's own answer, checked by the decoder tests
		}
		if errSlow != nil {
			t.Fatalf("%s: %v", tc.name, errSlow)
		}
		if err := decodeValues(tc.msg, &fast); err != nil {
			t.Fatal(err)
		}
		if err := decodeLabels(tc.msg, &fast); err != nil {
			t.Fatal(err)
		}
		if err := decodeValues(tc.msg, &slow); err != nil {
			t.Fatal(err)
		}
		if err := decodeLabels(tc.msg, &slow); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(fast.decodeLocs(), fast.Value, fast.labels) != fmt.Sprint(slow.decodeLocs(), slow.Value, slow.labels) {
			t.Errorf("%s: fast %v %v %v, general %v %v %v", tc.name, fast.locs, fast.Value, fast.labels, slow.locs, slow.Value, slow.labels)
		}
	}
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Go's debug=1 frame lines are tab-separated (padded with more tabs): a
// generic's shape and a source path may hold spaces. A line without tabs
// splits at white space.
func TestGoFrameFields(t *testing.T) {
	cases := []struct{ line, addr, fn, pos string }{
		{"\t0x4d98b7\tmain.main+0x237\t\t\t\t\t/tmp/jo ann/app/main.go:34", "0x4d98b7", "main.main+0x237", "/tmp/jo ann/app/main.go:34"},
		{"\t0x4a1\tmain.make[go.shape.struct { a int }]+0x2c\t\t/src/m.go:9", "0x4a1", "main.make[go.shape.struct { a int }]+0x2c", "/src/m.go:9"},
		{"\t0x4a1\tmain.f+0x2c", "0x4a1", "main.f+0x2c", ""},
		{"\t0x4a1\t\tmain.f+0x2c\t/src/m.go:9", "0x4a1", "main.f+0x2c", "/src/m.go:9"},
		{" 0x4a1 main.f+0x2c /src/m.go:9", "0x4a1", "main.f+0x2c", "/src/m.go:9"},
	}
	for _, c := range cases {
		addr, fn, pos := goFrameFields([]byte(c.line))
		if string(addr) != c.addr || string(fn) != c.fn || string(pos) != c.pos {
			t.Errorf("%q: %q %q %q, want %q %q %q", c.line, addr, fn, pos, c.addr, c.fn, c.pos)
		}
	}
}
