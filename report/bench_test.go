package report

import (
	"os"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/symbolize"
	"github.com/heapest/heapest/unbias"
)

// BenchmarkReportFile is the whole pipeline on the file HEAPEST_BENCH_FILE
// (bench/run.sh generates such inputs), --by HEAPEST_BENCH_BY (default
// func): parse, unbias, collect, name, group, intervals.
func BenchmarkReportFile(b *testing.B) {
	path := os.Getenv("HEAPEST_BENCH_FILE")
	if path == "" {
		b.Skip("set HEAPEST_BENCH_FILE to a profile")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	by := aggregate.ByFunc
	if s := os.Getenv("HEAPEST_BENCH_BY"); s != "" {
		if by, err = aggregate.ParseBy(s); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(Options{Value: unbias.InUseSpace, By: by, Confidence: 0.95, Method: ci.Auto, Top: 20})
		if _, _, err := bl.AddFile(path, Input{Symbolize: symbolize.Options{DropAllocator: true}}); err != nil {
			b.Fatal(err)
		}
		if _, err := bl.Report(); err != nil {
			b.Fatal(err)
		}
	}
}
