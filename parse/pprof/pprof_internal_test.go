package pprof

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/ci"
)

// TestStatsEncodingRoundTrip: every field of ci.Stats survives the label
// encoding bit for bit, including awkward floats.
func TestStatsEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	awkward := []float64{0, 1, 0.1, 1.0 / 3, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, math.Inf(1), 524288}
	f := func() float64 {
		if rng.Intn(3) == 0 {
			return awkward[rng.Intn(len(awkward))]
		}
		return rng.ExpFloat64() * math.Pow(10, float64(rng.Intn(30)-10))
	}
	for i := 0; i < 2000; i++ {
		// Every field is set, by reflection, so that fields added to
		// ci.Stats later are covered too.
		var s ci.Stats
		v := reflect.ValueOf(&s).Elem()
		for k := 0; k < v.NumField(); k++ {
			switch fld := v.Field(k); fld.Kind() {
			case reflect.Float64:
				fld.SetFloat(f())
			case reflect.Int64:
				fld.SetInt(rng.Int63n(1 << 40))
			case reflect.Bool:
				fld.SetBool(rng.Intn(2) == 0)
			default:
				t.Fatalf("ci.Stats field %s has kind %s, which EncodeStats does not handle", v.Type().Field(k).Name, fld.Kind())
			}
		}
		got, err := DecodeStats(EncodeStats(s))
		if err != nil || got != s {
			t.Fatalf("%+v\nencoded %q\ndecoded %+v (%v)", s, EncodeStats(s), got, err)
		}
	}
	for _, bad := range []string{"", "N=1", "N=x Estimate=1", "N=1 Estimate=1 Future=3", "N=1 Estimate=NaN",
		"N=1 Estimate=1 Mixed=yes", "N=-1 Estimate=1", "N=1 Estimate"} {
		if _, err := DecodeStats(bad); err == nil {
			t.Errorf("DecodeStats(%q): no error", bad)
		}
	}
}

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
		if got := detectProto(tt.head); got != tt.want {
			t.Errorf("detectProto(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

// samePprof compares heapest's decoder with google/pprof's on one input:
// sample types, period, comments, and every sample's values, frames and
// labels. It returns "" when they agree.
func samePprof(data []byte) string {
	want, err := profile.ParseUncompressed(data)
	if err != nil || want.CheckValid() != nil {
		return "" // only inputs pprof accepts are compared
	}
	got, err := decodePprof(data)
	if err != nil {
		return fmt.Sprintf("pprof accepts the input, heapest's decoder says %v", err)
	}
	if len(got.SampleType) != len(want.SampleType) || got.Period != want.Period ||
		got.DefaultSampleType != want.DefaultSampleType || !slices.Equal(got.Comments, want.Comments) ||
		got.NumSamples() != len(want.Sample) || len(got.Mappings) != len(want.Mapping) {
		return fmt.Sprintf("header: %+v vs %+v", got, want)
	}
	for i, st := range want.SampleType {
		if got.SampleType[i] != (pbValueType{st.Type, st.Unit}) {
			return fmt.Sprintf("sample type %d: %v vs %v", i, got.SampleType[i], st)
		}
	}
	st := newStacker(got)
	var s pbSample
	for i, ws := range want.Sample {
		if err := got.Sample(i, &s); err != nil {
			return fmt.Sprintf("sample %d: %v", i, err)
		}
		if !slices.Equal(s.Value, ws.Value) {
			return fmt.Sprintf("sample %d values %v vs %v", i, s.Value, ws.Value)
		}
		var wantFrames []Frame
		for _, l := range ws.Location {
			if len(l.Line) == 0 {
				wantFrames = append(wantFrames, Frame{Addr: l.Address})
			}
			for _, ln := range l.Line {
				f := Frame{Addr: l.Address}
				if ln.Function != nil {
					f.Func = ln.Function.Name
				}
				wantFrames = append(wantFrames, f)
			}
		}
		if gotFrames := st.stack(s.locs); !slices.Equal(gotFrames, wantFrames) {
			return fmt.Sprintf("sample %d frames %v vs %v", i, gotFrames, wantFrames)
		}
		for k, vs := range ws.NumLabel {
			if v, ok := s.NumLabel(k); !ok || v != vs[0] {
				return fmt.Sprintf("sample %d numeric label %s: %v vs %v", i, k, v, vs)
			}
		}
		for k, vs := range ws.Label {
			if v, ok := s.Label(k); !ok || v != vs[0] {
				return fmt.Sprintf("sample %d label %s: %q vs %q", i, k, v, vs)
			}
		}
	}
	return ""
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
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "samples", "pprof", "*.pb.gz"))
	more, _ := filepath.Glob(filepath.Join("testdata", "pprof", "*.pb.gz"))
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

// FuzzPprofDecode: heapest's decoder never panics, and agrees with
// google/pprof's on every input pprof accepts.
func FuzzPprofDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "samples", "pprof", "*.pb.gz"))
	more, _ := filepath.Glob(filepath.Join("testdata", "pprof", "*.pb.gz"))
	for _, file := range append(files, more...) {
		// Large seeds make every mutation and minimization slow; the
		// regular tests cover the large files.
		if data, err := os.ReadFile(file); err == nil && len(data) < 32<<10 {
			f.Add(gunzipAll(f, data))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := decodePprof(data); err == nil {
			var s pbSample
			for i := 0; i < p.NumSamples(); i++ {
				p.Sample(i, &s)
			}
		}
		if diff := samePprof(data); diff != "" {
			t.Error(diff)
		}
	})
}
