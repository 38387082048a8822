package main

import "math"

// sizeClasses returns jemalloc's x86-64 Linux small and large size classes up
// to max: 8, then multiples of the 16 B quantum to 128, then four classes per
// doubling (LG_QUANTUM 4, LG_NGROUP 2).
func sizeClasses(max uint64) []uint64 {
	cl := []uint64{8}
	for s := uint64(16); s <= 128; s += 16 {
		cl = append(cl, s)
	}
	for base := uint64(128); ; base *= 2 {
		d := base / 4
		for k := uint64(1); k <= 4; k++ {
			s := base + k*d
			if s > max {
				return cl
			}
			cl = append(cl, s)
		}
	}
}

// htWeights are jemalloc's per-size-class prof_unbias table entries
// (prof_unbias_map_init): the HT weight in bytes, and in objects shifted
// left by SC_LG_TINY_MIN (3) to limit rounding error.
func htWeights(size, rate uint64) (bytes, shiftedObjects uint64) {
	p := 1 - math.Exp(-float64(size)/float64(rate))
	return uint64(math.Round(float64(size) / p)), uint64(math.Round(8 / p))
}

// htSums are the internal prof_unbias counters of a line: the sum of
// shifted object weights and of byte weights over its samples.
type htSums struct{ shifted, bytes uint64 }

// add accounts for n samples of one size class.
func (h *htSums) add(n, size, rate uint64) {
	b, c := htWeights(size, rate)
	h.shifted += n * c
	h.bytes += n * b
}

// encode is jemalloc's prof_do_unbias: the (objects, bytes) pair written to
// the dump so that jeprof's per-line formula gives back the HT sums.
func (h htSums) encode(rate uint64) (objects, bytes uint64) {
	if h.shifted == 0 || h.bytes == 0 {
		return 0, 0
	}
	c := float64(h.shifted) / 8
	s := float64(h.bytes)
	x := s / c
	y := s * (1 - math.Exp(-x/float64(rate)))
	return roundU64(y / x), roundU64(y)
}

// roundU64 is prof_double_uint64_cast: round, clamped at the uint64 range.
func roundU64(d float64) uint64 {
	if d >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(d))
}
