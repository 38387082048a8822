package unbias

import "github.com/heapest/heapest/ci"

// Samples are the published statistics of a group of allocations sampled
// per byte with one mean period: what the ci calculator is given, and what
// a record of one allocation size holds. Stats turns them into the group's
// ci.Stats, the one constructor both use, so that the calculator and a
// report row agree wherever they are given the same group.
type Samples struct {
	// Count is the number of samples s.
	Count float64
	// Rate is the mean sampling period R in bytes.
	Rate float64
	// Geometric says that each byte was a trial sampled with probability
	// 1/R (jemalloc, .NET): π(Z) = 1 − (1−1/R)^Z. Otherwise the sample
	// points have exponential gaps (Go, tcmalloc): π(Z) = 1 − exp(−Z/R).
	Geometric bool
	// Size is the size Z in bytes of every sampled allocation. 0 means the
	// sizes are not known: with an Offset the group is .NET's Approach 2,
	// without one its allocations are taken to be tiny (much smaller than
	// R), counted as 1 byte each.
	Size float64
	// SampledSize, when not 0, is the size the sampler drew each
	// allocation by where that is not Size (the allocator's size class,
	// parse.Counts.Classes): π rests on it, the value on Size.
	SampledSize float64
	// Offset is .NET Approach 2's u, the sum of (ObjectSize −
	// SampledByteOffset) over AllocationSampled events; HasOffset marks it
	// as given. It applies to byte values only.
	Offset    float64
	HasOffset bool
	// Sizes, when given, are the sizes of the Count samples one by one
	// (.NET's ObjectSize): the estimate is then the Horvitz–Thompson sum
	// Σ Z/π(Z) a trace row prints, and Size is not used.
	Sizes []float64
	// OpenStart and OpenEnd are set when an offset group's observation
	// window does not start or end on a sample (see ci.Stats).
	OpenStart, OpenEnd bool
}

// tinySize is the size Samples counts an allocation of unknown size as,
// when nothing says more: far below any sampling period, so π(1) ≈ 1/R.
const tinySize = 1

// Stats returns the statistics of the group for value v. With a known size
// (or tiny allocations) the estimate is Horvitz–Thompson's s·Z/π(Z); with
// an offset and no size it is Approach 2's s·(R−1) + u, the only one that
// needs no per-sample size.
func (g Samples) Stats(v Value) ci.Stats {
	offset := g.HasOffset && v.IsSpace()
	var st ci.Stats
	switch {
	case len(g.Sizes) > 0:
		// One sample at a time, as a trace row sums its events.
		for _, z := range g.Sizes {
			one := Samples{Count: 1, Rate: g.Rate, Geometric: g.Geometric, Size: z}.Stats(v)
			st.Merge(&one)
		}
	case g.Size == 0 && offset:
		p := 1 / g.Rate
		st = ci.Stats{Estimate: ci.OffsetEstimate(g.Count, p, g.Offset), Var: g.Count * (1 - p) / (p * p),
			Samples: g.Count, MaxWeight: (1 - p) / p, Mixed: true}
	default:
		z := g.Size
		if z == 0 {
			z = tinySize
		}
		zs := z
		if g.SampledSize > 0 {
			zs = g.SampledSize
		}
		unit := pick(v, 1, z)
		if g.Rate <= 1 {
			// Every allocation recorded, whichever the sampler: a
			// report reads such records as exact.
			st = ci.Stats{Estimate: g.Count * unit, Samples: g.Count, Complete: true, P: 1, Unit: unit}
			break
		}
		p := inclusion(zs, g.Rate, g.Geometric)
		st = ci.Stats{Estimate: g.Count * unit / p, Var: g.Count * unit * unit * (1 - p) / (p * p),
			Samples: g.Count, MaxWeight: unit * (1 - p) / p, P: p, Unit: unit}
		if v.IsSpace() {
			// The group's sizes are known only from its samples: beside
			// them it may hold allocations of sizes no sample hit, whose
			// bytes Z went unseen with probability exp(−Z/R) whatever the
			// sizes. One more sample of such a size would weigh up to R,
			// so R is the weight the interval allows for one more count.
			st.MaxWeight = max(st.MaxWeight, g.Rate)
		} else {
			// Their count has no such bound (tiny allocations weigh
			// nothing): the interval counts the sampled sizes only.
			st.Conditional = true
		}
		if g.Size > 0 && zs >= g.Rate {
			st.LargeMissed = g.Count * (1 - p) / p
			st.LargeMissedValue = unit * st.LargeMissed
		}
		if g.Size > 0 || !v.IsSpace() {
			st.Seen = g.Count * unit // the samples' own (a size unknown says no bytes)
		}
	}
	st.N, st.Rate = max(st.N, 1), g.Rate
	if offset {
		st.Offset, st.HasOffset, st.OpenStart, st.OpenEnd = g.Offset, true, g.OpenStart, g.OpenEnd
	}
	return st
}

// Estimator says in words which estimate Stats gives for a byte value of
// g, and how it relates to a report row's, for the calculator's output.
func (g Samples) Estimator() string {
	pi, pi1 := "π = 1 − exp(−Z/R)", "π = 1 − exp(−1/R)"
	if g.Geometric {
		pi, pi1 = "π = 1 − (1−1/R)^Z", "π = 1/R"
	}
	switch {
	case len(g.Sizes) > 0:
		return "Σ Z/π over the samples' sizes, Horvitz–Thompson with " + pi + ", as a trace row prints"
	case g.Size == 0 && g.HasOffset:
		return "s·(R−1) + u, .NET Approach 2 (a trace row prints the Horvitz–Thompson sum of size/π: give the sizes with --sizes for it)"
	case g.Size == 0:
		return "s/π, Horvitz–Thompson for 1-byte allocations, " + pi1
	}
	return "s·Z/π, Horvitz–Thompson with " + pi + ", as a report row of one size prints"
}
