package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestSortByEstimate: the order is sort.SliceStable's, with many ties,
// -0 beside 0, infinities, and a NaN.
func TestSortByEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []float64{0, math.Copysign(0, -1), 1, 2.5, 1e300, math.Inf(1), math.Inf(-1)}
	for trial := range 300 {
		est := make([]float64, rng.IntN(500))
		var order []int32
		for i := range est {
			est[i] = values[rng.IntN(len(values))]
			if rng.IntN(3) == 0 {
				est[i] = float64(rng.IntN(50))
			}
			if trial%10 == 0 && rng.IntN(100) == 0 {
				est[i] = math.NaN()
			}
			if rng.IntN(4) != 0 {
				order = append(order, int32(i))
			}
		}
		want := slices.Clone(order)
		sort.SliceStable(want, func(i, j int) bool { return est[want[i]] > est[want[j]] })
		sortByEstimate(order, est)
		if !slices.Equal(order, want) {
			t.Fatalf("trial %d: order %v, want %v", trial, order, want)
		}
	}
}
