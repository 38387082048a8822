package pprof_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/pprof"
	"github.com/heapest/heapest/unbias"
)

// sharedSamples is ../shared/samples beside the repository.
func sharedSamples() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "samples")
}

// collected is what one parse gave: its Profile and copies of the records
// it sent, in order.
type collected struct {
	*parse.Profile
	Records []parse.Record
}

// collector is a test sink that keeps a copy of every record: the parser
// reuses the Record, its stack and its Pre.
type collector struct{ recs []parse.Record }

func (c *collector) Record(r *parse.Record) {
	cp := *r
	cp.Stack = slices.Clone(r.Stack)
	if r.Pre != nil {
		pre := *r.Pre
		cp.Pre = &pre
	}
	c.recs = append(c.recs, cp)
}

// read does for this package's two formats what parse/formats.Read does:
// removes one gzip layer, under the bound, and picks the parser by the
// head. It checks that Profile.Records counts what was sent.
func read(name string, r io.Reader, opt parse.Options) (*collected, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &parse.Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(parse.Bounded(name, zr, opt.MaxDecompressed), 64<<10)
	}
	head, _ := br.Peek(4096)
	if len(head) == 0 {
		return nil, &parse.Error{File: name, Offset: -1, Msg: "empty file"}
	}
	parser := pprof.Parse
	switch {
	case pprof.DetectLegacy(head):
		parser = pprof.ParseLegacy
	case pprof.DetectJavaHeap(head):
		parser = pprof.ParseJavaHeap
	case !pprof.Detect(head):
		return nil, &parse.Error{File: name, Offset: -1, Err: parse.ErrUnrecognized, Msg: "cannot read"}
	}
	var c collector
	p, err := parser(name, br, opt, &c)
	if err != nil {
		return nil, err
	}
	if p.Records != len(c.recs) {
		return nil, fmt.Errorf("%s: Profile.Records is %d, %d records were sent", name, p.Records, len(c.recs))
	}
	return &collected{Profile: p, Records: c.recs}, nil
}

func readFile(path string, opt parse.Options) (*collected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(path, f, opt)
}

// pprofFiles are the real pprof-family inputs: the public samples and the
// files this repository's test programs wrote (testdata).
func pprofFiles(t testing.TB) []string {
	var files []string
	for _, pat := range []string{
		filepath.Join(sharedSamples(), "pprof", "*.heap"),
		filepath.Join(sharedSamples(), "pprof", "*.pb.gz"),
		filepath.Join("testdata", "*.heap"),
		filepath.Join("testdata", "*.pb.gz"),
	} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Skipf("pprof sample files not found (%d)", len(files))
	}
	// go-rate0.pb.gz and .txt hold raw samples with no period: read only
	// with --rate (TestRawGoProfile), and go tool pprof shows them unscaled.
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "go-rate0.") })
}

// pprofTypeValue maps go tool pprof's sample types to heapest's values.
var pprofTypeValue = map[string]unbias.Value{
	"inuse_space": unbias.InUseSpace, "inuse_objects": unbias.InUseObjects,
	"alloc_space": unbias.AllocSpace, "alloc_objects": unbias.AllocObjects,
	"space": unbias.InUseSpace, "objects": unbias.InUseObjects,
}

var pprofTotalRE = regexp.MustCompile(`of (-?\d+)\S* total`)

// pprofBinary is the path of go tool pprof's executable (go tool -n pprof):
// running it directly saves go tool's start-up on every call.
func pprofBinary(t *testing.T) string {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	out, err := exec.Command(goTool, "tool", "-n", "pprof").Output()
	if err != nil {
		t.Fatalf("go tool -n pprof: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// pprofTotal asks go tool pprof for a sample type's total, exact to the unit.
func pprofTotal(t *testing.T, pprof, file, typ string) float64 {
	t.Helper()
	out, err := exec.Command(pprof, "-top", "-unit=byte", "-symbolize=none",
		"-nodecount=1", "-sample_index="+typ, file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s", file, err, out)
	}
	m := pprofTotalRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no total in go tool pprof output:\n%s", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestPprofFilesMatchGoToolPprof: every real file parses, and for every
// sample type heapest's unbiased total equals go tool pprof's. Go protos
// carry the producer's values, so they agree exactly; legacy text is scaled
// by pprof per line with truncation, so they agree to 1 unit per record.
func TestPprofFilesMatchGoToolPprof(t *testing.T) {
	pprof := pprofBinary(t)
	for _, file := range pprofFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			p, err := readFile(file, parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pp, err := readWithPprof(file)
			if err != nil {
				t.Fatal(err)
			}
			compared := 0
			for _, st := range pp.SampleType {
				v, ok := pprofTypeValue[st.Type]
				if !ok || (v.IsAlloc() && !p.HasAlloc) || (!v.IsAlloc() && !p.HasInUse) {
					continue
				}
				got := total(p, v)
				want := pprofTotal(t, pprof, file, st.Type)
				tol := 0.0
				if p.Records[0].InUse.Enc == parse.Raw {
					tol = float64(len(p.Records))
				}
				if math.Abs(got-want) > tol {
					t.Errorf("%s: heapest %.1f, go tool pprof %.0f (tolerance %.0f)", st.Type, got, want, tol)
				}
				compared++
			}
			if compared == 0 {
				t.Error("no sample type compared")
			}
		})
	}
}

func readWithPprof(file string) (*profile.Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return profile.Parse(f)
}

// total is the unbiased total of a value over a profile's records.
func total(p *collected, v unbias.Value) float64 {
	var sum float64
	for i := range p.Records {
		sum += unbias.Contribute(&p.Records[i], v).Estimate
	}
	return sum
}

// TestPprofRawCountsFromRuntime: the raw counts read from the Go test
// program's profiles (testdata, proto and debug=1 text) equal the
// runtime's own (runtime.MemProfile, printed by the program).
func TestPprofRawCountsFromRuntime(t *testing.T) {
	for _, name := range []string{"go-heap.pb.gz", "go-debug1.heap"} {
		t.Run(name, func(t *testing.T) {
			p, err := readFile(filepath.Join("testdata", name), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			truth := readTruth(t, strings.TrimSuffix(strings.TrimSuffix(name, ".pb.gz"), ".heap")+".truth.json")
			got := map[string]float64{}
			for _, r := range p.Records {
				got[siteKey(r.Stack, r.Alloc.Size)] += r.Alloc.Samples
			}
			want := map[string]float64{}
			for _, r := range truth.Records {
				if r.AllocObjects > 0 {
					fr := make([]parse.Frame, len(r.Funcs))
					for i, f := range r.Funcs {
						fr[i].Func = f
					}
					want[siteKey(fr, float64(r.AllocBytes/r.AllocObjects))] += float64(r.AllocObjects)
				}
			}
			if len(want) == 0 {
				t.Fatal("no runtime records")
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: %v raw samples, runtime says %v", k, got[k], w)
				}
			}
		})
	}
}

type goTruth struct {
	Records []struct {
		Funcs        []string `json:"funcs"`
		AllocObjects int64    `json:"alloc_objects"`
		AllocBytes   int64    `json:"alloc_bytes"`
	} `json:"records"`
}

func readTruth(t *testing.T, name string) goTruth {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var g goTruth
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// siteKey is the first non-runtime function and the size: writers differ in
// which runtime frames they print.
func siteKey(st []parse.Frame, size float64) string {
	for _, f := range st {
		if !strings.HasPrefix(f.Func, "runtime.") {
			return fmt.Sprintf("%s/%g", f.Func, size)
		}
	}
	return fmt.Sprintf("?/%g", size)
}

// goHeapProfile builds a Go-runtime-style heap proto: per record n samples
// of size b at rate R, scaled and truncated as runtime/pprof's
// scaleHeapSample does.
func goHeapProfile(rate int64, recs [][2]int64, label bool) *profile.Profile {
	fn := &profile.Function{ID: 1, Name: "main.f", Filename: "main.go"}
	loc := &profile.Location{ID: 1, Address: 0x1000, Line: []profile.Line{{Function: fn, Line: 3}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: rate,
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
	}
	for _, r := range recs {
		n, b := r[0], r[1]
		c, s := goScale(n, n*b, rate)
		smp := &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{c, s, c, s}}
		if label {
			smp.NumLabel = map[string][]int64{"bytes": {b}}
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}

// goScale is runtime/pprof's scaleHeapSample (protomem.go).
func goScale(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	avg := float64(size) / float64(count)
	scale := 1 / (1 - math.Exp(-avg/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}

func encode(t testing.TB, p *profile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPprofGoInversion: raw counts invert exactly for every rate and size,
// and are flagged approximate when the "bytes" label is missing.
func TestPprofGoInversion(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, rate := range []int64{2, 4096, 65536, 524288, 8 << 20} {
		var recs [][2]int64
		for i := 0; i < 300; i++ {
			recs = append(recs, [2]int64{1 + rng.Int63n(5000), 8 << rng.Intn(20)})
		}
		p, err := read("go.pb.gz", bytes.NewReader(encode(t, goHeapProfile(rate, recs, true))), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range p.Records {
			if r.InUse.Samples != float64(recs[i][0]) || r.InUse.Size != float64(recs[i][1]) || r.InUse.Approx || r.Rate != float64(rate) {
				t.Fatalf("rate %d record %d: got %+v, want %d samples of %d bytes", rate, i, r.InUse, recs[i][0], recs[i][1])
			}
		}
	}
	p, err := read("nolabel.pb.gz", bytes.NewReader(encode(t, goHeapProfile(524288, [][2]int64{{3, 64}}, false))), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Records[0].InUse; !r.Approx || math.Abs(r.Samples-3) > 0.01 {
		t.Errorf("missing bytes label: %+v, want ≈3 samples marked approximate", r)
	}
}

// TestPprofProducers: tcmalloc, heapprofd and unknown producers are told
// apart and read as the reference describes.
func TestPprofProducers(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	mk := func(types [][2]string, period int64, def string, vals []int64, num map[string][]int64) []byte {
		p := &profile.Profile{Period: period, DefaultSampleType: def, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
			Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for _, ty := range types {
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: ty[0], Unit: ty[1]})
		}
		p.Sample = []*profile.Sample{{Location: []*profile.Location{loc}, Value: vals, NumLabel: num}}
		return encode(t, p)
	}
	// A delta profile (DurationNanos set) with alloc_space and a negative
	// inuse_space but no inuse_objects: the in-use column is dropped.
	deltaP := &profile.Profile{DurationNanos: 1e9, Period: 1, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_space", Unit: "bytes"}},
		Function:   []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{100, -40}},
			{Location: []*profile.Location{loc}, Value: []int64{50, 10}}}}
	delta := encode(t, deltaP)
	// The same with no negative value: its in-use column is differences
	// all the same (net/http/pprof's ?seconds=N of a heap that only grew).
	deltaP.Sample[0].Value[1] = 40
	grown := encode(t, deltaP)
	// Go's own delta (four columns, the bytes label), none negative.
	goDelta := mk([][2]string{{"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}},
		524288, "", []int64{1, 524544, 1, 524544}, map[string][]int64{"bytes": {4096}})
	goP, err := profile.Parse(bytes.NewReader(goDelta))
	if err != nil {
		t.Fatal(err)
	}
	goP.DurationNanos = 2e9
	goDelta = encode(t, goP)
	// go tool pprof -proto -base=a b: two snapshots' difference, no
	// duration, a negative in-use pair and allocations made between them.
	goP.DurationNanos = 0
	goP.Sample[0].Value = []int64{1, 524544, -1, -524544}
	goBase := encode(t, goP)
	// Rust's jemalloc_pprof: inuse_space alone, period type space/bytes,
	// no period, an "executableInfo=" comment per mapping.
	jpP, err := profile.Parse(bytes.NewReader(mk([][2]string{{"inuse_space", "bytes"}}, 0, "", []int64{123456}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	jpP.Comments = []string{"executableInfo=3;1000;1000"}
	jemallocPprof := encode(t, jpP)
	jpP.Comments = []string{"written by hand"}
	inuseSpaceOnly := encode(t, jpP)
	tcTypes := [][2]string{{"objects", "count"}, {"space", "bytes"}, {"resident_space", "bytes"}}
	// One tcmalloc sample: 100 objects of 64 bytes (request 60), 6400 bytes.
	tc := mk(tcTypes, 0, "space", []int64{100, 6400, 6400}, map[string][]int64{"bytes": {64}, "request": {60}})
	hp := mk([][2]string{{"Total malloc count", "count"}, {"Total malloc size", "bytes"},
		{"Unreleased malloc count", "count"}, {"Unreleased malloc size", "bytes"}}, 0, "", []int64{7, 28672, 3, 12288}, nil)
	node := mk([][2]string{{"inuse_objects", "count"}, {"inuse_space", "bytes"}}, 524288, "", []int64{5, 500}, nil)
	// jemalloc 3's heap_v2 text (2 objects, 96 bytes at 2^19) converted
	// to proto by pprof, which scaled it: the mapping of libjemalloc
	// tells it from gperftools' heap sample.
	je3Scale := 1 / -math.Expm1(-48.0/524288)
	je3P, err := profile.Parse(bytes.NewReader(mk([][2]string{{"objects", "count"}, {"space", "bytes"}}, 524288, "",
		[]int64{int64(math.Round(2 * je3Scale)), int64(math.Round(96 * je3Scale))}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	je3P.Mapping = []*profile.Mapping{{ID: 1, Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}}
	je3 := encode(t, je3P)
	tests := []struct {
		name, format string
		data         []byte
		opt          parse.Options
		samples      float64
		scheme       parse.Scheme
		warn         string
	}{
		{"jemalloc 3 text converted to proto", "pprof", je3, parse.Options{}, 2, parse.Geometric, ""},
		{"tcmalloc default rate", "pprof-tcmalloc", tc, parse.Options{}, 6400 * -math.Expm1(-61.0/(2<<20)) / 64, parse.Bernoulli, "2 MiB"},
		{"tcmalloc --rate", "pprof-tcmalloc", tc, parse.Options{Rate: 65536}, 6400 * -math.Expm1(-61.0/65536) / 64, parse.Bernoulli, ""},
		{"heapprofd without rate", "pprof-heapprofd", hp, parse.Options{}, 3, parse.Unknown, "--rate"},
		{"heapprofd --rate", "pprof-heapprofd", hp, parse.Options{Rate: 4096}, 3, parse.Bernoulli, "raw sampled counts"},
		{"unknown producer", "pprof", node, parse.Options{}, 0, parse.Unknown, "unknown heap profile producer"},
		{"jemalloc_pprof conversion", "pprof", jemallocPprof, parse.Options{}, 0, parse.Unknown, "converted to pprof by Rust's jemalloc_pprof"},
		{"inuse_space alone, another producer", "pprof", inuseSpaceOnly, parse.Options{}, 0, parse.Unknown, "unknown heap profile producer"},
		{"unknown delta profile", "pprof", delta, parse.Options{}, 0, parse.Unknown, "(negative in 1 samples), not heap contents; only alloc_* is read"},
		{"unknown delta profile that grew", "pprof", grown, parse.Options{}, 0, parse.Unknown, "differences of two snapshots, not heap contents; only alloc_* is read"},
		{"Go delta profile that grew", "pprof-go", goDelta, parse.Options{}, 0, parse.Bernoulli, "delta profile over 2s: its in-use values are differences"},
		{"Go delta by pprof -base", "pprof-go", goBase, parse.Options{}, 0, parse.Bernoulli, "a difference of two profiles (go tool pprof -base): its in-use values are differences of two snapshots (negative in 1 samples)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read(tt.name, bytes.NewReader(tt.data), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Records[0]
			if p.Source.Format != tt.format || r.Scheme != tt.scheme || math.Abs(r.InUse.Samples-tt.samples) > 1e-9*tt.samples {
				t.Errorf("format %q scheme %v samples %v, want %q %v %v", p.Source.Format, r.Scheme, r.InUse.Samples, tt.format, tt.scheme, tt.samples)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(p.Warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q lack %q", p.Warnings, tt.warn)
			}
			if strings.Contains(tt.name, "delta") && (p.HasInUse || !r.InUse.IsZero() || r.Alloc.Bytes == 0) {
				t.Errorf("delta profile kept in-use values, or lost its allocations: %+v", r)
			}
			if p.Source.Delta != strings.Contains(tt.name, "delta") {
				t.Errorf("Source.Delta %v: its alloc_* values are a window's only in a delta profile", p.Source.Delta)
			}
			if tt.format == "pprof-tcmalloc" && !r.InUse.Approx {
				t.Error("tcmalloc sample counts must be marked approximate")
			}
		})
	}
}

// TestLegacyText: the legacy text formats keep their raw counts.
func TestLegacyText(t *testing.T) {
	tests := []struct {
		name, text, format string
		rate               float64
		inuse, alloc       [2]float64 // first record's (objects, bytes)
		hasAlloc           bool
		scheme             parse.Scheme
		funcs              string
		mappings           int
	}{
		{"go debug=1", "heap profile: 2: 96 [5: 288] @ heap/1048576\n" +
			"2: 96 [5: 240] @ 0x40100a 0x40200b\n#\t0x401009\tmain.f+0x9\t/src/main.go:7\n#\t0x40200a\tmain.main+0xa\t/src/main.go:12\n\n" +
			"# runtime.MemStats\n# Alloc = 1\n",
			"pprof-go", 524288, [2]float64{2, 96}, [2]float64{5, 240}, true, parse.Bernoulli, "main.f;main.main", 0},
		{"gperftools heap_v2", "heap profile:      2:       96 [     2:       96] @ heap_v2/65536\n" +
			"     1:       64 [     1:       64] @ 0x7f01 0x401234\n     1:       32 [     1:       32] @ 0x7f01 0x401299\n" +
			"MAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 12 /bin/prog\n7f00-8000 r-xp 00001000 08:01 13 /lib/libtcmalloc.so\n",
			"gperftools", 65536, [2]float64{1, 64}, [2]float64{}, false, parse.Bernoulli, ";", 2},
		{"jemalloc 3 heap_v2", "heap profile: 2: 96 [5: 288] @ heap_v2/524288\n2: 96 [5: 288] @ 0x7f01 0x401234\n",
			"gperftools", 524288, [2]float64{2, 96}, [2]float64{5, 288}, true, parse.Geometric, ";", 0},
		{"gperftools full heap profile", "heap profile: 1: 10 [ 3: 30] @ heapprofile\n1: 10 [3: 30] @ 0x10\n",
			"gperftools", 1, [2]float64{1, 10}, [2]float64{3, 30}, true, parse.Exact, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read(tt.name, strings.NewReader(tt.text), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := p.Records[0]
			if p.Source.Format != tt.format || p.Source.Rate != tt.rate || p.HasAlloc != tt.hasAlloc || r.Scheme != tt.scheme {
				t.Errorf("format %q rate %v hasAlloc %v scheme %v", p.Source.Format, p.Source.Rate, p.HasAlloc, r.Scheme)
			}
			if r.InUse.Enc != parse.Raw || [2]float64{r.InUse.Objects, r.InUse.Bytes} != tt.inuse ||
				[2]float64{r.Alloc.Objects, r.Alloc.Bytes} != tt.alloc || r.InUse.Samples != tt.inuse[0] {
				t.Errorf("record %+v / %+v, want raw %v / %v", r.InUse, r.Alloc, tt.inuse, tt.alloc)
			}
			var funcs []string
			for _, f := range r.Stack {
				funcs = append(funcs, f.Func)
			}
			if tt.funcs != "" && strings.Join(funcs, ";") != tt.funcs {
				t.Errorf("stack %q, want %q", strings.Join(funcs, ";"), tt.funcs)
			}
			if len(p.Mappings) != tt.mappings {
				t.Errorf("%d mappings, want %d", len(p.Mappings), tt.mappings)
			}
		})
	}
}

// The heap profiler's header counts the mallocs: records beyond them are
// the mmap and sbrk calls HEAP_PROFILE_MMAP adds, tcmalloc's own among
// them (Profile.OwnMemoryTwice); with no malloc counted
// (HEAP_PROFILE_ONLY_MMAP), or none beyond, there is nothing twice.
func TestLegacyOwnMemoryTwice(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		twice      bool
	}{
		{"mallocs and mmaps", "heap profile: 1: 10 [ 1: 10] @ heapprofile\n1: 10 [1: 10] @ 0x10\n1: 4096 [1: 4096] @ 0x20\n", true},
		{"mmaps only", "heap profile: 0: 0 [ 0: 0] @ heapprofile\n1: 4096 [1: 4096] @ 0x20\n", false},
		{"mallocs only", "heap profile: 1: 10 [ 1: 10] @ heapprofile\n1: 10 [1: 10] @ 0x10\n", false},
		{"a sampled heap", "heap profile: 1: 10 [ 1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0x10\n1: 4096 [1: 4096] @ 0x20\n", false},
	} {
		p, err := read(tt.name, strings.NewReader(tt.text), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.OwnMemoryTwice != tt.twice {
			t.Errorf("%s: OwnMemoryTwice %v, want %v", tt.name, p.OwnMemoryTwice, tt.twice)
		}
	}
}

// TestPprofBadInput: every malformed input is an error naming the file.
func TestPprofBadInput(t *testing.T) {
	good := encode(t, goHeapProfile(524288, [][2]int64{{3, 64}, {1, 1 << 20}}, true))
	raw, _ := gzip.NewReader(bytes.NewReader(good))
	var rawBuf bytes.Buffer
	rawBuf.ReadFrom(raw)
	proto := rawBuf.Bytes()

	dup := goHeapProfile(524288, [][2]int64{{1, 64}}, true)
	dup.SampleType[3].Type = "inuse_objects"
	unit := goHeapProfile(524288, [][2]int64{{1, 64}}, true)
	unit.SampleType[1].Unit = "count"
	neg := goHeapProfile(524288, [][2]int64{{1, 64}}, true)
	neg.Sample[0].Value[1] = -5
	noPeriod := goHeapProfile(0, [][2]int64{{1, 64}}, true)
	noPeriod.Sample[0].Value = []int64{1, 64, 1, 64}
	cpu := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
	types := func(tys ...string) *profile.Profile {
		p := &profile.Profile{}
		for _, ty := range tys {
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: ty, Unit: "count"})
		}
		return p
	}
	// Bombs whose head looks like the format, so that detection passes and
	// the bound is what stops them: empty protobuf samples, and a legacy
	// header followed by blank lines.
	bomb := testfile.Gzip(bytes.Repeat([]byte{0x12, 0x00}, 4<<20))
	textBomb := testfile.Gzip(append([]byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n"), bytes.Repeat([]byte("\n"), 8<<20)...))

	tests := []struct {
		name string
		data []byte
		opt  parse.Options
		want string
	}{
		{"truncated gzip", good[:len(good)/2], parse.Options{}, "truncated"},
		{"gzip bomb", bomb, parse.Options{MaxDecompressed: 1 << 20}, "size limit"},
		{"inner gzip bomb", testfile.Gzip(bomb), parse.Options{MaxDecompressed: 1 << 20}, "size limit"},
		{"legacy text gzip bomb", textBomb, parse.Options{MaxDecompressed: 1 << 20}, "size limit"},
		{"triple gzip", testfile.Gzip(testfile.Gzip(testfile.Gzip(proto))), parse.Options{}, "nested"},
		{"protobuf garbage", append([]byte{0x0a, 0xff, 0xff, 0x03}, bytes.Repeat([]byte{0x12, 0x80}, 50)...), parse.Options{}, "protobuf"},
		{"truncated protobuf", proto[:len(proto)-7], parse.Options{}, "protobuf"},
		{"duplicate sample type", encode(t, dup), parse.Options{}, "appears twice"},
		{"wrong unit", encode(t, unit), parse.Options{}, "unit"},
		{"negative value", encode(t, neg), parse.Options{}, "negative"},
		{"missing period", encode(t, noPeriod), parse.Options{}, "sampling period"},
		{"CPU profile", encode(t, cpu), parse.Options{}, "a CPU profile (sample types cpu/nanoseconds), not a heap profile"},
		{"Go goroutine profile", encode(t, types("goroutine")), parse.Options{}, "a goroutine profile, not a heap profile"},
		{"mutex profile", encode(t, types("contentions", "delay")), parse.Options{}, "a mutex or block profile"},
		{"JFR converted by Pyroscope", encode(t, types("alloc_in_new_tlab_objects", "alloc_in_new_tlab_bytes")), parse.Options{}, "a JFR recording converted to pprof"},
		{"not a heap profile", encode(t, types("frobs")), parse.Options{}, "not a heap profile: sample types frobs/count"},
		{"legacy bad header", []byte("heap profile: 1: 2 [3: 4] @ heapx/12\n"), parse.Options{}, "unknown profile kind"},
		{"legacy no period", []byte("heap profile: 1: 2 [1: 2] @ heap_v2\n"), parse.Options{}, "sampling period"},
		{"legacy bad line", []byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2]\n"), parse.Options{}, "expected"},
		{"legacy zero count", []byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n0: 2 [1: 2] @ 0x1\n"), parse.Options{}, "count 0"},
		{"legacy negative", []byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n-1: 2 [1: 2] @ 0x1\n"), parse.Options{}, "bad count"},
		{"legacy bad address", []byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2] @ 0xzz\n"), parse.Options{}, "bad address"},
		// gperftools' GetHeapSample with TCMALLOC_SAMPLE_PARAMETER unset or
		// 0, or libtcmalloc_minimal: as Debian's gperftools 2.10 writes it.
		{"sampling off", []byte("%warn\n%warn This heap profile does not have any data in it, because\n" +
			"%warn the application was run with heap sampling turned off.\n%warn\n" +
			"heap profile:      0:        0 [     0:        0] @ heap_v2/0\n\nMAPPED_LIBRARIES:\n"), parse.Options{},
			":5: the heap sample was taken with tcmalloc's sampling off"},
		{"lines counted after %warn lines", []byte("%warn a note\nheap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2] @ 0xzz\n"),
			parse.Options{}, ":3: bad address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "bad-" + strings.ReplaceAll(tt.name, " ", "-") + ".prof"
			_, err := read(name, bytes.NewReader(tt.data), tt.opt)
			if err == nil {
				t.Fatal("no error")
			}
			var pe *parse.Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want a parse.Error naming %s and saying %q", err, name, tt.want)
			}
		})
	}
}

// FuzzPprof: no input makes the pprof and legacy parsers panic, and
// naming frames by line (--lines) changes their names only: each keeps
// its function's name in front.
func FuzzPprof(f *testing.F) {
	for _, file := range pprofFiles(f) {
		// Large seeds make every mutation and minimization slow; the
		// regular tests cover the large files.
		if data, err := os.ReadFile(file); err == nil && len(data) < 32<<10 {
			f.Add(data)
		}
	}
	f.Add(encode(f, goHeapProfile(4096, [][2]int64{{2, 48}}, true)))
	f.Add([]byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2] @ 0x1\nMAPPED_LIBRARIES:\n1-2 r-xp 0 0:0 0 /x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := read("fuzz", bytes.NewReader(data), parse.Options{MaxDecompressed: 16 << 20})
		if err != nil {
			return
		}
		pl, err := read("fuzz", bytes.NewReader(data), parse.Options{MaxDecompressed: 16 << 20, Lines: true})
		if err != nil {
			t.Fatalf("read by lines: %v; read by functions: no error", err)
		}
		if len(pl.Records) != len(p.Records) {
			t.Fatalf("%d records by lines, %d by functions", len(pl.Records), len(p.Records))
		}
		for i, r := range p.Records {
			l := pl.Records[i]
			if l.InUse != r.InUse || l.Alloc != r.Alloc || len(l.Stack) != len(r.Stack) {
				t.Fatalf("record %d: %+v by lines, %+v by functions", i, l, r)
			}
			for j, fr := range r.Stack {
				if !strings.HasPrefix(l.Stack[j].Func, fr.Func) || l.Stack[j].Addr != fr.Addr {
					t.Fatalf("record %d frame %d: %+v by lines, %+v by functions", i, j, l.Stack[j], fr)
				}
			}
		}
		for i := range p.Records {
			for _, v := range []unbias.Value{unbias.InUseSpace, unbias.AllocObjects} {
				unbias.Contribute(&p.Records[i], v)
			}
		}
	})
}

// FuzzPprofProducers builds well-formed profiles from the fuzzer's bytes —
// any mix of known and unknown sample types and units, periods, durations,
// negative values, labels, heapest markers — so that every producer's
// reader, not only the decoder, meets odd but valid input. None may panic.
func FuzzPprofProducers(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{9, 9, 1, 200, 3, 77, 1, 0, 5, 5, 5})
	f.Add([]byte("heapprofd tcmalloc go delta"))
	names := [][2]string{{"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"},
		{"inuse_space", "bytes"}, {"objects", "count"}, {"space", "bytes"}, {"Total malloc count", "count"},
		{"Total malloc size", "bytes"}, {"Unreleased malloc size", "bytes"}, {"cpu", "nanoseconds"}, {"space", "count"}}
	labels := []string{"bytes", "request", "heapest.inuse_space", "other"}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		// A file of JavaScript makes the profile V8's when its types are;
		// "(external)" is @datadog/pprof's measured row.
		k := next()
		fn := &profile.Function{ID: 1, Name: []string{"f", "(external)"}[k%2], Filename: []string{"", "app.js", "node:internal/main"}[k/2%3]}
		loc := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: fn}}}
		p := &profile.Profile{Period: int64(next() * next()), DurationNanos: int64(next() % 2),
			Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		switch next() % 3 {
		case 0:
			p.PeriodType = &profile.ValueType{Type: "space", Unit: "bytes"}
		case 1:
			p.PeriodType = &profile.ValueType{Type: "inuse_space", Unit: "bytes"}
		}
		if next()%4 == 0 {
			p.Comments = []string{pprof.HeapestMarker}
		}
		for n := 1 + next()%5; n > 0; n-- {
			nm := names[next()%len(names)]
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: nm[0], Unit: nm[1]})
		}
		for n := next() % 6; n > 0; n-- {
			s := &profile.Sample{Location: []*profile.Location{loc}, NumLabel: map[string][]int64{}, Label: map[string][]string{}}
			for range p.SampleType {
				s.Value = append(s.Value, int64(next()-64)*int64(next()))
			}
			if k := next(); k%3 == 0 {
				s.NumLabel[labels[k%len(labels)]] = []int64{int64(next() - 8)}
			} else if k%3 == 1 {
				s.Label[labels[k%len(labels)]] = []string{fmt.Sprintf("N=%d Estimate=%d Rate=%d", next(), next(), next())}
			}
			p.Sample = append(p.Sample, s)
		}
		var buf bytes.Buffer
		if err := p.WriteUncompressed(&buf); err != nil {
			return
		}
		for _, opt := range []parse.Options{{}, {Rate: float64(1 + next()*100)}} {
			out, err := read("fuzz.pb", bytes.NewReader(buf.Bytes()), opt)
			checkNarrowed(t, buf.Bytes(), opt, out, err)
			if err != nil {
				continue
			}
			for i := range out.Records {
				for _, v := range []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects} {
					unbias.Contribute(&out.Records[i], v)
				}
			}
		}
	})
}

// heapestProfile is heapest's pprof output as render/pprof.go writes it:
// the marker comment, one sample per stack, the statistics of each value
// as a "heapest.<value>" string label in ci.Stats' text form (the first
// version's labels, still read).
func heapestProfile(t *testing.T, stacks [][]string, stats []map[string]ci.Stats) []byte {
	t.Helper()
	p := &profile.Profile{Comments: []string{pprof.HeapestMarker},
		SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}, {Type: "alloc_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}}
	funcs := map[string]*profile.Location{}
	for i, st := range stacks {
		s := &profile.Sample{Value: []int64{0, 0}, Label: map[string][]string{}}
		for _, name := range st {
			if funcs[name] == nil {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				p.Function = append(p.Function, fn)
				funcs[name] = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, funcs[name])
			}
			s.Location = append(s.Location, funcs[name])
		}
		for k, st := range p.SampleType {
			// As heapest writes them: each value its estimate rounded.
			s.Value[k] = int64(math.Round(stats[i][st.Type].Estimate))
		}
		for value, v := range stats[i] {
			text, err := v.MarshalText()
			if err != nil {
				t.Fatal(err)
			}
			s.Label[pprof.StatsLabel(value)] = []string{string(text)}
		}
		p.Sample = append(p.Sample, s)
	}
	return encode(t, p)
}

// TestHeapestReadBack: heapest's own output is read back with every
// statistic bit for bit in Record.Pre, the plain fields filled from them,
// and malformed statistics refused.
func TestHeapestReadBack(t *testing.T) {
	a := ci.Stats{N: 2, Estimate: 1e6 + 1.0/3, Var: 4.5e11, Samples: 2, MaxWeight: 524288, P: 0.0078, Unit: 4096, Rate: 524288, Bias: 0.25}
	b := ci.Stats{N: 2, Estimate: 244.140625, Var: 0.1, Samples: 2, MaxWeight: 128, P: 0.0078, Unit: 1, Rate: 524288}
	c := ci.Stats{N: 5, Estimate: 3e7, Var: 1e13, Samples: 9, SamplesBound: true, Mixed: true, Rate: 524288, Approx: true}
	d := ci.Stats{N: 1, Estimate: 10, Samples: 1, Complete: true, P: 1, Unit: 10, Rate: 1}
	stacks := [][]string{{"main.f", "main.main"}, {"main.g", "main.main"}, {"main.h", "main.main"}}
	stats := []map[string]ci.Stats{{"inuse_space": a, "inuse_objects": b}, {"alloc_space": c}, {"alloc_space": c}}
	p, err := read("own.pb.gz", bytes.NewReader(heapestProfile(t, stacks, stats)), parse.Options{Rate: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Format != "heapest" || !p.HasInUse || !p.HasAlloc || len(p.Records) != 3 || p.Source.Rate != 524288 {
		t.Fatalf("format %q inuse %v alloc %v records %d rate %v", p.Source.Format, p.HasInUse, p.HasAlloc, len(p.Records), p.Source.Rate)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "--rate 4096 ignored") {
		t.Errorf("warnings %q: --rate not said to be ignored", p.Warnings)
	}
	r := p.Records[0]
	if r.Pre == nil || r.Pre.Has != [4]bool{true, true, false, false} || r.Pre.Stats[0] != a || r.Pre.Stats[1] != b {
		t.Errorf("record 0 Pre %+v", r.Pre)
	}
	if r.InUse.Bytes != a.Estimate || r.InUse.Objects != b.Estimate || r.InUse.Samples != 2 || r.InUse.Size != 4096 ||
		!r.Alloc.IsZero() || r.Scheme != parse.Bernoulli || r.Rate != 524288 {
		t.Errorf("record 0 %+v", r)
	}
	if got := r.Stack[0].Func + " " + r.Stack[1].Func; got != "main.f main.main" {
		t.Errorf("record 0 stack %s", got)
	}
	for i := 1; i < 3; i++ {
		r := p.Records[i]
		if r.Pre.Has != [4]bool{false, false, true, false} || r.Pre.Stats[2] != c || r.Alloc.Bytes != c.Estimate ||
			!r.Alloc.SamplesBound || !r.Alloc.Approx || r.Alloc.Size != 0 || r.Stack[0].Func != stacks[i][0] {
			t.Errorf("record %d %+v / %+v", i, r, r.Pre)
		}
	}
	// One record's sampling decides its scheme; the profile's rate is 0
	// once records disagree.
	p, err = read("exact.pb.gz", bytes.NewReader(heapestProfile(t, stacks[:2], []map[string]ci.Stats{{"inuse_space": d}, {"inuse_space": a}})), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Records[0].Scheme != parse.Exact || p.Records[0].Rate != 1 || p.Source.Rate != 0 || p.HasAlloc {
		t.Errorf("exact record %+v, profile rate %v", p.Records[0], p.Source.Rate)
	}

	bad := []struct {
		name  string
		stats []map[string]ci.Stats
		label string
		want  string
	}{
		{"no statistics", []map[string]ci.Stats{{"inuse_space": a}, {}}, "", "sample 1 has no heapest statistics label"},
		{"field missing", []map[string]ci.Stats{{"inuse_space": a}}, "N=1 Estimate=2", "label heapest.alloc_space"},
	}
	for _, tt := range bad {
		data := heapestProfile(t, stacks[:len(tt.stats)], tt.stats)
		if tt.label != "" {
			pp, _ := profile.Parse(bytes.NewReader(data))
			pp.Sample[0].Label[pprof.StatsLabel("alloc_space")] = []string{tt.label}
			data = encode(t, pp)
		}
		var c collector
		_, err := pprof.Parse(tt.name, bufio.NewReader(bytes.NewReader(gunzip(t, data))), parse.Options{}, &c)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

// TestHeapestMergedByPprof: pprof's merge of heapest's files adds the
// values of samples whose stacks and labels are equal and keeps one
// label; each such sample is read as that many samples of its statistics
// (said in a warning), and a value that is no multiple of its estimate
// (changed after heapest wrote it) is refused.
func TestHeapestMergedByPprof(t *testing.T) {
	a := ci.Stats{N: 1, Estimate: 4096, Samples: 1, Complete: true, P: 1, Unit: 4096, Rate: 1}
	stacks := [][]string{{"main.f", "main.main"}}
	one, err := profile.Parse(bytes.NewReader(heapestProfile(t, stacks, []map[string]ci.Stats{{"inuse_space": a}})))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := profile.Merge([]*profile.Profile{one, one.Copy(), one.Copy()})
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Sample) != 1 || merged.Sample[0].Value[0] != 3*4096 {
		t.Fatalf("pprof's merge kept %d samples, value %v: the case this reads is one sample of three", len(merged.Sample), merged.Sample[0].Value)
	}
	p, err := read("merged.pb.gz", bytes.NewReader(encode(t, merged)), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := a
	want.Repeat(3)
	if got := p.Records[0].Pre.Stats[0]; got != want || got.Estimate != 3*4096 || got.N != 3 {
		t.Errorf("statistics %+v, want three samples' %+v", got, want)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "1 sample of heapest's output holds several samples' values") {
		t.Errorf("warnings %q: the merge by pprof is not said", w)
	}
	merged.Sample[0].Value[0] = 3*4096 + 1
	if _, err := read("changed.pb.gz", bytes.NewReader(encode(t, merged)), parse.Options{}); err == nil ||
		!strings.Contains(err.Error(), "sample 0: its inuse_space value 12289 is not its statistics' estimate 4096") {
		t.Errorf("a changed value: error %v", err)
	}
}

// TestHeapestStatsLabel: the one "heapest" label of heapest's output
// holds every sample type's statistics, an empty part for a value the
// sample lacks, "=N" for the same statistics as sample type N; each is read
// back bit for bit, and malformed labels are refused with the sample named.
func TestHeapestStatsLabel(t *testing.T) {
	a := ci.Stats{N: 2, Estimate: 1e6 + 1.0/3, Var: 4.5e11, Samples: 2, MaxWeight: 524288, P: 0.0078, Unit: 4096, Rate: 524288}
	c := ci.Stats{N: 5, Estimate: 3e7, Var: 1e13, Samples: 9, SamplesBound: true, Mixed: true, Rate: 524288, Approx: true}
	at, _ := a.MarshalText()
	ct, _ := c.MarshalText()
	tests := []struct {
		name, label string
		want        [2]*ci.Stats // inuse_space, alloc_space; nil: absent
		err         string
	}{
		{"both", string(at) + "|" + string(ct), [2]*ci.Stats{&a, &c}, ""},
		{"same as", string(at) + "|=0", [2]*ci.Stats{&a, &a}, ""},
		{"alloc only", "|" + string(ct), [2]*ci.Stats{nil, &c}, ""},
		{"too few parts", string(at), [2]*ci.Stats{}, "1 statistics for 2 sample types"},
		{"forward reference", "=1|" + string(ct), [2]*ci.Stats{}, `"=1": want =N`},
		{"reference to nothing", "|=0", [2]*ci.Stats{}, `"=0": want =N`},
		{"bad statistics", string(at) + "|N=1", [2]*ci.Stats{}, "alloc_space: statistics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &profile.Profile{Comments: []string{pprof.HeapestMarker},
				SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}, {Type: "alloc_space", Unit: "bytes"}},
				Function:   []*profile.Function{{ID: 1, Name: "main.f"}}}
			p.Location = []*profile.Location{{ID: 1, Line: []profile.Line{{Function: p.Function[0]}}}}
			var vals []int64 // as heapest writes them: the estimates rounded
			for _, w := range tt.want {
				if w == nil {
					vals = append(vals, 0)
				} else {
					vals = append(vals, int64(math.Round(w.Estimate)))
				}
			}
			p.Sample = []*profile.Sample{{Value: vals, Location: p.Location, Label: map[string][]string{pprof.StatsLabelKey: {tt.label}}}}
			got, err := read(tt.name, bytes.NewReader(encode(t, p)), parse.Options{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "sample 0: label heapest") {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pre := got.Records[0].Pre
			for i, v := range []int{0, 2} {
				w := tt.want[i]
				if pre.Has[v] != (w != nil) || w != nil && pre.Stats[v] != *w {
					t.Errorf("value %d: has %v %+v, want %+v", v, pre.Has[v], pre.Stats[v], w)
				}
			}
		})
	}
}

func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRateFlag: --rate supplies a period a file lacks, and on a file that
// carries its own is ignored with a warning saying which period is used.
func TestRateFlag(t *testing.T) {
	goProto := encode(t, goHeapProfile(524288, [][2]int64{{3, 64}}, true))
	unknown := encode(t, &profile.Profile{Period: 100, SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		Sample: []*profile.Sample{{Value: []int64{5}}}})
	tests := []struct {
		name, data string
		rate       float64
		wantRate   float64
		warn       string // "" : no warning mentions --rate
	}{
		{"go proto", string(goProto), 4096, 524288, "--rate 4096 ignored: the file's sampling period 524288 is used"},
		{"go proto same rate", string(goProto), 524288, 524288, ""},
		{"heap_v2", "heap profile: 1: 64 [1: 64] @ heap_v2/65536\n1: 64 [1: 64] @ 0x1\n", 4096, 65536,
			"--rate 4096 ignored: the file's sampling period 65536 is used"},
		{"go debug=1", "heap profile: 1: 64 [2: 128] @ heap/1048576\n1: 64 [2: 128] @ 0x1\n", 4096, 524288,
			"--rate 4096 ignored: the file's sampling period 524288 is used"},
		{"heap_v2 without period", "heap profile: 1: 64 [1: 64] @ heap_v2\n1: 64 [1: 64] @ 0x1\n", 4096, 4096, ""},
		{"heapprofile", "heap profile: 1: 10 [ 3: 30] @ heapprofile\n1: 10 [3: 30] @ 0x10\n", 4096, 1,
			"--rate 4096 ignored: the file records every allocation"},
		{"unknown producer", string(unknown), 4096, 100, "--rate 4096 ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read(tt.name, strings.NewReader(tt.data), parse.Options{Rate: tt.rate})
			if err != nil {
				t.Fatal(err)
			}
			if p.Source.Rate != tt.wantRate || p.Records[0].Rate != tt.wantRate {
				t.Errorf("rate %v (record %v), want %v", p.Source.Rate, p.Records[0].Rate, tt.wantRate)
			}
			var rateWarnings []string
			for _, w := range p.Warnings {
				if strings.Contains(w, "--rate") {
					rateWarnings = append(rateWarnings, w)
				}
			}
			switch {
			case tt.warn == "" && len(rateWarnings) > 0:
				t.Errorf("unexpected warnings %q", rateWarnings)
			case tt.warn != "" && (len(rateWarnings) != 1 || !strings.Contains(rateWarnings[0], tt.warn)):
				t.Errorf("warnings %q, want one saying %q", p.Warnings, tt.warn)
			}
		})
	}
}

// appendSample appends a raw Sample message (protobuf concatenation adds
// it after the others): location ids, values and one numeric label whose
// key is string index key.
func appendSample(proto []byte, locs []uint64, vals []int64, key uint64) []byte {
	var s []byte
	for _, l := range locs {
		s = append(append(s, 0x08), byte(l), byte(l>>7))
		s[len(s)-2] |= 0x80
	}
	for _, v := range vals {
		s = binary.AppendUvarint(append(s, 0x10), uint64(v))
	}
	label := binary.AppendUvarint([]byte{0x08}, key)
	label = append(label, 0x18, 64)
	s = append(append(append(s, 0x1a), byte(len(label))), label...)
	return append(binary.AppendUvarint(append(slices.Clip(proto), 0x12), uint64(len(s))), s...)
}

// TestNoRecordBeforeError: a profile whose last sample is bad fails
// before any record reaches the sink.
func TestNoRecordBeforeError(t *testing.T) {
	var recs [][2]int64
	for i := range 200 {
		recs = append(recs, [2]int64{int64(1 + i%7), 64})
	}
	good := gunzip(t, encode(t, goHeapProfile(524288, recs, true)))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown location", appendSample(good, []uint64{999}, []int64{1, 64, 1, 64}, 0), "sample 200: unknown location 999"},
		{"negative value", appendSample(good, []uint64{1}, []int64{1, -64, 1, 64}, 0), "sample 200: negative alloc_space"},
		{"missing value", appendSample(good, []uint64{1}, []int64{1, 64, 1}, 0), "sample 200: 3 values for 4 sample types"},
		{"label string", appendSample(good, []uint64{1}, []int64{1, 64, 1, 64}, 1e6), "sample 200: string index 1000000"},
	}
	for _, tt := range tests {
		var c collector
		_, err := pprof.Parse(tt.name, bufio.NewReader(bytes.NewReader(tt.data)), parse.Options{}, &c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
		if len(c.recs) != 0 {
			t.Errorf("%s: %d records sent before the error", tt.name, len(c.recs))
		}
	}
	// The same appended sample, well formed, is read as the 201st record.
	p, err := read("good", bytes.NewReader(appendSample(good, []uint64{1}, []int64{1, 64, 1, 64}, 0)), parse.Options{})
	if err != nil || len(p.Records) != 201 {
		t.Fatalf("well-formed appended sample: %v, %d records", err, len(p.Records))
	}
}

// TestParseAllocsFlat: the allocations of a parse do not grow with the
// number of samples or stack lines: records, stacks and packed samples
// reuse their memory.
func TestParseAllocsFlat(t *testing.T) {
	goProto := func(n int) []byte {
		recs := make([][2]int64, n)
		for i := range recs {
			recs[i] = [2]int64{int64(1 + i%5), int64(16 << (i % 9))}
		}
		return gunzip(t, encode(t, goHeapProfile(524288, recs, true)))
	}
	goText := func(n int) []byte {
		var b strings.Builder
		b.WriteString("heap profile: 1: 64 [2: 128] @ heap/1048576\n")
		for i := range n {
			fmt.Fprintf(&b, "1: 64 [2: 128] @ 0x40100a 0x4%05x\n#\t0x401009\tmain.f+0x9\t/src/main.go:7\n#\t0x4%05x\tmain.g%d+0x9\t/src/main.go:12\n\n", 0x100+i%50, 0xff+i%50, i%50)
		}
		return []byte(b.String())
	}
	allocs := func(data []byte, parser func(string, *bufio.Reader, parse.Options, parse.Sink) (*parse.Profile, error)) float64 {
		return testing.AllocsPerRun(5, func() {
			var c countSink
			if _, err := parser("allocs", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &c); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, tt := range []struct {
		name   string
		make   func(int) []byte
		parser func(string, *bufio.Reader, parse.Options, parse.Sink) (*parse.Profile, error)
	}{{"proto", goProto, pprof.Parse}, {"legacy", goText, pprof.ParseLegacy}} {
		small, large := allocs(tt.make(1000), tt.parser), allocs(tt.make(16000), tt.parser)
		// Growing the packed samples' chunks is a few allocations, not one
		// per sample.
		if large-small > 20 {
			t.Errorf("%s: %.0f allocations for 1,000 samples, %.0f for 16,000", tt.name, small, large)
		}
	}
}

type countSink struct{ n int }

func (c *countSink) Record(*parse.Record) { c.n++ }

func (c *countSink) count() int { return c.n }

// FuzzLegacy: no input makes the legacy text parser panic, and what it
// accepts is raw counts at the header's period.
func FuzzLegacy(f *testing.F) {
	for _, file := range pprofFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(file, ".heap") {
			continue
		}
		// Large seeds make every mutation and minimization slow: the
		// beginning of each file, cut at a line, has its shape, and the
		// regular tests read the whole files.
		if len(data) > 2<<10 {
			data = data[:bytes.LastIndexByte(data[:2<<10], '\n')+1]
		}
		f.Add(data)
	}
	f.Add([]byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2] @ 0x1\nMAPPED_LIBRARIES:\n1-2 r-xp 0 0:0 0 /x\n"))
	f.Add([]byte("heap profile: 1: 64 [2: 128] @ heap/1048576\n1: 64 [2: 128] @ 0x40100a\n#\t0x401009\tmain.f+0x9\t/src/main.go:7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !pprof.DetectLegacy(data) {
			return
		}
		var c collector
		// A third are read with Go's frames named by line.
		p, err := pprof.ParseLegacy("fuzz", bufio.NewReader(bytes.NewReader(data)), parse.Options{Lines: len(data)%3 == 0}, &c)
		if err != nil {
			return
		}
		if p.Records != len(c.recs) || !p.HasInUse {
			t.Fatalf("Records %d, %d sent, HasInUse %v", p.Records, len(c.recs), p.HasInUse)
		}
		var samples float64
		for _, r := range c.recs {
			if r.InUse.Enc != parse.Raw || r.InUse.Samples != r.InUse.Objects || r.InUse.Objects < 0 || r.Rate != p.Source.Rate ||
				(r.Scheme != parse.Bernoulli && r.Scheme != parse.Geometric && r.Scheme != parse.Exact) {
				t.Fatalf("record %+v at rate %v", r, p.Source.Rate)
			}
			samples += r.InUse.Samples
		}
		if samples != p.Source.Samples {
			t.Fatalf("Source.Samples %v, records sum to %v", p.Source.Samples, samples)
		}
	})
}

// TestLegacyAddressesAsWritten checks that text stacks keep their return
// addresses as written: the namer adjusts a caller's (one byte back, into
// its call) in one place. Subtracting here too moved a frame that ends a
// function, runtime.goexit+1 at the bottom of every goroutine, into the
// function before it. Null frames are no frames.
func TestLegacyAddressesAsWritten(t *testing.T) {
	for _, c := range []struct {
		name, stack string
		want        []uint64
	}{
		{"as written", "0x401235 0x402001", []uint64{0x401235, 0x402001}},
		// gperftools prints frames with %p: glibc writes a null one as
		// "(nil)" (TCMALLOC_STACKTRACE_METHOD=generic_fp ends walks so).
		{"null frames skipped", "0x401235 (nil) 0x0 0x402001", []uint64{0x401235, 0x402001}},
		{"only a null frame", "(nil)", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := "heap profile: 1: 64 [1: 64] @ heap_v2/524288\n1: 64 [1: 64] @ " + c.stack + "\n"
			p, err := read("t", strings.NewReader(text), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, f := range p.Records[0].Stack {
				got = append(got, f.Addr)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("stack %#x, want %#x", got, c.want)
			}
		})
	}
}

// narrowSink reads in-use counts only (parse.Narrower), counts what it is
// sent and notes what it was told to reserve room for.
type narrowSink struct {
	countSink
	reserved int
}

func (*narrowSink) Reads() (inUse, alloc bool) { return true, false }

func (s *narrowSink) Reserve(n int) { s.reserved = n }

// checkNarrowed reads data again into a sink that reads in-use counts
// only, and checks that it gets what the full read out (or its error)
// got, but the records without Pre and with nothing in use (every frame
// of the fuzzed profiles is named), and the same Profile.Records.
func checkNarrowed(t *testing.T, data []byte, opt parse.Options, out *collected, err error) {
	t.Helper()
	var c narrowCollector
	p, nerr := pprof.Parse("fuzz.pb", bufio.NewReader(bytes.NewReader(data)), opt, &c)
	if (err != nil) != (nerr != nil) {
		t.Fatalf("narrowed read: error %v, full read: error %v", nerr, err)
	}
	if err != nil {
		return
	}
	var want []parse.Record
	for _, r := range out.Records {
		if r.Pre != nil || !r.InUse.IsZero() {
			want = append(want, r)
		}
	}
	if p.Records != out.Profile.Records || len(c.recs) != len(want) {
		t.Fatalf("narrowed read: %d records sent, Profile.Records %d; full read: %d with something in use, Profile.Records %d",
			len(c.recs), p.Records, len(want), out.Profile.Records)
	}
	for i := range want {
		if fmt.Sprintf("%+v", c.recs[i]) != fmt.Sprintf("%+v", want[i]) { // NaN counts compare as written
			t.Fatalf("narrowed read: record %d is %+v, want %+v", i, c.recs[i], want[i])
		}
	}
}

// narrowCollector is a collector that reads in-use counts only.
type narrowCollector struct{ collector }

func (*narrowCollector) Reads() (inUse, alloc bool) { return true, false }

// TestIdleSamplesUnsent: a sample with nothing a Narrower reads is
// counted but not sent when every frame is named, and sent otherwise; a
// sink that does not say what it reads gets every sample. Room is
// reserved for the records sent.
func TestIdleSamplesUnsent(t *testing.T) {
	for _, unnamed := range []bool{false, true} {
		p := goHeapProfile(524288, [][2]int64{{1, 64}, {2, 64}, {3, 64}, {4, 64}, {5, 64}}, true)
		for i, s := range p.Sample {
			if i%2 == 1 {
				s.Value[2], s.Value[3] = 0, 0 // nothing in use
			}
		}
		if unnamed {
			p.Location = append(p.Location, &profile.Location{ID: 2, Address: 0x2000})
			p.Sample[4].Location = append(p.Sample[4].Location, p.Location[1])
		}
		data := encode(t, p)
		wantNarrow := 3 // the samples with something in use
		if unnamed {
			wantNarrow = 5 // a frame is unnamed: every sample is sent
		}
		for _, sink := range []interface {
			parse.Sink
			count() int
		}{&narrowSink{}, &countSink{}} {
			prof, err := pprof.Parse("idle", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, sink)
			if err != nil {
				t.Fatal(err)
			}
			want := 5
			if _, ok := sink.(*narrowSink); ok {
				want = wantNarrow
			}
			if sink.count() != want || prof.Records != 5 {
				t.Errorf("unnamed %v, %T: sent %d records, want %d; Profile.Records %d, want 5", unnamed, sink, sink.count(), want, prof.Records)
			}
			if ns, ok := sink.(*narrowSink); ok && ns.reserved != want {
				t.Errorf("unnamed %v: room reserved for %d records, want %d", unnamed, ns.reserved, want)
			}
		}
	}
}

// TestRawGoProfile: a Go profile written while MemProfileRate was 0 has
// Period 0 and its values unscaled (scaleHeapSample leaves them raw at
// rates 0 and 1): with --rate they are the raw samples taken at that
// period, and without it the file is refused, asking for it.
func TestRawGoProfile(t *testing.T) {
	const file = "testdata/go-rate0.pb.gz"
	if _, err := readFile(file, parse.Options{}); err == nil || !strings.Contains(err.Error(), "pass that rate with --rate") {
		t.Fatalf("without --rate: %v, want a refusal asking for it", err)
	}
	p, err := readFile(file, parse.Options{Rate: 65536})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range p.Records {
		if r.Scheme != parse.Bernoulli || r.Rate != 65536 || r.InUse.Enc != parse.Raw {
			t.Fatalf("record %+v: want raw Bernoulli samples at 65536", r)
		}
		if len(r.Stack) > 0 && r.Stack[0].Func == "main.keepBig" {
			found = true
			if r.InUse.Samples != 33 || r.InUse.Size != 65536 || r.InUse.Bytes != 33*65536 {
				t.Errorf("keepBig: %+v, want its 33 raw samples of 64 KiB", r.InUse)
			}
		}
	}
	if !found {
		t.Error("no record of main.keepBig")
	}
}

// TestLegacyCut: a legacy text profile cut inside a line of its body (a
// stack's counts, its addresses, a frame Go named) is an error, and with
// --keep-going keeps the stacks before that line; cut inside its memory
// map, it loses only the cut mapping, with a warning. (A cut address list
// was read as a whole stack, of a frame "0x4".)
func TestLegacyCut(t *testing.T) {
	for _, c := range []struct {
		file, cutAfter string // the cut falls just after the last cutAfter
		err            bool
	}{
		{"go-debug1.heap", "@ 0x4", true},
		{"go-debug1.heap", "\tmain.allocHuge+0x", true},
		{"gperftools-heap_v2.heap", "0x401d2c 0x7f0601c4", true},
		{"gperftools-heap_v2.heap", "r-xp 00001000 00:00 9983106     /tmp/g", false},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.LastIndex(data, []byte(c.cutAfter))
		if i < 0 {
			t.Fatalf("%s has no %q", c.file, c.cutAfter)
		}
		cut := data[:i+len(c.cutAfter)]
		whole, err := pprof.ParseLegacy(c.file, bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &collector{})
		if err != nil {
			t.Fatal(err)
		}
		var got collector
		p, err := pprof.ParseLegacy(c.file, bufio.NewReader(bytes.NewReader(cut)), parse.Options{}, &got)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), "truncated: last line has no line ending") {
				t.Errorf("%s cut after %q: err %v", c.file, c.cutAfter, err)
			}
			var kept collector
			p, err = pprof.ParseLegacy(c.file, bufio.NewReader(bytes.NewReader(cut)), parse.Options{KeepGoing: true}, &kept)
			if err != nil || !p.Source.Salvaged || len(p.Warnings) == 0 || p.Records != len(kept.recs) || p.Records >= whole.Records {
				t.Errorf("%s cut after %q, --keep-going: %v, %d of %d records, profile %+v", c.file, c.cutAfter, err, len(kept.recs), whole.Records, p)
			}
			continue
		}
		if err != nil || p.Records != whole.Records || len(p.Mappings) >= len(whole.Mappings) ||
			!slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "memory map is cut short") }) {
			t.Errorf("%s cut after %q: %v, %d records of %d, %d mappings of %d, warnings %q", c.file, c.cutAfter, err, p.Records, whole.Records, len(p.Mappings), len(whole.Mappings), p.Warnings)
		}
	}
}

// TestReservedIDAtOnce: an entry of id 0 (reserved) in the mapping,
// location or function table is an error as it arrives, after the rest of
// a real profile: empty messages cost two bytes each, and ten million of
// them had been gigabytes of entries before the error (mappings, which
// were not checked at all, were read).
func TestReservedIDAtOnce(t *testing.T) {
	raw := testfile.Gunzip(t, "testdata/go-heap.pb.gz")
	for _, c := range []struct {
		field byte // the table's field key, length-delimited
		table string
	}{{0x1a, "mapping"}, {0x22, "location"}, {0x2a, "function"}} {
		in := append(slices.Clone(raw), bytes.Repeat([]byte{c.field, 0}, 1000)...)
		_, err := read("bomb.pb", bytes.NewReader(in), parse.Options{})
		if err == nil || !strings.Contains(err.Error(), c.table+" ") || !strings.Contains(err.Error(), ": reserved id 0") {
			t.Errorf("%s of id 0: error %v", c.table, err)
		}
	}
}

// TestNegativePeriod: a negative sampling period is damage, and said to
// be (it was "a heap profile without a sampling period", which --rate
// cannot mend).
func TestNegativePeriod(t *testing.T) {
	_, err := read("neg.pb", bytes.NewReader(encode(t, goHeapProfile(-5, [][2]int64{{3, 64}}, true))), parse.Options{Rate: 4096})
	if err == nil || !strings.Contains(err.Error(), "sampling period -5: no producer writes a negative one") {
		t.Errorf("error %v", err)
	}
}

// TestLegacyMapsJunk: lines in a legacy profile's memory map that are no
// maps lines (a second profile appended) are counted in a warning.
func TestLegacyMapsJunk(t *testing.T) {
	data, err := os.ReadFile("testdata/gperftools-heap_v2.heap")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := pprof.ParseLegacy("a", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &collector{})
	if err != nil {
		t.Fatal(err)
	}
	twice := append(slices.Clone(data), data...)
	p, err := pprof.ParseLegacy("a", bufio.NewReader(bytes.NewReader(twice)), parse.Options{}, &collector{})
	lines := bytes.Count(data, []byte("\n"))
	i := bytes.Index(data, []byte("MAPPED_LIBRARIES:\n"))
	junk := 1 // the second header's nonblank lines, its records and its MAPPED_LIBRARIES line
	for _, l := range bytes.Split(data[:i], []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			junk++
		}
	}
	want := fmt.Sprintf("%d lines of the memory map, the first line %d, are no maps lines", junk, lines+1)
	if err != nil || p.Records != whole.Records || len(p.Warnings) != len(whole.Warnings)+1 || !strings.Contains(p.Warnings[len(p.Warnings)-1], want) {
		t.Errorf("a profile twice: %v, %d records of %d, warnings %q; want %q", err, p.Records, whole.Records, p.Warnings, want)
	}
}

// TestHeapestCombinedHeader: two of heapest's merges combined by a tool
// that keeps one file's comments (go tool pprof -proto a b) hold samples
// of periods outside the header they kept: said in a warning, since what
// the header says it merged is one part's.
func TestHeapestCombinedHeader(t *testing.T) {
	st := func(rate float64) ci.Stats {
		return ci.Stats{N: 1, Estimate: rate, Var: rate * rate, Samples: 1, MaxWeight: rate, P: 0.5, Unit: 4096, Rate: rate}
	}
	stacks := [][]string{{"main.f", "main.main"}, {"main.g", "main.main"}}
	data := heapestProfile(t, stacks, []map[string]ci.Stats{{"inuse_space": st(262144)}, {"inuse_space": st(1048576)}})
	for _, tc := range []struct {
		lo, hi float64
		warns  bool
	}{
		{262144, 262144, true},
		{262144, 1048576, false},
	} {
		pp, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		pp.Comments = append(pp.Comments, pprof.MergedComment(&parse.Merged{Inputs: 20, Processes: 20, RateMin: tc.lo, RateMax: tc.hi}))
		p, err := read("c.pb.gz", bytes.NewReader(encode(t, pp)), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(p.Warnings, "\n"), "outside its header's 256KiB–256KiB")
		if said != tc.warns {
			t.Errorf("header %v–%v: warned %v, want %v: %q", tc.lo, tc.hi, said, tc.warns, p.Warnings)
		}
	}
}

// TestLegacyNoStackAtAll warns when no line has a frame (gperftools'
// x86 unwinder, libtcmalloc_minimal's growth stacks), and not when one
// line has.
func TestLegacyNoStackAtAll(t *testing.T) {
	for _, c := range []struct {
		name, lines string
		warn        bool
	}{
		{"none", "1: 64 [1: 64] @\n1: 128 [1: 128] @ (nil)\n", true},
		{"one", "1: 64 [1: 64] @\n1: 128 [1: 128] @ 0x401000\n", false},
	} {
		p, err := read("t", strings.NewReader("heap profile: 2: 192 [2: 192] @ heap_v2/524288\n"+c.lines), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(p.Profile.Warnings, func(w string) bool { return strings.Contains(w, "no line of the file has a stack") })
		if warned != c.warn {
			t.Errorf("%s: warnings %q; want the no-stack one: %v", c.name, p.Profile.Warnings, c.warn)
		}
	}
}
