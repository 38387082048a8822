package unbias

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Lines from ../shared/samples/jemalloc/generated/*unbias-on.heap, whose raw
// samples the samples README documents (R = 2^19).
func TestJemallocInvertSamples(t *testing.T) {
	tests := []struct {
		cIn, sIn uint64
		n, z     uint64 // 0: mixed, no single-size solution
	}{
		{20, 960, 20, 48},           // A: 20 × 48 B
		{34, 37013180, 35, 1 << 20}, // B: 35 × 1 MiB (written count below n)
		{10, 741, 0, 0},             // C: 6 × 256 KiB + 2 × 16 B
		{26, 1664, 26, 64},          // D (accumulated): 26 × 64 B
		{1, 82338, 1, 81920},        // one 80 KiB object
		{17, 1632, 17, 96},          // 17 × 96 B
		{16, 50333501, 16, 3 << 20}, // 16 × 3 MiB
		{56, 37759, 0, 0},           // thread line: 8 × 3 MiB + 8 × 96 B
		{129, 132994, 0, 0},         // 1 × 8 B + 1 × 64 MiB
		{0, 0, 0, 0},
	}
	for _, tt := range tests {
		n, z, ok := jemallocInvert(tt.cIn, tt.sIn, 1<<19)
		if ok != (tt.n != 0) || n != tt.n || z != tt.z {
			t.Errorf("invert(%d: %d) = %d × %d (%v), want %d × %d", tt.cIn, tt.sIn, n, z, ok, tt.n, tt.z)
		}
	}
}

// Encoding n samples of one size class and inverting it gives them back.
func TestJemallocInvertRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		lgR := uint(12 + rng.IntN(9))
		z := JemallocSizeClass(uint64(math.Exp(rng.Float64() * math.Log(64<<20))))
		n := uint64(1 + rng.IntN(2000))
		sh, us := JemallocSampleWeights(z, lgR)
		cIn, sIn := JemallocEncode(n*sh, n*us, lgR)
		gn, gz, ok := jemallocInvert(cIn, sIn, float64(uint64(1)<<lgR))
		if !ok || gn != n || gz != z {
			t.Fatalf("lgR %d, %d × %d B -> %d: %d -> %d × %d (%v)", lgR, n, z, cIn, sIn, gn, gz, ok)
		}
	}
}

func TestJemallocSizeClass(t *testing.T) {
	for _, tt := range []struct{ in, want uint64 }{
		{1, 8}, {8, 8}, {9, 16}, {17, 32}, {48, 48}, {65, 80}, {129, 160}, {1000, 1024},
		{1025, 1280}, {4097, 5120}, {81920, 81920}, {1<<20 + 1, 1<<20 + 1<<18},
	} {
		if got := JemallocSizeClass(tt.in); got != tt.want {
			t.Errorf("JemallocSizeClass(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// prof_unbias_map_init's values for R = 2^19, as jemalloc computes them.
func TestJemallocSampleWeights(t *testing.T) {
	sh, us := JemallocSampleWeights(48, 19)
	p := 1 - math.Exp(-48.0/(1<<19))
	if sh != uint64(math.Round(8/p)) || us != uint64(math.Round(48/p)) {
		t.Errorf("weights(48) = %d, %d", sh, us)
	}
	// The written pair of one 80 KiB sample is the documented 1: 82338.
	sh, us = JemallocSampleWeights(81920, 19)
	if c, s := JemallocEncode(sh, us, 19); c != 1 || s != 82338 {
		t.Errorf("encode(1 × 80 KiB) = %d: %d, want 1: 82338", c, s)
	}
}

func BenchmarkJemallocInvert(b *testing.B) {
	sh, us := JemallocSampleWeights(4096, 19)
	cIn, sIn := JemallocEncode(1000*sh, 1000*us, 19)
	for b.Loop() {
		jemallocInvert(cIn, sIn, 1<<19)
	}
}

// encodeClass gives jemallocEncode's pair, bit for bit, for every class
// and sample count tried, at several rates: the exponential it computes
// once per class is the one jemallocEncode computes per line.
func TestJemallocEncodeClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, lgR := range []uint{0, 3, 10, 12, 16, 19, 20, 24, 30} {
		rate := float64(uint64(1) << lgR)
		tab := jemallocTable(rate)
		for i := range sizeClasses {
			ms := []uint64{1, 2, 3, 7, 1000, 1 << 20, 1<<53/tab.unbiasedSz[i] + 1}
			for range 50 {
				ms = append(ms, 1+uint64(rng.ExpFloat64()*1000))
			}
			for _, m := range ms {
				if float64(m)*float64(tab.unbiasedSz[i]) > 1.8e19 {
					continue // jemallocInvert tries no such m
				}
				c, s := tab.encodeClass(i, m)
				wc, ws := jemallocEncode(m*tab.shiftedCnt[i], m*tab.unbiasedSz[i], rate)
				if c != wc || s != ws {
					t.Fatalf("R %g, class %d B, m %d: encodeClass %d: %d, jemallocEncode %d: %d",
						rate, sizeClasses[i], m, c, s, wc, ws)
				}
			}
		}
	}
}
