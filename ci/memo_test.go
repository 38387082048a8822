package ci

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// A Memo remembers statistics met before: the same statistics give the
// result Interval gives, a note appended to one result is not another's,
// statistics of many contributions are not remembered, and DiffInterval
// is the package's, at the Memo's level or another.
func TestMemo(t *testing.T) {
	s := Stats{N: 2, Estimate: 1 << 20, Var: 1 << 39, Samples: 2, MaxWeight: 1 << 19, P: 1, Unit: 64, Rate: 1 << 19}
	mm := NewMemo(Auto, 0.9)
	want, err := Interval(s, Auto, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mm.Interval(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mm.Interval(s)
	if len(mm.memo) != 1 || fmt.Sprint(a) != fmt.Sprint(want) || fmt.Sprint(b) != fmt.Sprint(want) {
		t.Fatalf("memo of %d: %+v and %+v, want %+v", len(mm.memo), a, b, want)
	}
	a.Notes = append(a.Notes, "mine")
	if c, _ := mm.Interval(s); slices.Contains(c.Notes, "mine") || slices.Contains(b.Notes, "mine") {
		t.Errorf("a note appended to one result is in another's: %v", c.Notes)
	}
	big := s
	big.N = memoContributions + 1
	if _, err := mm.Interval(big); err != nil || len(mm.memo) != 1 {
		t.Errorf("statistics of %d contributions remembered (memo of %d), err %v", big.N, len(mm.memo), err)
	}
	other := s
	other.Estimate *= 3
	for _, alpha := range []float64{1 - 0.9, 0.05} {
		lo, hi, err := mm.DiffInterval(s, other, alpha)
		wlo, whi, werr := DiffInterval(s, other, Auto, alpha)
		if lo != wlo || hi != whi || err != werr {
			t.Errorf("alpha %g: DiffInterval %g – %g (%v), want %g – %g (%v)", alpha, lo, hi, err, wlo, whi, werr)
		}
	}
}

// gammaIncRegInv remembers mathext.GammaIncRegInv's results: the same
// numbers, for shapes met once and again, and across the bound that
// starts its memory afresh.
func TestGammaIncRegInvMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := make([]float64, 300)
	for i := range shapes {
		shapes[i] = math.Exp(rng.Float64()*8 - 4) // 0.02 to 55
	}
	for i := range gammaInvMemoMax + 2000 {
		shape := shapes[rng.IntN(len(shapes))]
		if i >= 1000 && i < gammaInvMemoMax+1000 {
			shape = float64(i) / 100 // distinct: fills the memory past its bound
		}
		p := []float64{0.025, 0.975, 0.05}[rng.IntN(3)]
		got := gammaIncRegInv(shape, p)
		if i%50 != 0 && i >= 1000 && i < gammaInvMemoMax+1000 {
			continue // the inversions are slow: checked on a sample
		}
		if want := mathext.GammaIncRegInv(shape, p); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("call %d: gammaIncRegInv(%v, %v) = %v, want %v", i, shape, p, got, want)
		}
	}
}
