package symbolize

import (
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/heapest/heapest/internal/cputime"
	"github.com/heapest/heapest/parse"
)

var benchBinary string

// heapestBinary builds cmd/heapest once (a Go executable with a symbol
// table and compressed DWARF, as bench/run.sh uses for its dumps; test
// binaries are linked without either).
func heapestBinary(b *testing.B) string {
	b.Helper()
	if benchBinary != "" {
		return benchBinary
	}
	goTool := needTool(b, "go")
	out := filepath.Join(os.TempDir(), fmt.Sprintf("heapest-symbolize-bench-%d", os.Getpid()))
	if msg, err := exec.Command(goTool, "build", "-o", out, "../cmd/heapest").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	benchBinary = out
	return out
}

// TestMain removes the benchmark's binary.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchBinary != "" {
		os.Remove(benchBinary)
	}
	os.Exit(code)
}

// benchProfile builds a jemalloc-sized profile over the heapest binary:
// stacks × frames return addresses drawn from a pool of distinct addresses
// inside its functions.
func benchProfile(b *testing.B, stacks, frames, distinct int) (*testProfile, []parse.Record) {
	b.Helper()
	exe := heapestBinary(b)
	f, err := elf.Open(exe)
	if err != nil {
		b.Skipf("skipping: the test binary is not ELF: %v", err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var funcs []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 8 {
			funcs = append(funcs, s)
		}
	}
	if len(funcs) == 0 {
		b.Skip("skipping: no function symbols in the test binary")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	bias := loadBias(b, exe, 0x560000000000)
	pool := make([]uint64, distinct)
	for i := range pool {
		s := funcs[rng.IntN(len(funcs))]
		pool[i] = bias + s.Value + 1 + rng.Uint64N(s.Size-1)
	}
	recs := make([]parse.Record, stacks)
	for i := range recs {
		st := make([]parse.Frame, frames)
		for j := range st {
			st[j].Addr = pool[rng.IntN(len(pool))]
		}
		recs[i].Stack = st
	}
	p := &testProfile{MapsText: []byte(mapsFor(b, exe, 0x560000000000))}
	return p, recs
}

// fresh copies the unsymbolized records so each iteration starts over.
func fresh(recs []parse.Record) []parse.Record {
	out := make([]parse.Record, len(recs))
	for i, r := range recs {
		out[i].Stack = append([]parse.Frame(nil), r.Stack...)
	}
	return out
}

// BenchmarkSymbolize is a whole Symbolize call on 20,000 stacks × 24
// frames (~100k distinct addresses), loading the binary's symbols each
// time (the object cache is emptied before each call): names only, as
// --by func needs.
func BenchmarkSymbolize(b *testing.B) {
	benchmarkSymbolize(b, Options{DropAllocator: true})
}

// BenchmarkSymbolizeLines is the same with file:line: the binary's DWARF
// is read as well.
func BenchmarkSymbolizeLines(b *testing.B) {
	benchmarkSymbolize(b, Options{DropAllocator: true, Lines: true})
}

func benchmarkSymbolize(b *testing.B, opt Options) {
	p, recs := benchProfile(b, 20000, 24, 120000)
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		q := &testProfile{MapsText: p.MapsText, Records: fresh(recs)}
		forgetObjects()
		c0 := cputime.Used()
		b.StartTimer()
		if _, err := Symbolize(q, opt); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cputime.Used() - c0
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkSymbolizeLoaded is the same work with the file already loaded
// (and the DWARF units the addresses touch already read): the cost of
// resolving the addresses themselves.
func BenchmarkSymbolizeLoaded(b *testing.B) {
	p, recs := benchProfile(b, 20000, 24, 120000)
	if _, err := Symbolize(&testProfile{MapsText: p.MapsText, Records: fresh(recs)}, Options{DropAllocator: true}); err != nil {
		b.Fatal(err) // warm: open the file, read its units
	}
	var cpu time.Duration
	var distinct int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		q := &testProfile{MapsText: p.MapsText, Records: fresh(recs)}
		c0 := cputime.Used()
		b.StartTimer()
		if _, err := Symbolize(q, Options{DropAllocator: true}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cputime.Used() - c0
		b.StartTimer()
		distinct = countAddrs(recs)
	}
	b.ReportMetric(float64(distinct), "distinct-addrs")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// countAddrs counts the distinct frame addresses of recs.
func countAddrs(recs []parse.Record) int {
	seen := map[uint64]bool{}
	for _, r := range recs {
		for _, f := range r.Stack {
			seen[f.Addr] = true
		}
	}
	return len(seen)
}

// BenchmarkOpenObject is the cost of loading one file for names: program
// headers, build-id and the code symbols of its symbol table (the part of
// a Symbolize call that does not depend on the number of addresses).
func BenchmarkOpenObject(b *testing.B) {
	exe := heapestBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := openObject(exe)
		if err != nil {
			b.Fatal(err)
		}
		if len(o.tab.syms) == 0 {
			b.Fatal("no symbols")
		}
	}
}

// BenchmarkLoadDWARF is the cost of reading a file's DWARF and indexing
// its compilation units, as a Symbolize call with Options.Lines pays once
// per file (before reading the units its addresses fall in).
func BenchmarkLoadDWARF(b *testing.B) {
	exe := heapestBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		forgetObjects()
		if dw := loadDWARF(exe, true, true); dw == nil || len(dw.units) == 0 {
			b.Fatal("no DWARF units")
		}
	}
}
