package render

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/formats"
	"github.com/heapest/heapest/parse/pprof"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
	"github.com/heapest/heapest/unbias"
)

// pprofInputs are real profiles of several producers (../shared/samples).
var pprofInputs = []string{
	"pprof/parca_alloc_objects.pb.gz",
	"pprof/parca_1644509296350592000.pb.gz",
	"pprof/google-pprof_gobench.heap",
	"pprof/google-pprof_cppbench.heap",
	// Its mapped files are not here: frames stay module+offset.
	"jemalloc/google-pprof-pr690_jemalloc.heap",
}

func samplePath(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "shared", "samples", rel)
}

// input is a profile's bytes and what it says about itself.
type input struct {
	name string
	data []byte
	p    *parse.Profile
}

func readSample(t *testing.T, rel string) input {
	t.Helper()
	data, err := os.ReadFile(samplePath(t, rel))
	if err != nil {
		t.Skipf("sample %s unavailable: %v", rel, err)
	}
	return readInput(t, rel, data)
}

func readInput(t *testing.T, name string, data []byte) input {
	t.Helper()
	p, err := formats.Read(name, bytes.NewReader(data), parse.Options{}, parse.SinkFunc(func(*parse.Record) {}))
	if err != nil {
		t.Fatal(err)
	}
	return input{name, data, p}
}

// valuesOf lists the values a profile has, the default first.
func valuesOf(p *parse.Profile) []unbias.Value {
	var vs []unbias.Value
	if p.HasInUse {
		vs = append(vs, unbias.InUseSpace, unbias.InUseObjects)
	}
	if p.HasAlloc {
		vs = append(vs, unbias.AllocSpace, unbias.AllocObjects)
	}
	return vs
}

func builder(t *testing.T, in input, opt report.Options) *report.Builder {
	t.Helper()
	b := report.NewBuilder(opt)
	if _, _, err := b.AddReader(in.name, bytes.NewReader(in.data), report.Input{}); err != nil {
		t.Fatal(err)
	}
	return b
}

func build(t *testing.T, in input, v unbias.Value, by aggregate.By) *report.Report {
	t.Helper()
	r, err := builder(t, in, report.Options{Value: v, By: by, Confidence: 0.95, Method: ci.Auto}).Report()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeAll writes a profile's every value as heapest pprof output, as
// report --format pprof does.
func writeAll(t *testing.T, in input) []byte {
	t.Helper()
	b := builder(t, in, report.Options{Value: valuesOf(in.p)[0], By: aggregate.ByFunc,
		Top: 20, Confidence: 0.95, Method: ci.Auto, AllValues: true})
	st, err := b.Stacks()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Values) != len(valuesOf(in.p)) {
		t.Fatalf("%d values written for %d values", len(st.Values), len(valuesOf(in.p)))
	}
	var buf bytes.Buffer
	if err := WritePprof(&buf, st); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPprofRoundTrip: report → pprof → report gives the same rows, the same
// statistics and the same intervals, for every value and grouping.
func TestPprofRoundTrip(t *testing.T) {
	for _, rel := range pprofInputs {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			orig := readSample(t, rel)
			back := readInput(t, "roundtrip.pb.gz", writeAll(t, orig))
			if back.p.Source.Format != "heapest" {
				t.Fatalf("read back as %q, want heapest", back.p.Source.Format)
			}
			for _, v := range valuesOf(orig.p) {
				for _, by := range []aggregate.By{aggregate.ByFunc, aggregate.ByStack} {
					a := build(t, orig, v, by)
					b := build(t, back, v, by)
					sameReport(t, v.String()+" by "+by.String(), a, b)
				}
			}
		})
	}
}

func sameReport(t *testing.T, what string, a, b *report.Report) {
	t.Helper()
	sameRow(t, what, a.Total, b.Total)
	if len(a.Rows) != len(b.Rows) {
		t.Fatalf("%s: %d rows, read back %d", what, len(a.Rows), len(b.Rows))
	}
	bk := map[string]report.Row{}
	for _, r := range b.Rows {
		bk[r.Key] = r
	}
	for _, r := range a.Rows {
		o, ok := bk[r.Key]
		if !ok {
			t.Errorf("%s: row %q missing after the round trip", what, r.Key)
			continue
		}
		sameRow(t, what, r, o)
	}
}

// sameRow compares two rows; sums taken in another order may differ in the
// last bits, so numbers are compared to 1e-9 relative.
func sameRow(t *testing.T, what string, a, b report.Row) {
	t.Helper()
	results := [][2]*ci.Result{{&a.Flat, &b.Flat}}
	if a.Cum != nil && b.Cum != nil {
		results = append(results, [2]*ci.Result{a.Cum, b.Cum})
	}
	for _, r := range results {
		x, y := r[0], r[1]
		if x.Method != y.Method || !near(x.Estimate, y.Estimate) || !near(x.Lo, y.Lo) ||
			!near(x.Hi, y.Hi) || !near(x.Samples, y.Samples) {
			t.Errorf("%s: row %q: %+v, read back %+v", what, a.Key, *x, *y)
		}
	}
	if a.Stats.N != b.Stats.N || a.Stats.Mixed != b.Stats.Mixed || a.Stats.SamplesBound != b.Stats.SamplesBound ||
		!near(a.Stats.Var, b.Stats.Var) || a.Stats.MaxWeight != b.Stats.MaxWeight {
		t.Errorf("%s: row %q statistics %+v, read back %+v", what, a.Key, a.Stats, b.Stats)
	}
}

func near(a, b float64) bool {
	if a == b || (math.IsInf(a, 1) && math.IsInf(b, 1)) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestPprofOutputValid: the output is a valid profile.proto whose default
// sample type is the report's value and whose totals are the estimates.
func TestPprofOutputValid(t *testing.T) {
	orig := readSample(t, pprofInputs[0])
	data := writeAll(t, orig)
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.DefaultSampleType != "inuse_space" {
		t.Errorf("default sample type %q, want inuse_space", p.DefaultSampleType)
	}
	want := build(t, orig, unbias.InUseSpace, aggregate.ByStack).Total.Flat.Estimate
	var got int64
	for _, s := range p.Sample {
		got += s.Value[0]
		if s.Value[0] != 0 && (len(s.Label[pprof.StatsLabelKey]) != 1 || len(s.NumLabel["samples"]) != 1) {
			t.Fatalf("sample without its statistics labels: %v %v", s.Label, s.NumLabel)
		}
	}
	// Each sample rounds its estimate: at most 0.5 off per sample.
	if math.Abs(float64(got)-want) > 0.5*float64(len(p.Sample)) {
		t.Errorf("inuse_space total %d, report total %.1f", got, want)
	}
}

var pprofTotal = regexp.MustCompile(`of (\d+)B total`)

// TestPprofGoToolOpens: go tool pprof -top reads the output and shows the
// unbiased total for the default sample type.
func TestPprofGoToolOpens(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	orig := readSample(t, pprofInputs[0])
	file := filepath.Join(t.TempDir(), "out.pb.gz")
	data := writeAll(t, orig)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "tool", "pprof", "-top", "-unit=B", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	m := pprofTotal.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no total in go tool pprof output:\n%s", out)
	}
	got, _ := strconv.ParseFloat(string(m[1]), 64)
	p, _ := profile.ParseData(data)
	var want float64
	for _, s := range p.Sample {
		want += float64(s.Value[0])
	}
	if got != want || !bytes.Contains(out, []byte("Type: inuse_space")) {
		t.Errorf("go tool pprof total %v (want %v) or type wrong:\n%s", got, want, out)
	}
}

// TestPprofKeepsMappings: frames heapest could not name are written with
// their mapping (the dump's file path) and an address inside it, so that
// pprof can symbolize them given the files; no location is a bare
// "<unknown>".
func TestPprofKeepsMappings(t *testing.T) {
	orig := readSample(t, "jemalloc/google-pprof-pr690_jemalloc.heap")
	p, err := profile.ParseData(writeAll(t, orig))
	if err != nil {
		t.Fatal(err)
	}
	maps, err := symbolize.ParseMaps(orig.p.MapsText)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, m := range maps {
		files[m.File] = true
	}
	unnamed := 0
	for _, l := range p.Location {
		if len(l.Line) > 0 {
			continue
		}
		unnamed++
		if l.Mapping == nil || !files[l.Mapping.File] || l.Address < l.Mapping.Start || l.Address >= l.Mapping.Limit {
			t.Fatalf("location %d at %#x: mapping %+v, want one of the dump's files holding the address", l.ID, l.Address, l.Mapping)
		}
	}
	if unnamed == 0 || len(p.Mapping) == 0 {
		t.Fatalf("%d unnamed locations, %d mappings: want the dump's unsymbolized frames with their mappings", unnamed, len(p.Mapping))
	}
}

// TestPprofGoToolTags: go tool pprof -tags shows heapest's statistics as
// one label beside the few numeric ones people read, not one per value;
// -raw shows each unnamed location with its mapping.
func TestPprofGoToolTags(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	file := filepath.Join(t.TempDir(), "out.pb.gz")
	if err := os.WriteFile(file, writeAll(t, readSample(t, "jemalloc/google-pprof-pr690_jemalloc.heap")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "tool", "pprof", "-tags", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tags: %v\n%s", err, out)
	}
	keys := regexp.MustCompile(`(?m)^ (\S+): Total`).FindAllStringSubmatch(string(out), -1)
	var got []string
	for _, k := range keys {
		got = append(got, k[1])
	}
	// samples_bound and size: this dump has lines of mixed sizes.
	if strings.Join(got, " ") != "heapest rate samples samples_bound size" {
		t.Errorf("-tags keys %q, want heapest, rate, samples, samples_bound, size\n%s", got, out)
	}
	out, err = exec.Command(goTool, "tool", "pprof", "-raw", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -raw: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s+\d+: 0x[0-9a-f]+ M=\d+ $`).Match(out) || !bytes.Contains(out, []byte("/usr/local/bin/testbinary")) {
		t.Errorf("-raw: no location with its mapping, or the dump's binary not named:\n%.2000s", out)
	}
}

// TestVarintWord: a word holds the varint appendVarint writes, and its
// length, for ids of one to seven bytes.
func TestVarintWord(t *testing.T) {
	for _, v := range []uint64{1, 127, 128, 300, 1<<14 - 1, 1 << 14, 1<<21 + 5, 1<<28 + 1, 1<<35 + 7, 1<<49 - 1} {
		w := varintWord(v)
		var b [8]byte
		for i := range b {
			b[i] = byte(w >> (8 * i))
		}
		if want := appendVarint(nil, v); int(b[0]) != len(want) || !bytes.Equal(b[1:1+b[0]], want) {
			t.Errorf("%d: word %#x, want the varint % x", v, w, want)
		}
	}
}

// TestPprofStatsStringsOnce: a sample whose statistics are the previous
// sample's refers to that sample's string: the string table holds one
// statistics text per run of equal samples, not one per sample.
func TestPprofStatsStringsOnce(t *testing.T) {
	for _, rel := range pprofInputs {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			data := writeAll(t, readSample(t, rel))
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			runs, texts := 0, map[string]bool{}
			prev := "\x00" // no label is this
			for _, s := range p.Sample {
				l := s.Label[pprof.StatsLabelKey]
				if len(l) != 1 {
					continue
				}
				if l[0] != prev {
					runs++
				}
				prev = l[0]
				texts[l[0]] = true
			}
			written := 0
			for _, s := range rawStrings(t, data) {
				if texts[s] {
					written++
				}
			}
			if written != runs {
				t.Errorf("%d statistics strings written for %d runs of equal statistics in %d samples", written, runs, len(p.Sample))
			}
		})
	}
}

// rawStrings returns the string table of a gzipped profile.proto as
// written, repeats and all (profile.Parse hides them).
func rawStrings(t *testing.T, gz []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal("bad tag")
		}
		b = b[n:]
		switch tag & 7 {
		case 0:
			_, n = binary.Uvarint(b)
			if n <= 0 {
				t.Fatal("bad varint")
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatal("bad length")
			}
			if tag>>3 == 6 { // Profile.string_table
				out = append(out, string(b[n:n+int(l)]))
			}
			b = b[n+int(l):]
		default:
			t.Fatalf("wire type %d at the top level", tag&7)
		}
	}
	return out
}

// TestPprofLines: a profile read by source line is written with each
// frame's function, file and line, so that pprof's -lines and -list read
// them; read back by lines it gives the rows it was written from, and by
// functions the rows of its input read by functions.
func TestPprofLines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "parse", "pprof", "testdata", "go-heap.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	byLine := report.Input{Parse: parse.Options{Lines: true}, Symbolize: symbolize.Options{Lines: true}}
	rows := func(data []byte, in report.Input) map[string]float64 {
		t.Helper()
		b := report.NewBuilder(report.Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95, Method: ci.Auto, Lines: in.Parse.Lines})
		if _, _, err := b.AddReader("in", bytes.NewReader(data), in); err != nil {
			t.Fatal(err)
		}
		r, err := b.Report()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, row := range r.Rows {
			m[row.Key] = row.Flat.Estimate
		}
		return m
	}
	b := report.NewBuilder(report.Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95, Method: ci.Auto, AllValues: true, Lines: true})
	if _, _, err := b.AddReader("in", bytes.NewReader(data), byLine); err != nil {
		t.Fatal(err)
	}
	st, err := b.Stacks()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WritePprof(&out, st); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range p.Location {
		for _, ln := range l.Line {
			if strings.Contains(ln.Function.Name, " ") {
				t.Errorf("function %q: the line is the Line's, not the name's", ln.Function.Name)
			}
			found = found || ln.Function.Name == "main.allocHuge" && strings.HasSuffix(ln.Function.Filename, "/realdata/go/main.go") && ln.Line == 48
		}
	}
	if !found {
		t.Error("no location of main.allocHuge at main.go:48")
	}
	for _, tt := range []struct {
		name    string
		in      report.Input
		want    map[string]float64
		written []byte
	}{
		{"by line", byLine, rows(data, byLine), out.Bytes()},
		{"by function", report.Input{}, rows(data, report.Input{}), out.Bytes()},
	} {
		got := rows(tt.written, tt.in)
		if len(got) != len(tt.want) || len(got) < 5 {
			t.Errorf("%s: %d rows read back, %d from the input", tt.name, len(got), len(tt.want))
		}
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-6*v {
				t.Errorf("%s: row %q: %v read back, %v from the input", tt.name, k, g, v)
			}
		}
	}
}
