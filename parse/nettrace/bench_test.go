package nettrace

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/heapest/heapest/internal/cputime"
	nt "github.com/heapest/heapest/internal/nettracetest"
	"github.com/heapest/heapest/parse"
)

var benchTraces sync.Map // benchKey → []byte

type benchKey struct {
	v       nt.Version
	objects int
}

// benchTrace is a generated AllocationSampled trace: 40 types of 100–300
// KB objects on 8 threads (most objects are sampled), 25-frame stacks.
// 400 objects per type and thread make about 10 MB, 4000 about 100 MB.
func benchTrace(v nt.Version, objects int) []byte {
	k := benchKey{v, objects}
	if t, ok := benchTraces.Load(k); ok {
		return t.([]byte)
	}
	wl := nt.Workload{Seed: 7, Threads: 8, Depth: 20}
	for i := range 40 {
		wl.Types = append(wl.Types, nt.TypeSpec{Name: fmt.Sprintf("Bench.Namespace.Type%02d[]", i),
			Size: 100_000, MaxSize: 300_000, Objects: objects})
	}
	data, _ := nt.Simulate(wl, nt.Options{Version: v, PID: 4242})
	runtime.GC() // the writer's garbage is not the parser's
	benchTraces.Store(k, data)
	return data
}

// counter is the cheapest sink: it counts records and frames.
type counter struct{ records, frames int }

func (c *counter) Record(r *parse.Record) {
	c.records++
	c.frames += len(r.Stack)
}

// benchParse parses data into a counting sink, reporting MB/s of wall
// time and, where the process's CPU time is known, MB per CPU second
// (GC included).
func benchParse(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	br := bufio.NewReaderSize(nil, 64<<10)
	cpu0 := cputime.Used()
	for b.Loop() {
		var c counter
		br.Reset(bytes.NewReader(data))
		p, err := Parse("bench.nettrace", br, parse.Options{}, &c)
		if err != nil {
			b.Fatal(err)
		}
		if c.records == 0 || p.Records != c.records {
			b.Fatalf("%d records sent, %d counted", c.records, p.Records)
		}
	}
	if cpu := cputime.Used() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkParse parses generated V4 and V6 traces of about 10 and 100 MB
// (100 MB not in -short mode) into a counting sink.
func BenchmarkParse(b *testing.B) {
	for _, size := range []struct {
		name    string
		objects int
	}{{"10MB", 400}, {"100MB", 4000}} {
		for _, v := range []nt.Version{nt.V4, nt.V6} {
			b.Run(fmt.Sprintf("%s/V%d", size.name, v), func(b *testing.B) {
				if testing.Short() && size.objects > 400 {
					b.Skip("100 MB trace: not in -short mode")
				}
				benchParse(b, benchTrace(v, size.objects))
			})
		}
	}
}

// BenchmarkParseReal parses the real .NET Core 3.0 trace (GCAllocationTick
// and CPU samples).
func BenchmarkParseReal(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(nettraceSamples, "perfview-dotnetcore3.0-win-x64-objver4.nettrace"))
	if err != nil {
		b.Skip("real sample not available: ", err)
	}
	benchParse(b, data)
}
