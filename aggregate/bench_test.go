package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// jemallocLike returns the addresses of n distinct stacks of depth frames
// drawn from a pool, as a large jemalloc dump has them: a flat slice, so
// that the benchmark's own input costs the garbage collector nothing, as
// a parser's stream does not.
func jemallocLike(n, depth, pool int) []uint64 {
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, pool)
	for i := range addrs {
		addrs[i] = 0x400000 + uint64(rng.IntN(1<<24))
	}
	out := make([]uint64, n*depth)
	for i := range out {
		out[i] = addrs[rng.IntN(pool)]
	}
	return out
}

// BenchmarkCollect is the per-record cost of the pipeline's hot path:
// interning a 24-frame stack, keeping the record until its encoding is
// known, unbiasing it and adding it to its cell, then naming and grouping
// by function.
func BenchmarkCollect(b *testing.B) {
	const n, depth = 100000, 24
	addrs := jemallocLike(n, depth, 20000)
	values := []unbias.Value{unbias.InUseSpace}
	rec := parse.Record{Stack: make([]parse.Frame, depth), Scheme: parse.Bernoulli, Rate: 1 << 19,
		InUse: parse.Counts{Objects: 3, Bytes: 3 * 4096, Enc: parse.Unresolved}}
	b.ReportAllocs()
	for b.Loop() {
		c := NewCollector(values, Keys{}, Window{}, n*400)
		for i := range n {
			for j := range rec.Stack {
				rec.Stack[j].Addr = addrs[i*depth+j]
			}
			c.Record(&rec)
		}
		tb := NewTable(values, Keys{})
		if err := c.Finish(tb, nil, &parse.Profile{Encoding: parse.Raw}); err != nil {
			b.Fatal(err)
		}
		tb.Groups(ByFunc, Filter{}, 0, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
