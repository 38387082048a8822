package jemalloc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heapest/heapest/internal/cputime"
	"github.com/heapest/heapest/parse"
)

// benchDump returns a dump of about mb megabytes written by bench/gendump
// (cached in the temporary directory, as generating one takes longer than
// parsing it), or skips the benchmark when it cannot be made.
func benchDump(b *testing.B, mb int) []byte {
	b.Helper()
	stacks := mb * 2300 // gendump's default shape: ~435 bytes a stack
	path := filepath.Join(os.TempDir(), fmt.Sprintf("heapest-bench-jemalloc-%d.heap", stacks))
	if data, err := os.ReadFile(path); err == nil {
		return data
	}
	bin := "/bin/ls" // any ELF file with function symbols
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("no %s for gendump's stacks to point into", bin)
	}
	args := []string{"run", "../../bench/gendump", "-binary", bin, "-stacks", fmt.Sprint(stacks), "-o", path + ".tmp"}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"); err != nil {
		args = append(args, "-jemalloc", "")
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		b.Skipf("gendump: %v: %s", err, out)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse parses generated dumps into a sink that only counts, as
// the rest of the pipeline is not this package's: MB/s of dump, cpu-MB/s
// (per CPU second, where the platform tells), allocations.
func BenchmarkParse(b *testing.B) {
	for _, mb := range []int{1, 30, 150} {
		for _, threads := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dMB/threads=%v", mb, threads), func(b *testing.B) {
				if mb > 100 && testing.Short() {
					b.Skip("-short")
				}
				data := benchDump(b, mb)
				opt := parse.Options{Threads: threads, SizeHint: int64(len(data))}
				var n int
				sink := parse.SinkFunc(func(*parse.Record) { n++ })
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				cpu0 := cputime.Used()
				for b.Loop() {
					if _, err := Parse("bench.heap", bufio.NewReaderSize(bytes.NewReader(data), 64<<10), opt, sink); err != nil {
						b.Fatal(err)
					}
				}
				if cpu := (cputime.Used() - cpu0).Seconds(); cpu > 0 {
					b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu, "cpu-MB/s")
				}
				if n == 0 {
					b.Fatal("no records")
				}
			})
		}
	}
}
