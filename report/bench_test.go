package report

import (
	"os"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/symbolize"
)

// BenchmarkReportFile is the whole pipeline on the file HEAPEST_BENCH_FILE
// (bench/run.sh generates such inputs), --by HEAPEST_BENCH_BY (default as
// the CLI's): parse, unbias, collect, name, group, intervals.
func BenchmarkReportFile(b *testing.B) {
	path := os.Getenv("HEAPEST_BENCH_FILE")
	if path == "" {
		b.Skip("set HEAPEST_BENCH_FILE to a profile")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{DefaultValue: true, DefaultBy: true, Confidence: 0.95, Method: ci.Auto, Top: 20}
	if s := os.Getenv("HEAPEST_BENCH_BY"); s != "" {
		if opt.By, err = aggregate.ParseBy(s); err != nil {
			b.Fatal(err)
		}
		opt.DefaultBy = false
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(opt)
		if _, _, err := bl.AddFile(path, Input{Symbolize: symbolize.Options{DropAllocator: true}}); err != nil {
			b.Fatal(err)
		}
		if _, err := bl.Report(); err != nil {
			b.Fatal(err)
		}
	}
}
