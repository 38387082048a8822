package ci

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkInterval100kRows computes auto intervals for 100,000 rows whose
// sample counts spread log-uniformly from 1 to 10⁶ (the shape of a real
// profile: many rows with few samples, a few with very many). One op is
// the whole set of rows.
func BenchmarkInterval100kRows(b *testing.B) {
	rows := benchRows(100_000, 1)
	b.ResetTimer()
	for b.Loop() {
		for _, s := range rows {
			if _, err := Interval(s, Auto, 0.95); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkInterval100kRowsGamma is the same for mixed-size rows (gamma).
func BenchmarkInterval100kRowsGamma(b *testing.B) {
	rows := benchRows(100_000, 2)
	for i := range rows {
		rows[i] = rows[i].Add(single(1, 1<<20, 524288))
	}
	b.ResetTimer()
	for b.Loop() {
		for _, s := range rows {
			if _, err := Interval(s, Auto, 0.95); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchRows(n int, seed uint64) []Stats {
	rng := rand.New(rand.NewPCG(seed, 0))
	sizes := []float64{16, 64, 512, 4096, 65536, 524288, 4 << 20}
	rows := make([]Stats, n)
	for i := range rows {
		s := math.Floor(math.Exp(rng.Float64() * math.Log(1e6)))
		rows[i] = single(s, sizes[rng.IntN(len(sizes))], 524288)
	}
	return rows
}
