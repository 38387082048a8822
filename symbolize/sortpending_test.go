package symbolize

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortPending gives comparePending's order on addresses alike in their
// high bytes (one process), spread over all 64 bits, and few.
func TestSortPending(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := rng.IntN(3000)
		base := uint64(0x7f3a12000000)
		spread := uint64(1) << (12 + rng.IntN(52)) // room for n distinct addresses
		if trial%5 == 0 {
			base = 0
		}
		seen := map[pendingAddr]bool{}
		var p []pendingAddr
		for len(p) < n {
			q := pendingAddr{addr: base + rng.Uint64()%spread, leaf: rng.IntN(4) == 0}
			if rng.IntN(10) == 0 && len(p) > 0 {
				q.addr = p[rng.IntN(len(p))].addr // both positions of one address
			}
			if seen[q] {
				continue
			}
			seen[q] = true
			q.n = int32(len(p))
			p = append(p, q)
		}
		want := slices.Clone(p)
		slices.SortFunc(want, comparePending)
		sortPending(p)
		if !slices.Equal(p, want) {
			t.Fatalf("trial %d (%d addresses, spread %#x): order differs", trial, n, spread)
		}
	}
}

func BenchmarkSortPending(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := make([]pendingAddr, 45000)
	for i := range p {
		p[i] = pendingAddr{addr: 0x400000 + rng.Uint64()%(16<<20), leaf: i%50 == 0, n: int32(i)}
	}
	work := make([]pendingAddr, len(p))
	for b.Loop() {
		copy(work, p)
		sortPending(work)
	}
}
