package ci

import (
	"fmt"
	"math"
)

// Columns are Stats as columns that any SQL engine merges without knowing
// heapest: each column's name ends in the aggregate that merges it (_sum:
// SUM, _max: MAX, _min: MIN, _any: bool_or, _all: bool_and), so that one
// GROUP BY over rows of disjoint groups gives the Columns of their union,
// as Stats.Merge gives its Stats. What Merge decides by comparing two
// groups (one shared inclusion probability, unit and rate) is kept as a
// minimum and a maximum: they differ exactly when Merge would have found
// the groups mixed. The struct tags name the columns of heapest's Parquet
// schema (docs/parquet.md).
type Columns struct {
	NSum                int64   `parquet:"n_sum"`
	EstimateSum         float64 `parquet:"estimate_sum"`
	VarSum              float64 `parquet:"var_sum"`
	SamplesSum          float64 `parquet:"samples_sum"`
	SamplesBoundAny     bool    `parquet:"samples_bound_any"`
	MaxWeightMax        float64 `parquet:"max_weight_max"`
	MixedAny            bool    `parquet:"mixed_any"`
	PMin                float64 `parquet:"p_min"`
	PMax                float64 `parquet:"p_max"`
	UnitMin             float64 `parquet:"unit_min"`
	UnitMax             float64 `parquet:"unit_max"`
	RateMin             float64 `parquet:"rate_min"`
	RateMax             float64 `parquet:"rate_max"`
	MixedRateAny        bool    `parquet:"mixed_rate_any"`
	OffsetSum           float64 `parquet:"offset_sum"`
	HasOffsetAll        bool    `parquet:"has_offset_all"`
	OpenStartAny        bool    `parquet:"open_start_any"`
	OpenEndAny          bool    `parquet:"open_end_any"`
	BiasSum             float64 `parquet:"bias_sum"`
	CompleteAll         bool    `parquet:"complete_all"`
	NoIntervalAny       bool    `parquet:"no_interval_any"`
	ApproxAny           bool    `parquet:"approx_any"`
	WeightedAny         bool    `parquet:"weighted_any"`
	SpillSum            float64 `parquet:"spill_sum"`
	ExcessSum           float64 `parquet:"excess_sum"`
	LargeMissedSum      float64 `parquet:"large_missed_sum"`
	LargeMissedValueSum float64 `parquet:"large_missed_value_sum"`
	ConditionalAny      bool    `parquet:"conditional_any,optional"` // added in heapest-parquet/1 after its first files: absent reads as false
	CorrelatedAny       bool    `parquet:"correlated_any,optional"`  // added later still: absent reads as false
	SeenSum             float64 `parquet:"seen_sum,optional"`        // added later still: absent reads as 0, nothing known seen
}

// ColumnsOf returns the columns of s.
func ColumnsOf(s Stats) Columns {
	return Columns{
		NSum: s.N, EstimateSum: s.Estimate, VarSum: s.Var, SamplesSum: s.Samples,
		SamplesBoundAny: s.SamplesBound, MaxWeightMax: s.MaxWeight,
		MixedAny: s.Mixed, PMin: s.P, PMax: s.P, UnitMin: s.Unit, UnitMax: s.Unit,
		RateMin: s.Rate, RateMax: s.Rate, MixedRateAny: s.MixedRate,
		OffsetSum: s.Offset, HasOffsetAll: s.HasOffset, OpenStartAny: s.OpenStart, OpenEndAny: s.OpenEnd,
		BiasSum: s.Bias, CompleteAll: s.Complete, NoIntervalAny: s.NoInterval, ApproxAny: s.Approx,
		WeightedAny: s.Weighted, SpillSum: s.Spill, ExcessSum: s.Excess,
		LargeMissedSum: s.LargeMissed, LargeMissedValueSum: s.LargeMissedValue,
		ConditionalAny: s.Conditional, CorrelatedAny: s.Correlated, SeenSum: s.Seen,
	}
}

// Stats returns the statistics the columns hold, or an error when no
// group of samples has them (counts below zero, a probability outside
// [0, 1], a minimum above its maximum).
func (c Columns) Stats() (Stats, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"estimate_sum", c.EstimateSum}, {"var_sum", c.VarSum}, {"samples_sum", c.SamplesSum},
		{"max_weight_max", c.MaxWeightMax}, {"p_min", c.PMin}, {"unit_min", c.UnitMin}, {"rate_min", c.RateMin},
		{"offset_sum", c.OffsetSum}, {"bias_sum", c.BiasSum}, {"spill_sum", c.SpillSum}, {"excess_sum", c.ExcessSum},
		{"large_missed_sum", c.LargeMissedSum}, {"large_missed_value_sum", c.LargeMissedValueSum}, {"seen_sum", c.SeenSum}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return Stats{}, fmt.Errorf("invalid statistics: %s %v (want a finite value ≥ 0)", f.name, f.v)
		}
	}
	s := Stats{
		N: c.NSum, Estimate: c.EstimateSum, Var: c.VarSum, Samples: c.SamplesSum,
		SamplesBound: c.SamplesBoundAny, MaxWeight: c.MaxWeightMax,
		Mixed: c.MixedAny || c.PMin != c.PMax || c.UnitMin != c.UnitMax, P: c.PMin, Unit: c.UnitMin,
		MixedRate: c.MixedRateAny || c.RateMin != c.RateMax, Rate: c.RateMin,
		Offset: c.OffsetSum, HasOffset: c.HasOffsetAll, OpenStart: c.OpenStartAny, OpenEnd: c.OpenEndAny,
		Bias: c.BiasSum, Complete: c.CompleteAll, NoInterval: c.NoIntervalAny, Approx: c.ApproxAny,
		Weighted: c.WeightedAny, Spill: c.SpillSum, Excess: c.ExcessSum,
		LargeMissed: c.LargeMissedSum, LargeMissedValue: c.LargeMissedValueSum,
		Conditional: c.ConditionalAny, Correlated: c.CorrelatedAny, Seen: c.SeenSum,
	}
	for _, r := range []struct {
		name     string
		min, max float64
	}{{"p", c.PMin, c.PMax}, {"unit", c.UnitMin, c.UnitMax}, {"rate", c.RateMin, c.RateMax}} {
		if r.min > r.max {
			return Stats{}, fmt.Errorf("invalid statistics: %s_min %v above %s_max %v", r.name, r.min, r.name, r.max)
		}
	}
	if s.N < 1 {
		return Stats{}, fmt.Errorf("invalid statistics: n_sum %d (want ≥ 1: a row stands for at least one group)", s.N)
	}
	if s.Mixed {
		s.P, s.Unit = 0, 0
	}
	if s.MixedRate {
		s.Rate = 0
	}
	if err := s.Validate(); err != nil {
		return Stats{}, err
	}
	return s, nil
}
