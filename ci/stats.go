package ci

import "math"

// Stats are the statistics of a group of sampled allocations that every
// interval method needs. All fields combine with Add, which is commutative
// and associative: that is what makes merging dumps sound.
type Stats struct {
	// N is the number of contributions (records) merged; 0 is an empty group.
	N int64

	// Estimate is the Horvitz–Thompson estimate of the value (bytes or
	// objects): the sum over sampled allocations of value/π.
	Estimate float64

	// Var is the HT variance estimate, the sum of value²(1−π)/π² (or a
	// documented upper bound of it where the source hides per-sample sizes).
	Var float64

	// Samples is the raw number of sampled allocations, or an upper bound on
	// it when SamplesBound is set.
	Samples float64

	// MaxWeight is the largest effective Poisson weight of one sample,
	// value·(1−π)/π: the Fay–Feuer gamma interval's w_M.
	MaxWeight float64

	// P is the inclusion probability every sample shares (when !Mixed).
	P float64

	// Unit is the value one allocation stands for (its size in bytes for
	// space values, 1 for object counts), when !Mixed.
	Unit float64

	// Rate is the per-byte sampling period every contribution shares, when
	// !MixedRate.
	Rate float64

	// Offset is the sum of (size − sampled-byte offset) over the samples of
	// .NET AllocationSampled events: Approach 2's u.
	Offset float64

	// Bias bounds how far Estimate may lie below the HT estimate when the
	// estimate itself is approximate: a raw dump line of unknown sizes,
	// decoded with its average size, is the least HT value its samples
	// allow (Jensen's inequality) and at most Bias below the HT value.
	// The interval's upper end widens by it; its lower end needs not.
	// Bounds add across groups.
	Bias float64

	// Spill and Excess are bytes by which a weighted group's estimate may
	// be low or high because its producer sampled with gaps (JFR: a weight
	// that covers a gap in a thread's samples may hold another stack's
	// bytes): the upper bound is the method's at Estimate+Spill, the lower
	// at Estimate−Excess. They add across groups.
	Spill, Excess float64

	// LargeMissed is the expected number of allocations at least one
	// sampling period large that sampling missed whole: the sum of
	// (1−π)/π over the sampled allocations of size ≥ Rate (each stands
	// for 1/π allocations of its size, of which it is one).
	// LargeMissedValue is their expected value, the sum of
	// value·(1−π)/π over the same samples, so that their ratio is what a
	// missed large allocation typically weighs. Where LargeMissed is not
	// negligible against a test's level, the upper end of an interval
	// allows for one such allocation missed (see ends).
	LargeMissed, LargeMissedValue float64

	// Seen is the value the sampled allocations themselves hold: their
	// bytes, or their number, where the input says them (0 where it does
	// not). They were allocated (and, for a live value, are live), so
	// the group holds at least Seen whatever the sampling missed, and an
	// interval's lower end is never below it. It adds across groups.
	Seen float64

	// The flags follow the numbers, packed together: a Stats is kept per
	// cell and group, and padding after each flag made it a fifth larger.

	// SamplesBound marks Samples as a bound (jemalloc prof_unbias lines with
	// mixed sizes, tcmalloc profiles without a period).
	SamplesBound bool

	// Mixed is set when the contributions do not share one inclusion
	// probability P and one Unit: the exact interval then does not apply.
	Mixed bool

	// MixedRate is set when contributions come from different periods.
	MixedRate bool

	// HasOffset is set when every contribution carries offsets, so the .NET
	// Approach 2 interval applies.
	HasOffset bool

	// OpenStart and OpenEnd are set when the observation window of offset
	// data does not start or end on a sample (a trace's end, a --from/--to
	// window): Approach 2's bounds then take s−1 and s+1 samples.
	OpenStart, OpenEnd bool

	// Complete is set when every allocation was recorded (π = 1): the
	// estimate is exact and the interval has zero width.
	Complete bool

	// NoInterval is set when some contribution's sampling gives no honest
	// interval (fixed-stride .NET ticks, unknown producers).
	NoInterval bool

	// Approx is set when some contribution's variance or count is an
	// approximation rather than a bound (e.g. jemalloc mixed-size object
	// counts, tcmalloc raw counts estimated from a guessed period).
	Approx bool

	// Weighted is set when some contribution is a producer-weighted sample
	// (JFR): its variance is a model's, not the sampling design's, and the
	// interval says so (NoteWeighted).
	Weighted bool

	// Conditional is set when the value is a count of allocations whose
	// sizes are known only from the samples (object counts of sampled
	// profiles): allocations of sizes no sample hit may exist and weigh
	// next to nothing in bytes, so no interval bounds their number. The
	// interval is then on the allocations of the sampled sizes, and says
	// so (MethodConditional, NoteConditional).
	Conditional bool

	// Correlated is set when the group sums inputs whose samples may be
	// correlated (see Correlate): its Var, MaxWeight and LargeMissed are
	// then those of the worst case, and the one-probability methods
	// (exact, Approach 2), which count independent samples, do not apply.
	Correlated bool
}

// Correlate makes s the statistics of a sum over inputs whose samples may
// be correlated, at most k of them with one another: the processes forked
// from one parent without exec, whose allocators' samplers all continue
// the parent's random sequence (jemalloc seeds it once per thread, and a
// forked child inherits the thread), or dumps of one process, which hold
// the same sampled allocations. For any correlation, the variance of a
// sum of k terms is at most k times the sum of their variances (Cauchy–
// Schwarz), reached when the k are one sample counted k times; so Var
// and the largest weight are k times the independent ones, and large
// allocations are missed k at a time (LargeMissed is 1/k as many events,
// each k times the value). k ≤ 1 leaves s as it is. The scaling commutes
// with Merge, so a table's cells may be correlated one by one.
func (s *Stats) Correlate(k float64) {
	if !(k > 1) || s.N == 0 {
		return
	}
	s.Var *= k
	s.MaxWeight *= k
	s.LargeMissed /= k
	s.Correlated = true
}

// AllowUnseen makes s the statistics of bytes summed over inputs sampled
// at periods up to rate, some of which may hold the group's allocations
// without a sample of them: one more sample of weight up to rate is then
// as likely as in a single input of that period (unbias.Samples.Stats
// allows it there), whichever inputs the group's samples came from. A
// group recorded whole by its own inputs (Complete) is no longer known
// whole. Statistics of nothing stay empty.
func (s *Stats) AllowUnseen(rate float64) {
	if s.N == 0 || !(rate > 1) || s.NoInterval {
		return
	}
	s.MaxWeight = max(s.MaxWeight, rate)
	s.Complete = false
}

// AllowUnseenOf is AllowUnseen for a sum of bytes and AllowUnseenCount
// for a count: the one place that says which a value takes.
func (s *Stats) AllowUnseenOf(rate float64, bytes bool) {
	if bytes {
		s.AllowUnseen(rate)
	} else {
		s.AllowUnseenCount(rate)
	}
}

// AllowUnseenCount is AllowUnseen for a count of allocations of one size
// (P and Rate say which: Z = −Rate·ln(1−P)): one more sample, from an input
// of period rate that had none, stands for (1−π)/π of them, π that size's
// inclusion probability there. A count of mixed sizes or periods says no
// size, and stays as it is (its interval is on the sampled sizes anyway).
func (s *Stats) AllowUnseenCount(rate float64) {
	if s.N == 0 || s.NoInterval || s.Mixed || s.MixedRate || !(s.P > 0 && s.P < 1) || !(s.Rate > 0 && rate > s.Rate) {
		return
	}
	// 1−π = exp(−Z/R); for a trial per byte (jemalloc) it is (1−1/R)^Z,
	// the same Z to within 1/(2R) of it: a weight bound needs no more.
	p := -math.Expm1(math.Log1p(-s.P) * s.Rate / rate)
	s.MaxWeight = max(s.MaxWeight, s.Unit*(1-p)/p)
}

// Uncorrelate undoes Correlate(k): the statistics of the same sum taken
// for independent inputs, to be widened again for a larger group (a
// merge's, read into a merge of merges that finds more of the family).
func (s *Stats) Uncorrelate(k float64) {
	if !(k > 1) || s.N == 0 {
		return
	}
	s.Var /= k
	s.MaxWeight /= k
	s.LargeMissed *= k
	s.Correlated = false
}

// Repeat makes s the statistics of k disjoint groups of independent
// allocations, each with s's: s merged with itself k times (k a whole
// number ≥ 1), in one step.
func (s *Stats) Repeat(k float64) {
	if s.N == 0 || k == 1 {
		return
	}
	s.N *= int64(k)
	for _, f := range []*float64{&s.Estimate, &s.Var, &s.Samples, &s.Offset, &s.Bias,
		&s.Spill, &s.Excess, &s.LargeMissed, &s.LargeMissedValue, &s.Seen} {
		*f *= k
	}
}

// Scale makes s the statistics of its value in a unit c times smaller
// (c = 1/n: the mean of n processes' sum): every value, weight, size and
// period is multiplied by c, its variance by c², and the counts (of
// samples, of allocations missed) and probabilities stay. Each method's
// interval then scales by c, but for the byte-granular .NET Approach 2
// and exact quantiles, whose bytes become fractions of one.
func (s *Stats) Scale(c float64) {
	if c == 1 {
		return
	}
	for _, f := range []*float64{&s.Estimate, &s.MaxWeight, &s.Unit, &s.Rate, &s.Offset, &s.Bias,
		&s.Spill, &s.Excess, &s.LargeMissedValue, &s.Seen} {
		*f *= c
	}
	s.Var *= c * c
}

// wholeWeight is what one missed large allocation typically weighs (see
// LargeMissed), 0 when none is expected.
func (s Stats) wholeWeight() float64 {
	if s.LargeMissed <= 0 {
		return 0
	}
	return s.LargeMissedValue / s.LargeMissed
}

// Add returns the statistics of the union of two disjoint groups of
// independent allocations.
func (s Stats) Add(o Stats) Stats {
	s.Merge(&o)
	return s
}

// Merge adds o into s in place: s.Add(o) without copying either struct,
// for aggregation's inner loop.
func (s *Stats) Merge(o *Stats) {
	switch {
	case o.N == 0:
		return
	case s.N == 0:
		*s = *o
		return
	}
	s.N += o.N
	s.Estimate += o.Estimate
	s.Var += o.Var
	s.Samples += o.Samples
	s.SamplesBound = s.SamplesBound || o.SamplesBound
	if o.MaxWeight > s.MaxWeight || s.MaxWeight != s.MaxWeight {
		s.MaxWeight = o.MaxWeight // a plain compare: math.Max's ±0 and NaN care costs here
	}
	s.Mixed = s.Mixed || o.Mixed || s.P != o.P || s.Unit != o.Unit
	s.MixedRate = s.MixedRate || o.MixedRate || s.Rate != o.Rate
	s.Offset += o.Offset
	s.Bias += o.Bias
	s.HasOffset = s.HasOffset && o.HasOffset
	s.OpenStart = s.OpenStart || o.OpenStart
	s.OpenEnd = s.OpenEnd || o.OpenEnd
	s.Complete = s.Complete && o.Complete
	s.NoInterval = s.NoInterval || o.NoInterval
	s.Approx = s.Approx || o.Approx
	s.Weighted = s.Weighted || o.Weighted
	s.Spill += o.Spill
	s.Excess += o.Excess
	s.LargeMissed += o.LargeMissed
	s.LargeMissedValue += o.LargeMissedValue
	s.Seen += o.Seen
	s.Conditional = s.Conditional || o.Conditional
	s.Correlated = s.Correlated || o.Correlated
	if s.Mixed {
		s.P, s.Unit = 0, 0
	}
	if s.MixedRate {
		s.Rate = 0
	}
}
