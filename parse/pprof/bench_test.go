package pprof

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/heapest/heapest/internal/cputime"
	"github.com/heapest/heapest/parse"
)

// countSink counts records and frames, reading every frame as a consumer
// would.
type countSink struct {
	records, frames int
	addrs           uint64
}

func (c *countSink) Record(r *parse.Record) {
	c.records++
	c.frames += len(r.Stack)
	for i := range r.Stack {
		c.addrs += r.Stack[i].Addr
	}
}

// benchInput is one profile to parse: its bytes as a file holds them (or
// a function making them), or the path of a large file read from disk at
// each run.
type benchInput struct {
	name string
	data []byte
	make func() []byte
	path string
}

func (in *benchInput) open(b *testing.B) io.ReadCloser {
	if in.make != nil {
		in.data, in.make = in.make(), nil
	}
	if in.path == "" {
		return io.NopCloser(bytes.NewReader(in.data))
	}
	f, err := os.Open(in.path)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// benchInputs are testdata's Go heap profile, a synthetic Go profile of
// 120,000 samples over 5,000 functions (bigGoProfile), and the files named
// in $HEAPEST_PPROF_BENCH (colon-separated): real-sized profiles, e.g. from
// go run ./bench/gengoheap -depth 20 -o /tmp/go20.pb.gz.
func benchInputs(b *testing.B) []*benchInput {
	small, err := os.ReadFile(filepath.Join("testdata", "go-heap.pb.gz"))
	if err != nil {
		b.Fatal(err)
	}
	ins := []*benchInput{{name: "go-heap", data: small},
		{name: "synthetic-120k", make: func() []byte { return bigGoProfile(b, 120000) }}}
	for _, p := range filepath.SplitList(os.Getenv("HEAPEST_PPROF_BENCH")) {
		ins = append(ins, &benchInput{name: strings.TrimSuffix(filepath.Base(p), ".pb.gz"), path: p})
	}
	return ins
}

// parseInput parses one input the way parse/formats does: one gzip layer
// removed under the bound, then Parse.
func parseInput(b *testing.B, in *benchInput, sink parse.Sink) *parse.Profile {
	f := in.open(b)
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(parse.Bounded(in.name, zr, 0), 64<<10)
	p, err := Parse(in.name, br, parse.Options{}, sink)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// decompressedSize is the input's size once decompressed, what MB/s is
// measured against, and the size its packed samples take.
func decompressedSize(b *testing.B, in *benchInput) (raw, packed int64) {
	f := in.open(b)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, zr)
	if err != nil {
		b.Fatal(err)
	}
	d, err := decodeStream(in.name, bufio.NewReader(&buf))
	if err != nil {
		b.Fatal(err)
	}
	return n, int64(d.samples.bytes())
}

// BenchmarkParse parses Go heap profiles into a counting sink: MB/s of
// decompressed input, allocations, CPU time per run (all threads, GC
// included), and the packed samples' size as a share of the decompressed
// input (packed-%).
func BenchmarkParse(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			raw, packed := decompressedSize(b, in)
			b.SetBytes(raw)
			b.ReportAllocs()
			cpu := reportCPU(b)
			for b.Loop() {
				var c countSink
				p := parseInput(b, in, &c)
				if c.records != p.Records || c.records == 0 {
					b.Fatalf("%d records sent, Profile says %d", c.records, p.Records)
				}
			}
			cpu()
			b.ReportMetric(100*float64(packed)/float64(raw), "packed-%")
		})
	}
}

// BenchmarkPprofGoParse is google/pprof's profile.Parse alone on the
// synthetic profile: the baseline a reader building Go objects per sample
// starts from (compare BenchmarkParse/synthetic-120k).
func BenchmarkPprofGoParse(b *testing.B) {
	data := bigGoProfile(b, 120000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := profile.Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU adds the process CPU time per operation (all threads, GC
// included) as a metric: on a shared machine wall time measures the load.
func reportCPU(b *testing.B) func() {
	start := cputime.Used()
	return func() { b.ReportMetric(float64(cputime.Used()-start)/1e6/float64(b.N), "cpu-ms/op") }
}

// bigGoProfile is a Go heap profile of n samples (stacks of depth 8–40
// over 5,000 functions, sizes 16 B–1 MiB), as the runtime writes it:
// gzip-compressed, values scaled, "bytes" labels.
func bigGoProfile(b *testing.B, n int) []byte {
	rng := rand.New(rand.NewSource(7))
	const rate = 524288
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: rate,
	}
	for i := 0; i < 5000; i++ {
		fn := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("pkg%d.Func%d", i%97, i), Filename: fmt.Sprintf("/src/pkg%d/f.go", i%97)}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Address: uint64(0x400000 + 16*i),
			Line: []profile.Line{{Function: fn, Line: int64(i % 500)}}})
	}
	scale := func(count, size int64) (int64, int64) {
		if count == 0 || size == 0 {
			return 0, 0
		}
		s := 1 / (1 - math.Exp(-float64(size)/float64(count)/rate))
		return int64(float64(count) * s), int64(float64(size) * s)
	}
	for i := 0; i < n; i++ {
		depth := 8 + rng.Intn(33)
		locs := make([]*profile.Location, depth)
		for d := range locs {
			locs[d] = p.Location[rng.Intn(len(p.Location))]
		}
		size := int64(16) << rng.Intn(17)
		cnt := 1 + rng.Int63n(50)
		c, s := scale(cnt, cnt*size)
		ic, is := scale(cnt/2, cnt/2*size)
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{c, s, ic, is},
			NumLabel: map[string][]int64{"bytes": {size}}})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
