package report

import (
	"math"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

func TestSizeMix(t *testing.T) {
	sized := func(fn string, n, z float64) parse.Record {
		r := rec(fn, n)
		r.InUse = parse.Counts{Objects: n, Bytes: n * z, Size: z}
		r.Alloc = r.InUse
		return r
	}
	in := profile("jemalloc", true, true, sized("a", 10, 64), sized("a", 2, 4096), sized("b", 5, 64))
	for _, by := range []aggregate.By{aggregate.ByFunc, aggregate.ByLeaf} {
		b, err := builder(t, Options{By: by, Value: unbias.InUseSpace, Confidence: 0.95,
			ExtraKeys: aggregate.Keys{Size: true}}, in)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Report()
		if err != nil {
			t.Fatal(err)
		}
		mix, err := b.SizeMix([]string{"a", "main"})
		if err != nil {
			t.Fatal(err)
		}
		// main is only a caller: no flat part. b was not asked for.
		if len(mix) != 1 || len(mix["a"]) != 2 {
			t.Fatalf("by %v: SizeMix = %v, want a's two sizes only", by, mix)
		}
		want := map[float64]float64{64: 10 * 64 / -math.Expm1(-64.0/(1<<19)), 4096: 2 * 4096 / -math.Expm1(-4096.0/(1<<19))}
		sum := 0.0
		for z, st := range mix["a"] {
			if math.Abs(st.Estimate-want[z]) > 1e-6*want[z] || st.Unit != z {
				t.Errorf("by %v: size %v: %+v, want estimate %v", by, z, st, want[z])
			}
			sum += st.Estimate
		}
		for _, row := range r.Rows {
			if row.Key == "a" && math.Abs(row.Flat.Estimate-sum) > 1e-9*sum {
				t.Errorf("by %v: row a's estimate %v, its sizes sum to %v", by, row.Flat.Estimate, sum)
			}
		}
	}
}
