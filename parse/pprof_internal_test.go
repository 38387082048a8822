package parse

import (
	"math"
	"math/rand"
	"testing"

	"github.com/heapest/heapest/ci"
)

// TestStatsEncodingRoundTrip: every field of ci.Stats survives the label
// encoding bit for bit, including awkward floats.
func TestStatsEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	awkward := []float64{0, 1, 0.1, 1.0 / 3, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, math.Inf(1), 524288}
	f := func() float64 {
		if rng.Intn(3) == 0 {
			return awkward[rng.Intn(len(awkward))]
		}
		return rng.ExpFloat64() * math.Pow(10, float64(rng.Intn(30)-10))
	}
	for i := 0; i < 2000; i++ {
		s := ci.Stats{N: rng.Int63n(1 << 40), Estimate: f(), Var: f(), Samples: f(), MaxWeight: f(), P: rng.Float64(),
			Unit: f(), Rate: f(), Offset: f(), SamplesBound: rng.Intn(2) == 0, Mixed: rng.Intn(2) == 0,
			MixedRate: rng.Intn(2) == 0, HasOffset: rng.Intn(2) == 0, Complete: rng.Intn(2) == 0,
			NoInterval: rng.Intn(2) == 0, Approx: rng.Intn(2) == 0}
		got, err := DecodeStats(EncodeStats(s))
		if err != nil || got != s {
			t.Fatalf("%+v\nencoded %q\ndecoded %+v (%v)", s, EncodeStats(s), got, err)
		}
	}
	for _, bad := range []string{"", "n=1", "n=x est=1", "n=1 est=1 var=1 s=1 mw=1 p=1 unit=1 rate=1 off=1 f=z",
		"n=1 est=NaN var=1 s=1 mw=1 p=1 unit=1 rate=1 off=1 f="} {
		if _, err := DecodeStats(bad); err == nil {
			t.Errorf("DecodeStats(%q): no error", bad)
		}
	}
}

// TestDetectProto: the fallback accepts what profile.proto can start with
// and rejects text.
func TestDetectProto(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		want bool
	}{
		{[]byte{0x0a, 0x02}, true},       // sample_type
		{[]byte{0x12, 0x00}, true},       // sample
		{[]byte{0x60, 0x80}, true},       // period
		{[]byte{0x1f, 0x8b, 0x08}, true}, // a second gzip layer
		{[]byte("--- heapz 1 ---"), false},
		{[]byte{0x00}, false},
		{[]byte{0x0d}, false}, // field 1, fixed32: not in profile.proto
	} {
		if got := detectProto(tt.head); got != tt.want {
			t.Errorf("detectProto(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}
