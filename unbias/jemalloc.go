package unbias

import (
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// jemalloc's arithmetic, emulated so that prof_unbias lines can be decoded
// and, where possible, inverted to their raw sample counts (see
// ../shared/reference/jemalloc.md §3). The size-class table is the standard
// x86-64 Linux one: quantum 16, smallest class 8, four classes per doubling.

// lgTinyMin is SC_LG_TINY_MIN: counts are kept shifted by 1<<3 = 8.
const lgTinyMin = 3

// jemallocMinClass is the smallest size class: no sample is smaller.
const jemallocMinClass = 8

var sizeClasses = func() []uint64 {
	c := []uint64{8, 16, 32, 48, 64}
	for lg := uint(6); lg < 62; lg++ {
		delta := uint64(1) << (lg - 2)
		base := uint64(1) << lg
		for i := uint64(1); i <= 4; i++ {
			c = append(c, base+i*delta)
		}
	}
	return c
}()

// JemallocSizeClass returns the usize jemalloc gives a request of size
// bytes: the smallest size class not below it.
func JemallocSizeClass(size uint64) uint64 {
	i := sort.Search(len(sizeClasses), func(i int) bool { return sizeClasses[i] >= size })
	if i == len(sizeClasses) {
		return size
	}
	return sizeClasses[i]
}

// jeTable holds prof_unbias_map_init's per-class weights for one rate.
type jeTable struct {
	rate       float64
	shiftedCnt []uint64 // round(8/p(sz))
	unbiasedSz []uint64 // round(sz/p(sz))
	// perSample is what one sample of the class adds to a line's written
	// bytes: jemallocInvert's guess divides by it.
	perSample []float64
	// x and keep are prof_do_unbias's mean size x and 1 − exp(−x/R) for
	// a line of the class alone: x = (m·us)/(m·sh/8) is the correctly
	// rounded 8·us/sh whatever m, while m·us and m·sh are exact in a
	// double, so jemallocInvert's candidates skip the exponential
	// (encodeClass).
	x, keep []float64
	// rb and ro are, per class, how far jemalloc's own weights stand
	// from the HT weights of its sampler (a trial per byte, π = 1 −
	// (1−1/R)^z): unbiasedSz·π/z and shiftedCnt/8·π. They are off 1 by
	// the rounding of the weights and by the exponential π they use:
	// 1.4% for 48-byte allocations at lg_prof_sample:4, 10⁻⁶ at 19.
	// rbLo and rbHi are rb's least and largest over the classes.
	rb, ro     []float64
	rbLo, rbHi float64
}

var jeTables sync.Map // rate (float64) -> *jeTable

// lastJeTable is the table looked up last: a dump has one rate, and
// looking it up in jeTables boxes the rate on every line.
var lastJeTable atomic.Pointer[jeTable]

func jemallocTable(rate float64) *jeTable {
	if t := lastJeTable.Load(); t != nil && t.rate == rate {
		return t
	}
	if t, ok := jeTables.Load(rate); ok {
		lastJeTable.Store(t.(*jeTable))
		return t.(*jeTable)
	}
	n := len(sizeClasses)
	t := &jeTable{rate: rate, shiftedCnt: make([]uint64, n), unbiasedSz: make([]uint64, n), perSample: make([]float64, n),
		x: make([]float64, n), keep: make([]float64, n), rb: make([]float64, n), ro: make([]float64, n)}
	for i, sz := range sizeClasses {
		// The same double expressions as jemalloc's prof_unbias_map_init.
		szd := float64(sz)
		div := 1.0 - math.Exp(-szd/rate)
		t.unbiasedSz[i] = castU64(szd / div)
		t.shiftedCnt[i] = castU64(float64(uint64(1)<<lgTinyMin) / div)
		// For one size class p(x) does not depend on n, so a line of n
		// samples writes sIn ≈ n·us·p(x).
		us, sh := t.unbiasedSz[i], t.shiftedCnt[i]
		x := 8 * float64(us) / float64(sh)
		t.x[i], t.keep[i] = x, kept(x, rate)
		t.perSample[i] = float64(us) * t.keep[i]
		p := inclusion(szd, rate, true)
		t.rb[i], t.ro[i] = float64(us)*p/szd, float64(sh)/8*p
	}
	t.rbLo, t.rbHi = slices.Min(t.rb), slices.Max(t.rb)
	jeTables.Store(rate, t)
	lastJeTable.Store(t)
	return t
}

// JemallocSampleWeights returns the two counters jemalloc adds for one
// sampled allocation of usize bytes at rate 2^lgR: the shifted HT object
// weight round(8/p) and the HT byte weight round(usize/p).
func JemallocSampleWeights(usize uint64, lgR uint) (shiftedCnt, unbiasedSz uint64) {
	t := jemallocTable(float64(uint64(1) << lgR))
	i := sort.Search(len(sizeClasses), func(i int) bool { return sizeClasses[i] >= usize })
	if i == len(sizeClasses) {
		i--
	}
	return t.shiftedCnt[i], t.unbiasedSz[i]
}

// JemallocEncode is prof_do_unbias: the pair jemalloc writes for a line
// whose summed HT counters are cShifted (objects × 8) and sUnbiased (bytes).
func JemallocEncode(cShifted, sUnbiased uint64, lgR uint) (cIn, sIn uint64) {
	return jemallocEncode(cShifted, sUnbiased, float64(uint64(1)<<lgR))
}

func jemallocEncode(cShifted, sUnbiased uint64, rate float64) (uint64, uint64) {
	if cShifted == 0 || sUnbiased == 0 {
		return 0, 0
	}
	cOut := float64(cShifted) / float64(uint64(1)<<lgTinyMin)
	sOut := float64(sUnbiased)
	x := sOut / cOut
	return encodeKept(sOut, x, kept(x, rate))
}

// kept is prof_do_unbias's 1 − exp(−x/R): the chance that an allocation
// of mean size x is sampled.
func kept(x, rate float64) float64 { return 1.0 - math.Exp(-1.0*x/rate) }

// encodeKept is the end of prof_do_unbias: the pair written for bytes s of
// mean size x, sampled with chance k.
func encodeKept(s, x, k float64) (cIn, sIn uint64) {
	y := s * k
	return castU64(y / x), castU64(y)
}

// castU64 is prof_double_uint64_cast: round, clamped to uint64.
func castU64(d float64) uint64 {
	if d >= 18446744073709551615.0 {
		return math.MaxUint64
	}
	if !(d > 0) {
		return 0
	}
	return uint64(math.Round(d))
}

// jemallocInvert looks for the single-size-class line that jemalloc would
// have written as (cIn, sIn): n samples of usize z. It reports ok only for an
// exact match. Lines with mixed sizes have no such solution (or, rarely, one
// that still gives the right n).
func jemallocInvert(cIn, sIn uint64, rate float64) (n, z uint64, ok bool) {
	if cIn == 0 || sIn == 0 {
		return 0, 0, false
	}
	t := jemallocTable(rate)
	// The written mean size sIn/cIn is the HT mean size up to the rounding
	// of cIn (±0.5) and the shift-8 rounding (a few percent).
	lo := float64(sIn) / (float64(cIn) + 0.5) * 0.9
	hi := float64(sIn) / math.Max(float64(cIn)-0.5, 0.25) * 1.1
	i := sort.Search(len(sizeClasses), func(i int) bool { return float64(sizeClasses[i]) >= lo })
	for ; i < len(sizeClasses) && float64(sizeClasses[i]) <= hi; i++ {
		us := t.unbiasedSz[i]
		guess := math.Round(float64(sIn) / t.perSample[i])
		// The guess itself nearly always matches: it is tried first.
		for _, d := range [3]float64{0, -1, 1} {
			m := guess + d
			if m < 1 || m*float64(us) > 1.8e19 {
				continue
			}
			c, s := t.encodeClass(i, uint64(m))
			if c == cIn && s == sIn {
				return uint64(m), sizeClasses[i], true
			}
		}
	}
	return 0, 0, false
}

// encodeClass is jemallocEncode of m samples of size class i, with the
// class's exponential computed once (jeTable.x).
func (t *jeTable) encodeClass(i int, m uint64) (cIn, sIn uint64) {
	c, s := m*t.shiftedCnt[i], m*t.unbiasedSz[i]
	if c > 1<<53 || s > 1<<53 {
		return jemallocEncode(c, s, t.rate) // x may round otherwise
	}
	return encodeKept(float64(s), t.x[i], t.keep[i])
}

// negligibleBound is the relative width below which jemallocMixed drops
// its bounds: no interval is that narrow (it would take some 10¹⁰
// samples), and at the default period every line would otherwise carry
// a footnote for a part in a million.
const negligibleBound = 1e-5

// jemallocMixed takes a prof_unbias line whose sizes are mixed, decoded to
// jemalloc's own sums objs and bytes (JeprofDecode), to HT estimates under
// jemalloc's sampler. Each sample weighs in the sums its class's table
// weight, r times its HT weight (jeTable.rb, ro), and the sizes are
// unknown: the estimates divide by r at the class nearest the line's
// mean size, and the bytes' HT sum lies in [bytes/rbHi, bytes/rbLo]
// whatever the sizes. lo and hi are that range, or both the estimate
// where it is negligible.
func jemallocMixed(objs, bytes, rate float64) (o, b, lo, hi float64) {
	if !(objs > 0) || rate <= 1 {
		return objs, bytes, bytes, bytes
	}
	t := jemallocTable(rate)
	i := min(sort.Search(len(sizeClasses), func(i int) bool { return float64(sizeClasses[i]) >= bytes/objs }), len(sizeClasses)-1)
	o, b = objs/t.ro[i], bytes/t.rb[i]
	lo, hi = bytes/t.rbHi, bytes/t.rbLo
	if hi-lo < negligibleBound*b {
		lo, hi = b, b
	}
	return o, b, min(lo, b), max(hi, b)
}

// JeprofDecode applies jeprof's per-line formula: both numbers scaled by
// 1/(1−exp(−(bytes/objects)/R)). On a raw line it is the average-size
// estimate; on a prof_unbias line it recovers jemalloc's HT sums.
func JeprofDecode(objects, bytes, rate float64) (float64, float64) {
	if objects == 0 || rate <= 1 {
		return objects, bytes
	}
	scale := -1 / math.Expm1(-(bytes/objects)/rate)
	return objects * scale, bytes * scale
}
