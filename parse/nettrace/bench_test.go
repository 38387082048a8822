package nettrace

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/heapest/heapest/internal/nettracetest"
)

var benchTraces sync.Map // version → []byte

// benchTrace is a large generated AllocationSampled trace (~80 MB): objects
// of 100–300 KB on 8 threads, most of them sampled, with 40 types.
func benchTrace(b *testing.B, v nettracetest.Version) []byte {
	if t, ok := benchTraces.Load(v); ok {
		return t.([]byte)
	}
	wl := nettracetest.Workload{Seed: 7, Threads: 8}
	for i := range 40 {
		wl.Types = append(wl.Types, nettracetest.TypeSpec{
			Name: "Bench.Namespace.Type" + string(rune('A'+i%26)) + "[]", Size: 100_000, MaxSize: 300_000, Objects: 3500})
	}
	data, _ := nettracetest.Simulate(wl, nettracetest.Options{Version: v, PID: 4242})
	benchTraces.Store(v, data)
	return data
}

func benchParse(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Read("bench.nettrace", bytes.NewReader(data), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Records) == 0 {
			b.Fatal("no records")
		}
	}
}

// BenchmarkNettraceV4 parses a large generated V4 trace.
func BenchmarkNettraceV4(b *testing.B) { benchParse(b, benchTrace(b, nettracetest.V4)) }

// BenchmarkNettraceV6 parses the same workload written as V6.
func BenchmarkNettraceV6(b *testing.B) { benchParse(b, benchTrace(b, nettracetest.V6)) }

// BenchmarkNettraceReal parses the real .NET Core 3.0 trace (GCAllocationTick
// and CPU samples).
func BenchmarkNettraceReal(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(nettraceSamples, "perfview-dotnetcore3.0-win-x64-objver4.nettrace"))
	if err != nil {
		b.Skip("real sample not available: ", err)
	}
	benchParse(b, data)
}
