package symbolize

import (
	"math/rand/v2"
	"testing"
)

// TestAddrIndex checks the index against a Go map on address sets of
// several shapes: clustered like return addresses in one binary, spread
// over the address space, and differing only in high bits (which the
// hash must still spread).
func TestAddrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	shapes := map[string]func() uint64{
		"clustered":  func() uint64 { return 0x555555554000 + rng.Uint64N(1<<16) },
		"spread":     func() uint64 { return rng.Uint64() | 1 },
		"high-bits":  func() uint64 { return rng.Uint64N(1<<12)<<40 | 0x1000 },
		"tiny-range": func() uint64 { return 1 + rng.Uint64N(40) },
	}
	for name, next := range shapes {
		for _, hint := range []int{0, 10, 5000} {
			x := newAddrIndex(hint)
			want := map[uint64]int32{}
			for i := 0; i < 20000; i++ {
				a := next()
				n, added := x.lookup(a, int32(len(want)))
				w, seen := want[a]
				if !seen {
					w = int32(len(want))
					want[a] = w
				}
				if added == seen || n != w {
					t.Fatalf("%s/hint %d: lookup(%#x) = %d, added %v; want %d, added %v", name, hint, a, n, added, w, !seen)
				}
			}
			if x.n != len(want) || 2*x.n > len(x.keys) {
				t.Errorf("%s/hint %d: %d entries in %d slots, want %d at most half full", name, hint, x.n, len(x.keys), len(want))
			}
		}
	}
}
