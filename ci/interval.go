package ci

import (
	"fmt"
	"math"
)

// Method is an interval method.
type Method uint8

const (
	// Auto picks, per group, the best method valid for its statistics.
	Auto Method = iota
	// Exact is the negative-binomial interval (one inclusion probability),
	// or .NET Approach 2 for groups with sampled-byte offsets.
	Exact
	// CampPaulson is Exact with the Camp–Paulson approximation of the CDF.
	CampPaulson
	// Gamma is the Fay–Feuer interval for weighted sums of Poisson counts.
	Gamma
	// Normal is estimate ± z·√Var.
	Normal
)

// Result is an interval for one group.
type Result struct {
	Estimate, Lo, Hi float64
	// Samples is the raw sample count (or bound) the interval rests on.
	Samples float64
	// Method names the method actually used ("exact", "gamma", "none", ...).
	Method string
	// Notes are caveats for this result, printed as footnotes.
	Notes []string
}

// Method names that appear in Result.Method besides the Method values.
const (
	// MethodNone marks a group for which no honest interval exists.
	MethodNone = "none"
	// MethodConditional marks an interval on the count of allocations of
	// the sizes that were sampled (Stats.Conditional), whatever method
	// computed it.
	MethodConditional = "conditional"
)

// Notes attached to results.
const (
	NoteSamplesBound = "samples is an upper bound (sizes mixed on a dump line)"
	NoteApprox       = "approximate: the variance or count is estimated, not bounded"
	NoteNoInterval   = "no interval: the sampling gives no honest error bound here (fixed-stride sampling, an unknown producer, or object counts of dump lines with mixed sizes)"
	NoteNotExact     = "exact needs one inclusion probability; used gamma"
	NoteCampPaulson  = "approximate: Camp–Paulson normal approximation of the exact CDF"
	NoteOpenEnd      = "upper bound at s+1 samples: the bytes after the last sample are unobserved (.NET design)"
	NoteOpenStart    = "lower bound at s−1 samples: the window starts between samples (.NET design)"
	NoteBias         = "widened: a dump line's sizes are unknown where it mixes them, and its samples allow a range of estimates (a raw line's average-size one is the least); the bounds allow for the whole range"
	NoteContains     = "interval widened to hold the estimate: allocations many sampling periods large are sampled almost surely, so the count is nearly exact and the estimate Z/π lies just above it"
	NoteEstimator    = "interval widened to hold the estimate: the row prints Horvitz–Thompson's Σ Z/π, the interval is Approach 2's, whose own estimate s·(R−1)+u is further off here"
	NoteConditional  = "conditional on the sampled sizes: counts the allocations of the sizes some sample hit; allocations of sizes no sample hit are not counted (their bytes are, within the bytes interval)"
	NoteCorrelated   = "widened: the inputs' samples may be correlated (forked from one parent, or dumps of one process), so the variance is k times the independent one for k such inputs"
	NoteSeen         = "lower end: what the sampled allocations themselves hold, which the method's bound was below"
	NoteWeighted     = "JFR: the sum of the events' weights; model-based interval (each weight a Poisson count, gamma), coverage measured in docs/jfr.md"
)

// NoteHidden is the note of an upper bound that allows for allocations of
// sizes no sample hit, at the level 1 − alpha: B bytes of them all go
// unseen with probability exp(−B/R), which is alpha/2 at B = R·ln(2/α)
// (3.7 sampling periods at 95%, 5.3 at 99%).
func NoteHidden(alpha float64) string {
	return fmt.Sprintf("upper bound allows for allocations of sizes no sample hit: B bytes of them all go unseen with probability exp(−B/R), so up to %.1f sampling periods of them at %g%%",
		math.Log(2/alpha), math.Round(1e4*(1-alpha))/100)
}

// Interval computes the interval of s at the given confidence with method
// m. Statistics that no sampling can produce (negative or non-finite sums,
// a probability outside (0,1], a negative rate) and a confidence outside
// (0,1) are errors; every returned bound is finite.
func Interval(s Stats, m Method, confidence float64) (Result, error) {
	if !(confidence > 0 && confidence < 1) {
		return Result{}, fmt.Errorf("confidence %v outside (0,1)", confidence)
	}
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	alpha := 1 - confidence
	var r Result
	switch {
	case s.NoInterval:
		r = Result{Estimate: s.Estimate, Lo: s.Estimate, Hi: s.Estimate, Method: MethodNone, Notes: []string{NoteNoInterval}}
	case s.Complete || s.N == 0:
		r = Result{Estimate: s.Estimate, Lo: s.Estimate, Hi: s.Estimate, Method: Exact.String()}
	case s.Bias > 0 || s.Spill > 0 || s.Excess > 0:
		r = widened(s, m, alpha)
	default:
		r = dispatch(s, m, alpha)
	}
	if r.Method != MethodNone && (r.Hi < r.Estimate || r.Lo > r.Estimate) {
		// An exact interval is on the count of allocations, N·Z; the HT
		// estimate s·Z/π is not a multiple of Z, and where π ≈ 1 it falls
		// just outside [N_lo·Z, N_hi·Z]. An interval must hold its estimate.
		r.Lo, r.Hi = math.Min(r.Lo, r.Estimate), math.Max(r.Hi, r.Estimate)
		if s.offsetApplies() {
			r.Notes = append(r.Notes, NoteEstimator)
		} else {
			r.Notes = append(r.Notes, NoteContains)
		}
	}
	if s.Conditional && r.Method != MethodNone && !s.Complete {
		r.Method = MethodConditional
		r.Notes = append(r.Notes, NoteConditional)
	}
	for _, x := range []float64{r.Estimate, r.Lo, r.Hi} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Result{}, fmt.Errorf("invalid statistics: %s interval of %+v is out of range", r.Method, s)
		}
	}
	r.Samples = s.Samples
	if s.SamplesBound {
		r.Notes = append(r.Notes, NoteSamplesBound)
	}
	if s.Approx {
		r.Notes = append(r.Notes, NoteApprox)
	}
	if s.Weighted && !s.NoInterval {
		r.Notes = append(r.Notes, NoteWeighted)
	}
	if s.Correlated && !s.NoInterval && !s.Complete {
		r.Notes = append(r.Notes, NoteCorrelated)
	}
	if r.Method != MethodNone && s.Seen > r.Lo && r.Lo < r.Estimate {
		// The samples alone hold Seen: no bound below it can be right.
		r.Lo = math.Min(s.Seen, r.Estimate)
		r.Notes = append(r.Notes, NoteSeen)
	}
	return r, nil
}

// dispatch runs method m, falling back to gamma where m does not apply.
func dispatch(s Stats, m Method, alpha float64) Result {
	switch m {
	case Normal:
		return NormalInterval(s.Estimate, s.Var, alpha)
	case Gamma:
		return s.gamma(alpha)
	case Exact, CampPaulson, Auto:
		approx := m == CampPaulson
		if s.offsetApplies() && m == Auto {
			return PresentOffsetWindowInterval(s.Estimate, s.Samples, 1/s.Rate, s.Offset, alpha, s.OpenStart, s.OpenEnd)
		}
		if s.offsetApplies() {
			return OffsetWindowInterval(s.Estimate, s.Samples, 1/s.Rate, s.Offset, alpha, approx, s.OpenStart, s.OpenEnd)
		}
		if s.exactApplies() {
			if m == Auto {
				return s.presentExact(alpha)
			}
			return ExactInterval(s.Estimate, s.Samples, s.P, s.Unit, alpha, approx)
		}
		r := s.gamma(alpha)
		if m != Auto {
			r.Notes = append(r.Notes, NoteNotExact)
		} else {
			r.Lo = s.presentGammaLower(alpha)
		}
		return r
	}
	return s.gamma(alpha)
}

// gamma is the group's gamma interval. Its upper end also allows for one
// large allocation missed whole (Stats.LargeMissed), where that is
// likely enough to matter at the level (as a comparison's, see
// missedLevel): otherwise a row of allocations many sampling periods
// large gets an upper bound a hair above its estimate.
func (s Stats) gamma(alpha float64) Result {
	r := GammaInterval(s.Estimate, s.Var, s.MaxWeight, alpha)
	w := s.wholeWeight()
	if w <= s.MaxWeight {
		return r
	}
	g := alpha / 2
	r.Hi = GammaInterval(s.Estimate, s.Var, w, alpha).Hi
	if rest, ok := missedLevel(s, g); ok {
		r.Hi = math.Min(r.Hi, GammaInterval(s.Estimate, s.Var, s.MaxWeight, 2*rest).Hi)
	}
	return r
}

// presentGammaLower is auto's gamma lower bound for a group known to
// have at least one sample, as PresentExactInterval's is for one size:
// the bound at level a·P(S ≥ 1) instead of a = α/2, where P(S ≥ 1) =
// 1 − exp(−L/w) is the chance that a group of L bytes whose samples
// weigh w = Var/Estimate each on average shows at all. Iterating from
// the plain bound descends to the fixed point. Without it, rows that
// expect a fraction of a sample and whose sizes are unknown (a raw line
// of two samples) were missed low 8% of the times they appeared; rows
// of many samples, or of allocations much larger than R, are unchanged
// (P(S ≥ 1) is 1 there).
func (s Stats) presentGammaLower(alpha float64) float64 {
	y, v := s.Estimate, s.Var
	a := alpha / 2
	lo := GammaInterval(y, v, s.MaxWeight, alpha).Lo
	if !(y > 0 && v > 0) || s.Weighted {
		return lo // JFR's weights are a model's, measured as they are (docs/jfr.md)
	}
	w := v / y
	for range 60 {
		level := a * -math.Expm1(-lo/w)
		if level < 1e-12 {
			// The bound lies far below one sample's weight (and gonum's
			// incomplete gamma inverse fails at such levels): 0 is the
			// honest end.
			return 0
		}
		next := gammaQuantile(y*y/v, w, level, false)
		if next < y*1e-9 {
			return 0 // one count: the group may be as small as it likes
		}
		if !(next < lo*(1-1e-12)) {
			break
		}
		lo = next
	}
	return lo
}

// presentExact is auto's interval for a group of one size: the exact
// interval of a row present because it was sampled, its upper end raised
// to the gamma interval's where the group may hold allocations of sizes
// no sample hit (MaxWeight above its own samples' weight, see
// unbias.Samples.Stats). Without that, a row of a few allocations many
// periods large had a near-zero-width interval, and 64 B allocations
// worth R beside them at the same stack went unseen 37% of the time and
// fell outside it.
func (s Stats) presentExact(alpha float64) Result {
	r := PresentExactInterval(s.Estimate, s.Samples, s.P, s.Unit, alpha)
	own := s.Unit * (1 - s.P) / s.P
	if s.MaxWeight > own*(1+1e-9) {
		if g := s.gamma(alpha); g.Hi > r.Hi {
			r.Hi = g.Hi
			if s.MaxWeight > 2*own {
				r.Notes = append(r.Notes, NoteHidden(alpha))
			}
		}
	}
	return r
}

// widened is the interval of a group whose estimate may lie off the HT
// estimate: below it by up to Bias (a dump line's least estimate, or one
// of a range) and Spill (JFR: bytes weighed to another stack across a
// gap in the producer's samples), above it by up to Excess. The lower
// bound is the method's for the estimate less Excess, the upper bound
// the method's for the estimate plus Bias and Spill.
func widened(s Stats, m Method, alpha float64) Result {
	lo, hi := s, s
	lo.Estimate = math.Max(0, s.Estimate-s.Excess)
	hi.Estimate = s.Estimate + s.Bias + s.Spill
	for _, t := range []*Stats{&lo, &hi} {
		t.Bias, t.Spill, t.Excess = 0, 0, 0
	}
	rl, rh := dispatch(lo, m, alpha), dispatch(hi, m, alpha)
	rh.Estimate, rh.Lo = s.Estimate, math.Min(rl.Lo, s.Estimate)
	if s.Bias > 0 || (s.Excess > 0 && !s.Weighted) {
		rh.Notes = append(rh.Notes, NoteBias)
	}
	return rh
}

// offsetApplies reports whether .NET Approach 2 applies: every sample
// carries its sampled-byte offset and all share one rate.
func (s Stats) offsetApplies() bool {
	return s.HasOffset && !s.MixedRate && s.Rate >= 1 && !s.Correlated
}

// exactApplies reports whether every sample shares one inclusion
// probability and unit and the sample count is exact.
func (s Stats) exactApplies() bool {
	return !s.Mixed && s.P > 0 && s.P <= 1 && s.Unit > 0 && !s.SamplesBound && !s.Correlated
}

// Validate reports statistics that no sampled profile can produce.
func (s Stats) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"estimate", s.Estimate}, {"variance", s.Var}, {"samples", s.Samples}, {"max weight", s.MaxWeight},
		{"unit", s.Unit}, {"rate", s.Rate}, {"offset", s.Offset}, {"bias bound", s.Bias},
		{"spill", s.Spill}, {"excess", s.Excess}, {"large missed", s.LargeMissed}, {"large missed value", s.LargeMissedValue},
		{"seen", s.Seen}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("invalid statistics: %s %v (want a finite value ≥ 0)", f.name, f.v)
		}
	}
	if s.N < 0 {
		return fmt.Errorf("invalid statistics: %d contributions", s.N)
	}
	if math.IsNaN(s.P) || s.P < 0 || s.P > 1 || (!s.Mixed && s.Unit > 0 && s.P == 0) {
		return fmt.Errorf("invalid statistics: inclusion probability %v outside (0,1]", s.P)
	}
	if s.HasOffset && !s.MixedRate && s.Rate < 1 {
		return fmt.Errorf("invalid statistics: sampling rate %v with offsets (want ≥ 1 byte)", s.Rate)
	}
	return nil
}

// NormalInterval is estimate ± z·√var, clipped at 0.
func NormalInterval(est, variance, alpha float64) Result {
	h := -normalQuantile(alpha/2) * math.Sqrt(variance)
	return Result{Estimate: est, Lo: math.Max(0, est-h), Hi: est + h, Method: Normal.String()}
}
