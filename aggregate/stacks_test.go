package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestSortByEstimate: the order is sort.SliceStable's, with many ties,
// -0 beside 0, negative and subnormal numbers, infinities, and a NaN, in
// short lists (compared) and long ones (radix sorted).
func TestSortByEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []float64{0, math.Copysign(0, -1), 1, 2.5, 1e300, math.Inf(1), math.Inf(-1),
		-1, -2.5, -1e300, 5e-324, -5e-324}
	for trial := range 300 {
		est := make([]float64, rng.IntN(500)+[]int{0, 3000}[trial%2])
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

// TestStackRoom: room sizes an empty probe array once for the stacks to
// come, so interning them does not regrow it, and leaves a used one alone.
func TestStackRoom(t *testing.T) {
	tab := newStackTable(0)
	tab.add([]uint32{9}) // stored without lookup: not in the probe array
	tab.room(1000)
	size := len(tab.ids)
	if tab.full(1000) {
		t.Fatalf("room(1000) left %d slots", size)
	}
	ids := make(map[uint32][]uint32)
	for i := range uint32(1000) {
		s := []uint32{i, i + 1, i * 7}
		ids[tab.intern(s)] = s
	}
	if len(tab.ids) != size {
		t.Errorf("interning 1000 stacks regrew the probe array from %d to %d slots", size, len(tab.ids))
	}
	for id, s := range ids {
		if got := tab.intern(s); got != id {
			t.Fatalf("stack %v: id %d, then %d", s, id, got)
		}
	}
	tab.room(1 << 20) // stacks are in it now: growing is intern's business
	if len(tab.ids) != size {
		t.Errorf("room on a used probe array changed it from %d to %d slots", size, len(tab.ids))
	}
}
