package render

import (
	"io"
	"os"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
)

// BenchmarkWritePprof is --format pprof on the file HEAPEST_BENCH_FILE
// (bench/run.sh generates such inputs): the per-stack view of every value
// and its encoding.
func BenchmarkWritePprof(b *testing.B) {
	path := os.Getenv("HEAPEST_BENCH_FILE")
	if path == "" {
		b.Skip("set HEAPEST_BENCH_FILE to a profile")
	}
	b.ReportAllocs()
	for b.Loop() {
		bl := report.NewBuilder(report.Options{DefaultValue: true, DefaultBy: true, Confidence: 0.95, Method: ci.Auto, AllValues: true})
		if _, _, err := bl.AddFile(path, report.Input{Symbolize: symbolize.Options{DropAllocator: true}}); err != nil {
			b.Fatal(err)
		}
		st, err := bl.Stacks()
		if err != nil {
			b.Fatal(err)
		}
		if err := WritePprof(io.Discard, st); err != nil {
			b.Fatal(err)
		}
	}
}
