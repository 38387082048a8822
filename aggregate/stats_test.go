package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/heapest/heapest/ci"
)

// TestValueStatsPool: cells whose statistics are shared through the pool,
// made their own by a second contribution, emptied (reset) and filled
// again, read as statistics merged one contribution at a time would be;
// with statistics that repeat (the pool stays on) and statistics that do
// not (it turns itself off after its probation).
func TestValueStatsPool(t *testing.T) {
	for _, distinct := range []int{5, 1 << 20} {
		rng := rand.New(rand.NewPCG(7, uint64(distinct)))
		const nv, cells = 2, 24 * (1 << statShift)
		vs := newValueStats(nv)
		want := make(map[[2]int]ci.Stats)
		for op := range 3 * poolProbation {
			cell, v := uint32(rng.IntN(cells)), rng.IntN(nv)
			if op%97 == 0 {
				vs.reset(cell)
				for i := range nv {
					if _, ok := want[[2]int{int(cell), i}]; ok {
						want[[2]int{int(cell), i}] = ci.Stats{}
					}
				}
				continue
			}
			k := rng.IntN(distinct)
			s := ci.Stats{N: 1, Estimate: float64(k), Var: float64(k * k), Samples: 1, Rate: 512}
			vs.add(cell, v, &s)
			acc := want[[2]int{int(cell), v}]
			acc.Merge(&s)
			want[[2]int{int(cell), v}] = acc
		}
		row := make([]ci.Stats, nv)
		for key, w := range want {
			cell, v := uint32(key[0]), key[1]
			if got := vs.get(cell, v); !got.SameBits(&w) {
				t.Fatalf("distinct %d: cell %d value %d: %+v, want %+v", distinct, cell, v, got, w)
			}
			if got := vs.row(cell, row)[v]; !got.SameBits(&w) {
				t.Fatalf("distinct %d: cell %d value %d: row %+v, want %+v", distinct, cell, v, got, w)
			}
		}
		for cell := range uint32(cells) {
			some := false
			for v := range nv {
				some = some || want[[2]int{int(cell), v}].N > 0
			}
			if vs.some(cell) != some {
				t.Fatalf("distinct %d: cell %d: some %v, want %v", distinct, cell, !some, some)
			}
		}
		if on := !vs.pool.off; on != (distinct < 100) {
			t.Errorf("distinct %d: pool on %v after %d tries, %d found", distinct, on, vs.pool.tries, vs.pool.hit)
		}
	}
}
