package ci

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// sqlMerge adds o's columns into c as an engine's GROUP BY does, by
// each column's suffix alone.
func sqlMerge(c *Columns, o Columns) {
	c.NSum += o.NSum
	c.EstimateSum += o.EstimateSum
	c.VarSum += o.VarSum
	c.SamplesSum += o.SamplesSum
	c.SamplesBoundAny = c.SamplesBoundAny || o.SamplesBoundAny
	c.MaxWeightMax = max(c.MaxWeightMax, o.MaxWeightMax)
	c.MixedAny = c.MixedAny || o.MixedAny
	c.PMin, c.PMax = min(c.PMin, o.PMin), max(c.PMax, o.PMax)
	c.UnitMin, c.UnitMax = min(c.UnitMin, o.UnitMin), max(c.UnitMax, o.UnitMax)
	c.RateMin, c.RateMax = min(c.RateMin, o.RateMin), max(c.RateMax, o.RateMax)
	c.MixedRateAny = c.MixedRateAny || o.MixedRateAny
	c.OffsetSum += o.OffsetSum
	c.HasOffsetAll = c.HasOffsetAll && o.HasOffsetAll
	c.OpenStartAny = c.OpenStartAny || o.OpenStartAny
	c.OpenEndAny = c.OpenEndAny || o.OpenEndAny
	c.BiasSum += o.BiasSum
	c.CompleteAll = c.CompleteAll && o.CompleteAll
	c.NoIntervalAny = c.NoIntervalAny || o.NoIntervalAny
	c.ApproxAny = c.ApproxAny || o.ApproxAny
	c.WeightedAny = c.WeightedAny || o.WeightedAny
	c.SpillSum += o.SpillSum
	c.ExcessSum += o.ExcessSum
	c.LargeMissedSum += o.LargeMissedSum
	c.LargeMissedValueSum += o.LargeMissedValueSum
}

// TestColumnsSuffixes checks that every column's name ends in the
// operator sqlMerge applies to it, and that every Stats field has a
// column: a field left out would be lost on the way through an engine.
func TestColumnsSuffixes(t *testing.T) {
	typ := reflect.TypeOf(Columns{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("parquet"), ",")
		ok := false
		for _, suf := range []string{"_sum", "_max", "_min", "_any", "_all"} {
			ok = ok || strings.HasSuffix(name, suf)
		}
		if !ok {
			t.Errorf("column %s has no merge suffix", name)
		}
	}
	// Every field of Stats shows in its columns: set one at a time.
	st := reflect.TypeOf(Stats{})
	for i := range st.NumField() {
		var s Stats
		f := reflect.ValueOf(&s).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int64:
			f.SetInt(3)
		case reflect.Float64:
			f.SetFloat(0.5)
		}
		if ColumnsOf(s) == ColumnsOf(Stats{}) {
			t.Errorf("Stats.%s has no column", st.Field(i).Name)
		}
	}
}

// randomGroup are the statistics of a random group: one of a few sizes,
// rates and kinds, so that merges meet every case Merge distinguishes.
func randomGroup(rng *rand.Rand) Stats {
	rate := []float64{65536, 131072, 524288}[rng.IntN(3)]
	z := []float64{32, 4096, 1 << 20}[rng.IntN(3)]
	s := single(float64(1+rng.IntN(20)), z, rate)
	switch rng.IntN(6) {
	case 0:
		s.Mixed, s.P, s.Unit = true, 0, 0
		s.SamplesBound, s.Bias = true, rate
	case 1:
		s.HasOffset, s.Offset, s.OpenEnd = true, 1000, true
	case 2:
		s.Weighted, s.Spill, s.Excess = true, 10, 5
	case 3:
		s.Complete = true
	case 4:
		s.NoInterval, s.Approx = true, true
	}
	return s
}

// TestColumnsMergeAsStats checks that a GROUP BY over the columns of
// several groups gives the columns of the groups' Merge: what an engine
// sums is what heapest would have merged.
func TestColumnsMergeAsStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 2000 {
		n := 1 + rng.IntN(5)
		var want Stats
		var cols Columns
		for i := range n {
			s := randomGroup(rng)
			want.Merge(&s)
			if i == 0 {
				cols = ColumnsOf(s)
			} else {
				sqlMerge(&cols, ColumnsOf(s))
			}
		}
		got, err := cols.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("merged columns give\n%+v\nmerged statistics are\n%+v", got, want)
		}
	}
}

// TestColumnsInvalid checks the errors of columns no group has.
func TestColumnsInvalid(t *testing.T) {
	good := ColumnsOf(single(3, 64, 524288))
	for _, c := range []struct {
		name string
		edit func(*Columns)
		want string
	}{
		{"no group", func(c *Columns) { c.NSum = 0 }, "n_sum 0"},
		{"negative estimate", func(c *Columns) { c.EstimateSum = -1 }, "estimate_sum -1"},
		{"min above max", func(c *Columns) { c.RateMin = 2 * c.RateMax }, "rate_min"},
		{"probability above 1", func(c *Columns) { c.PMin, c.PMax = 2, 2 }, "inclusion probability"},
	} {
		col := good
		c.edit(&col)
		if _, err := col.Stats(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
