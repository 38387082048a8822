package unbias

import (
	"math"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
)

// TestWeighted checks the JFR model: a group's estimate is the sum of its
// weights, its variance the sum of their squares, its largest weight the
// gamma interval's w; object counts get no interval.
func TestWeighted(t *testing.T) {
	weights := []float64{524288, 3 << 20, 196608, 524288}
	var sum ci.Stats
	var est, sq, maxW float64
	for _, w := range weights {
		r := &parse.Record{Scheme: parse.Weighted, Alloc: parse.Counts{Bytes: w, Samples: 1}}
		c := Contribute(r, AllocSpace)
		sum.Merge(&c.Stats)
		est += w
		sq += w * w
		maxW = math.Max(maxW, w)
	}
	if sum.Estimate != est || sum.Var != sq || sum.MaxWeight != maxW || sum.Samples != 4 || sum.N != 4 || !sum.Weighted || !sum.Mixed {
		t.Fatalf("got %+v; want estimate %v, variance %v, max weight %v over 4 samples, weighted", sum, est, sq, maxW)
	}
	conf := 0.95
	r, err := ci.Interval(sum, ci.Auto, conf)
	if err != nil {
		t.Fatal(err)
	}
	want := ci.GammaInterval(est, sq, maxW, 1-conf)
	if r.Method != "gamma" || r.Lo != want.Lo || r.Hi != want.Hi || len(r.Notes) != 1 || r.Notes[0] != ci.NoteWeighted {
		t.Errorf("interval %+v; want gamma [%v, %v] with the weighted note", r, want.Lo, want.Hi)
	}

	obj := Contribute(&parse.Record{Scheme: parse.Weighted, Alloc: parse.Counts{Bytes: 4096, Samples: 1}}, AllocObjects)
	if !obj.NoInterval || obj.Estimate != 0 || obj.Weighted {
		t.Errorf("objects: %+v; want no interval, estimate 0", obj)
	}
	// An exact record (a JFR allocation outside a TLAB) merged in keeps
	// the group weighted and adds no variance.
	ex := Contribute(&parse.Record{Scheme: parse.Exact, Rate: 1, Alloc: parse.Counts{Objects: 1, Bytes: 1 << 20, Size: 1 << 20}}, AllocSpace)
	both := sum.Add(ex.Stats)
	if both.Complete || !both.Weighted || both.Var != sq || both.Estimate != est+1<<20 {
		t.Errorf("weighted + exact: %+v", both)
	}
	// Gap bounds pass through; the excess never exceeds the weight.
	g := Contribute(&parse.Record{Scheme: parse.Weighted, Alloc: parse.Counts{Bytes: 1e6, Samples: 1}, Spill: 3e6, Excess: 5e6}, AllocSpace)
	if g.Spill != 3e6 || g.Excess != 1e6 {
		t.Errorf("gap bounds: spill %v, excess %v; want 3e6 and 1e6", g.Spill, g.Excess)
	}
}
