package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/heapest/heapest/unbias"
)

// Alloc is Count live allocations of one usize.
type Alloc struct {
	Size  uint64
	Count int64
}

// Stack is the allocations made from one call stack in one process.
type Stack struct {
	Allocs []Alloc
}

// Process is one profiled process: its sampling period 2^LgRate and its
// stacks. Stack i of every process is the same call stack (one report row).
type Process struct {
	LgRate uint
	Stacks []Stack
}

// Workload is what a scenario allocates; it stays fixed while the
// sampling is replicated.
type Workload struct {
	Processes []Process
}

// Truth is the value each row (stack index) really holds, summed over
// processes, in bytes and objects.
type Truth struct {
	Bytes, Objects []float64
	TotalBytes     float64
	TotalObjects   float64
}

// Truth computes the workload's true values.
func (w Workload) Truth() Truth {
	var t Truth
	for _, p := range w.Processes {
		for i, s := range p.Stacks {
			for len(t.Bytes) <= i {
				t.Bytes = append(t.Bytes, 0)
				t.Objects = append(t.Objects, 0)
			}
			for _, a := range s.Allocs {
				b := float64(a.Size) * float64(a.Count)
				t.Bytes[i] += b
				t.Objects[i] += float64(a.Count)
				t.TotalBytes += b
				t.TotalObjects += float64(a.Count)
			}
		}
	}
	return t
}

// Sampled is the samples one stack of one process received, per usize.
type Sampled map[uint64]int64

// Sample draws which allocations of p are sampled: each allocation of
// usize Z independently with π = 1 − (1−1/R)^Z, as jemalloc's trial per
// byte samples it (1 − exp(−Z/R) to within 1/(2R)). It walks the allocations
// of one size with geometric gaps between successes, which is the same
// distribution at a cost proportional to the samples, not the allocations.
func Sample(rng *rand.Rand, p Process) []Sampled {
	rate := float64(uint64(1) << p.LgRate)
	out := make([]Sampled, len(p.Stacks))
	for i, s := range p.Stacks {
		for _, a := range s.Allocs {
			n := binomialByGaps(rng, a.Count, -math.Expm1(float64(a.Size)*math.Log1p(-1/rate)))
			if n == 0 {
				continue
			}
			if out[i] == nil {
				out[i] = Sampled{}
			}
			out[i][a.Size] += n
		}
	}
	return out
}

// binomialByGaps draws Binomial(n, pi) as the number of successes among n
// trials, jumping from one success to the next by a geometric gap.
func binomialByGaps(rng *rand.Rand, n int64, pi float64) int64 {
	if pi >= 1 {
		return n
	}
	lq := math.Log1p(-pi)
	var k int64
	pos := int64(-1)
	for {
		gap := math.Floor(math.Log(1-rng.Float64()) / lq) // failures before the next success
		if gap >= float64(n-pos-1) {
			return k
		}
		pos += int64(gap) + 1
		k++
	}
}

// Usize rounds requested sizes to jemalloc size classes.
func Usize(size uint64) uint64 { return unbias.JemallocSizeClass(size) }

// sortedSizes returns the usizes of s in increasing order (for
// reproducible dumps).
func sortedSizes(s Sampled) []uint64 {
	keys := make([]uint64, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// LeafAddr is the leaf frame address written for stack i; a report by
// leaf names the row by its module and offset (RowKey).
func LeafAddr(i int) uint64 { return 0x401000 + 0x10*uint64(i) }

// RowKey is the report row key of stack i: its leaf's module (the dump
// maps /usr/bin/simulated at 0x400000, which no file backs) and offset.
func RowKey(i int) string { return fmt.Sprintf("simulated+0x%x", LeafAddr(i)-0x400000) }
