package unbias

import (
	"math"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/mix"
	"github.com/heapest/heapest/parse"
)

// Contribution is one record's share of a value: its HT estimate with the
// statistics an interval needs, and the allocation size when it is known.
type Contribution struct {
	ci.Stats
	// Size is the allocation size (usize) all the record's samples share,
	// or 0 when sizes are mixed or unknown.
	Size float64
}

// Contribute unbiases one record for value v. A record with nothing for v
// gives a zero Contribution (Stats.N == 0).
func Contribute(rec *parse.Record, v Value) Contribution {
	var m Memo
	return m.Contribute(rec, v)
}

// Memo remembers the last prof_unbias pair it inverted, so that the
// values of a record that read the same pair (in-use space and objects)
// invert it once: the inversion is most of unbiasing a jemalloc line. It
// also remembers, per value, the sampled pairs it unbiased lately: Go
// writes most samples of a heap profile with the counts of the one
// before, and a .NET trace's events (one object of its type's size) or a
// dump's lines repeat a few thousand pairs over a hundred thousand.
// The zero Memo is ready to use; it is not safe for concurrent use.
type Memo struct {
	cIn, sIn uint64
	rate     float64
	n, z     uint64
	ok, set  bool
	last     [len(valueNames)]pairCache
}

// pairCache is a value's sampled pairs and what bernoulli made of them:
// the last one, and, once a value has seen a few distinct pairs, a
// direct-mapped cache of them. The cache is made only when pairs turn
// out to repeat: for pairProbation lookups first, only the pairs' hashes
// are kept (4 KB), and the cache (110 KB) is made when a quarter of them
// were seen before (a jemalloc dump's kept records reach the Memo once
// per distinct numbers: nothing there repeats).
type pairCache struct {
	last        lastPair
	misses      int
	seen        []uint64 // per slot, the hash (|1) of the last pair in it, on probation
	slots       []lastPair
	tries, hits int
	off         bool
}

const (
	// pairSlots is the size of a value's cache (a power of two).
	pairSlots = 512
	// pairProbation is how many lookups the cache is judged on.
	pairProbation = 512
)

// lastPair is a sampled pair and rate (with its sampler's kind), and
// what bernoulli made of them.
type lastPair struct {
	c    parse.Counts
	rate float64
	geo  bool
	out  Contribution
	set  bool
}

// sampled is bernoulli, remembered per value.
func (m *Memo) sampled(c parse.Counts, v Value, rate float64, geo bool) Contribution {
	pc := &m.last[v]
	l := &pc.last
	if l.set && l.c == c && l.rate == rate && l.geo == geo {
		return l.out
	}
	if pc.misses++; pc.misses > 16 && !pc.off {
		// A few misses first: a Memo made for one record, or a profile
		// of a few pairs, never pays for the cache.
		if l = pc.slot(c, rate, geo); l.set {
			pc.last = *l
			return l.out
		}
	}
	*l = lastPair{c: c, rate: rate, geo: geo, out: m.bernoulli(c, v, rate, geo), set: true}
	if l != &pc.last {
		pc.last = *l
	}
	return l.out
}

// slot returns the cache slot of pair c at rate, set when it holds them;
// on probation, or once the cache was dropped, pc.last, not set.
func (pc *pairCache) slot(c parse.Counts, rate float64, geo bool) *lastPair {
	h := mix.Finish(math.Float64bits(c.Objects)*31 ^ math.Float64bits(c.Bytes) ^ math.Float64bits(c.Size)<<1 ^ math.Float64bits(rate)<<2)
	i := h & (pairSlots - 1)
	if pc.slots == nil {
		if pc.seen == nil {
			pc.seen = make([]uint64, pairSlots)
		}
		if pc.seen[i] == h|1 {
			pc.hits++
		}
		pc.seen[i] = h | 1
		if pc.tries++; pc.tries == pairProbation {
			if pc.seen, pc.off = nil, 4*pc.hits < pc.tries; !pc.off {
				pc.slots = make([]lastPair, pairSlots)
			}
		}
		pc.last.set = false // c is not it (sampled checked)
		return &pc.last
	}
	l := &pc.slots[i]
	if !l.set || l.c != c || l.rate != rate || l.geo != geo {
		l.set = false // another pair's: taken over
	}
	return l
}

// invert is jemallocInvert, remembered.
func (m *Memo) invert(cIn, sIn uint64, rate float64) (n, z uint64, ok bool) {
	if !m.set || m.cIn != cIn || m.sIn != sIn || m.rate != rate {
		m.n, m.z, m.ok = jemallocInvert(cIn, sIn, rate)
		m.cIn, m.sIn, m.rate, m.set = cIn, sIn, rate, true
	}
	return m.n, m.z, m.ok
}

// Contribute is the package's Contribute, with m's memory.
func (m *Memo) Contribute(rec *parse.Record, v Value) Contribution {
	if rec.Pre != nil {
		// Statistics heapest computed earlier (its own pprof output):
		// used as written, so intervals and merges reproduce exactly.
		if !rec.Pre.Has[v] {
			return Contribution{}
		}
		return Contribution{Stats: rec.Pre.Stats[v]}
	}
	c := rec.InUse
	if v.IsAlloc() {
		c = rec.Alloc
	}
	if c.Enc == parse.Unresolved {
		// A consumer resolves the encoding (parse.Profile.Resolve) before
		// unbiasing; reading such counts as anything is a wrong answer.
		panic("unbias: counts of an unresolved encoding")
	}
	if c.IsZero() {
		return Contribution{}
	}
	var out Contribution
	switch rec.Scheme {
	case parse.Bernoulli, parse.Geometric:
		if rec.Rate <= 1 {
			out = exact(m.plain(c), v)
		} else {
			out = m.sampled(c, v, rec.Rate, rec.Scheme == parse.Geometric)
		}
	case parse.Exact:
		out = exact(m.plain(c), v)
	case parse.Weighted:
		out = weighted(c, v, rec)
	default:
		out = estimateOnly(c, v, rec.Rate)
	}
	out.N = 1
	out.Rate = rec.Rate
	if c.Approx || out.SamplesBound {
		out.Seen = 0 // the samples are not known for sure: nor what they hold
	}
	out.Approx = out.Approx || c.Approx
	if rec.HasOffset && v == AllocSpace {
		// A trace never ends on a sample of every group: the bytes after
		// its last sample are unobserved (the design's compensation).
		out.Offset, out.HasOffset, out.OpenEnd = rec.Offset, true, true
	}
	return out
}

// pick returns the bytes or the objects of a pair.
func pick(v Value, objects, bytes float64) float64 {
	if v.IsSpace() {
		return bytes
	}
	return objects
}

// inclusion is π(z), the probability that per-byte sampling with mean
// period R samples an allocation of z bytes: 1 − exp(−z/R) for sample
// points of exponential gaps, 1 − (1−1/R)^z for trials of each byte
// (geometric gaps, parse.Geometric).
func inclusion(z, rate float64, geometric bool) float64 {
	if geometric && rate >= 1 {
		return -math.Expm1(z * math.Log1p(-1/rate))
	}
	return -math.Expm1(-z / rate)
}

// sampledSize is the size c's allocations were sampled by, where the
// allocator's size classes make it other than c.Size; 0 otherwise.
func sampledSize(c parse.Counts) float64 {
	if c.Classes == parse.TcmallocClasses && c.Size > 0 {
		return float64(TcmallocSampledSize(uint64(c.Size)))
	}
	return 0
}

// single is the contribution of n samples that all have size z, sampled
// by size zs (0: z): the statistics the ci calculator gives for
// --samples n --size z.
func single(n, z, zs, rate float64, geo bool, v Value) Contribution {
	return Contribution{Size: z, Stats: Samples{Count: n, Rate: rate, Geometric: geo, Size: z, SampledSize: zs}.Stats(v)}
}

// mixed is the contribution of a line whose sample sizes are unknown: its
// estimate is given (objects and bytes); n is the sample count or an upper
// bound. Variance of bytes uses the bounds V ≤ n·R² and V ≤ R·Ŝ, which hold
// because each sample's term z²(1−π)/π² is at most R² and at most R·z/π.
// The object-count variance has no bound (small sizes dominate it and are
// not visible), so object counts of such lines get no interval: the
// average-size variance was a guess, and the coverage study measured it
// covering as little as 0% (docs/statistics.md).
func mixed(n, objects, bytes, rate float64, v Value) Contribution {
	out := Contribution{Stats: ci.Stats{Samples: n, Mixed: true}}
	if v.IsSpace() {
		out.Estimate = bytes
		out.Var = math.Min(n*rate*rate, rate*bytes)
		out.MaxWeight = rate
		return out
	}
	out.Estimate = objects
	out.NoInterval, out.Conditional = true, true
	return out
}

func (m *Memo) bernoulli(c parse.Counts, v Value, rate float64, geo bool) Contribution {
	switch c.Enc {
	case parse.JemallocUnbias:
		cIn, sIn := uint64(c.Objects), uint64(c.Bytes)
		if n, z, ok := m.invert(cIn, sIn, rate); ok {
			return single(float64(n), float64(z), 0, rate, geo, v)
		}
		objs, bytes := JeprofDecode(c.Objects, c.Bytes, rate)
		lo, hi := bytes, bytes
		if geo {
			objs, bytes, lo, hi = jemallocMixed(objs, bytes, rate)
		}
		out := mixed(c.Objects, objs, bytes, rate, v)
		out.SamplesBound = true
		if v.IsSpace() {
			out.Bias, out.Excess = hi-bytes, bytes-lo
		}
		return out
	case parse.Scaled:
		if c.Size > 0 {
			out := single(c.Samples, c.Size, 0, rate, geo, v)
			out.Estimate = pick(v, c.Objects, c.Bytes) // the producer's own HT value
			out.SamplesBound = c.SamplesBound
			return out
		}
		out := mixed(c.Samples, c.Objects, c.Bytes, rate, v)
		out.SamplesBound = c.SamplesBound
		return out
	default: // Raw sampled sums
		n := c.Objects
		z := c.Size
		if z == 0 && n == 1 {
			z = c.Bytes // one sample: its size
		}
		if z == 0 {
			// Sizes unknown: an average that happens to be a size class
			// ({32, 64} → 48 B, {1, 2} MiB → 1.5 MiB) is no evidence of
			// one size, so the line is read with jeprof's average-size
			// estimate and its error bound, as any mixed line.
			objs, bytes := averageSize(n, c.Bytes, rate, geo)
			out := mixed(n, objs, bytes, rate, v)
			out.Approx = true
			out.Seen = pick(v, n, c.Bytes) // the sampled sums themselves
			if v.IsSpace() {
				out.Bias = rawMixedBias(n, c.Bytes, bytes, rate, geo)
			}
			return out
		}
		return single(n, z, sampledSize(c), rate, geo, v)
	}
}

// averageSize is the average-size estimate of n samples summing to b
// bytes: both scaled by 1/π at their mean size, jeprof's per-line
// formula where the sample points have exponential gaps.
func averageSize(n, b, rate float64, geo bool) (objects, bytes float64) {
	if n == 0 || rate <= 1 {
		return n, b
	}
	scale := 1 / inclusion(b/n, rate, geo)
	return n * scale, b * scale
}

// rawMixedBias bounds how far the average-size estimate est of a raw line
// with n samples summing to b bytes lies below the HT estimate Σ h(zᵢ),
// h(z) = z/π(z). h is convex, so over all sizes with Σ zᵢ = b
// the sum is least when the sizes are equal (Jensen): est = n·h(b/n) is
// that least value, never above the HT estimate. It is largest at a
// corner of the sizes' range: n−1 allocations of the least size and one
// of the rest. The bound is that largest value less est. The least size
// is a byte, or jemalloc's smallest size class (8 bytes) for the lines
// of a trial-per-byte sampler, which only jemalloc writes raw: a third
// less wide on lines of 32-byte allocations at lg_prof_sample:4.
func rawMixedBias(n, b, est, rate float64, geo bool) float64 {
	if n < 2 {
		return 0
	}
	h := func(z float64) float64 { return z / inclusion(z, rate, geo) }
	least := 1.0
	if geo {
		least = math.Max(1, math.Min(jemallocMinClass, b/n))
	}
	most := (n-1)*h(least) + h(math.Max(least, b-(n-1)*least))
	return math.Max(0, most-est)
}

// plain is c with a prof_unbias pair decoded to what every allocation
// recorded holds: jemalloc encodes its lines at lg_prof_sample:0 too,
// with 1 − exp(−Z) for Z-byte allocations sampled surely, so 65,536
// objects of 8 bytes are written as 65,514 and 524,112 bytes.
func (m *Memo) plain(c parse.Counts) parse.Counts {
	if c.Enc != parse.JemallocUnbias || c.Objects == 0 {
		return c
	}
	if n, z, ok := m.invert(uint64(c.Objects), uint64(c.Bytes), 1); ok {
		return parse.Counts{Objects: float64(n), Bytes: float64(n * z), Size: float64(z)}
	}
	// Mixed sizes: jeprof's scaling, whose sums are the counts (at R = 1
	// jemalloc's table weights are the sizes themselves).
	scale := 1 / inclusion(c.Bytes/c.Objects, 1, false)
	return parse.Counts{Objects: math.Round(c.Objects * scale), Bytes: math.Round(c.Bytes * scale)}
}

// exact is a record from a profile that recorded every allocation.
func exact(c parse.Counts, v Value) Contribution {
	val := pick(v, c.Objects, c.Bytes)
	n := c.Objects
	if c.Enc == parse.Scaled && c.Samples > 0 {
		n = c.Samples
	}
	unit := 1.0
	if v.IsSpace() && c.Objects > 0 {
		unit = c.Bytes / c.Objects
	}
	return Contribution{Size: c.Size, Stats: ci.Stats{Estimate: val, Samples: n, Complete: true, P: 1, Unit: unit}}
}

// estimateOnly is a record whose sampling gives no honest interval.
func estimateOnly(c parse.Counts, v Value, rate float64) Contribution {
	val := pick(v, c.Objects, c.Bytes)
	if c.Enc == parse.Raw && rate > 1 && c.Objects > 0 {
		objs, bytes := JeprofDecode(c.Objects, c.Bytes, rate)
		val = pick(v, objs, bytes)
	}
	return Contribution{Size: c.Size, Stats: ci.Stats{Estimate: val, Samples: c.Samples, NoInterval: true, Mixed: true}}
}
