package aggregate

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
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

// CompareStackKeys and HashStackKey read a stack as its key (StackKey):
// random stacks of names that hold ';', bytes below and above it, empty
// names and prefixes of one another, given as stacks or as keys, order
// and hash as their keys do.
func TestCompareStackKeys(t *testing.T) {
	names := []string{"", "a", "ab", "a;b", "b", ";", "a!", "a.b", "main", "(anon)", "z", "é"}
	r := rand.New(rand.NewPCG(3, 4))
	stack := func() []string {
		s := make([]string, r.IntN(5))
		for i := range s {
			s[i] = names[r.IntN(len(names))]
		}
		return s
	}
	seed := maphash.MakeSeed()
	hash := func(key string, st []string) uint64 {
		var h maphash.Hash
		h.SetSeed(seed)
		HashStackKey(&h, key, st)
		return h.Sum64()
	}
	for range 20000 {
		a, b := stack(), stack()
		ka, kb := StackKey(a), StackKey(b)
		want := strings.Compare(ka, kb)
		for _, c := range []struct {
			ak, bk string
		}{{"", ""}, {ka, ""}, {"", kb}, {ka, kb}} {
			if got := CompareStackKeys(c.ak, a, c.bk, b); got != want {
				t.Fatalf("CompareStackKeys(%q, %q, %q, %q) = %d; keys %q, %q compare %d", c.ak, a, c.bk, b, got, ka, kb, want)
			}
		}
		if ka == kb && hash("", a) != hash("", b) {
			t.Fatalf("stacks %q and %q, of one key %q, hash apart", a, b, ka)
		}
		// (An empty key given alone is the empty stack's, "(no stack)".)
		if ka != "" && hash("", a) != hash(ka, nil) {
			t.Fatalf("stack %q hashes apart from its key %q", a, ka)
		}
	}
}
