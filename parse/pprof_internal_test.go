package parse

import (
	"math"
	"math/rand"
	"reflect"
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
		// Every field is set, by reflection, so that fields added to
		// ci.Stats later are covered too.
		var s ci.Stats
		v := reflect.ValueOf(&s).Elem()
		for k := 0; k < v.NumField(); k++ {
			switch fld := v.Field(k); fld.Kind() {
			case reflect.Float64:
				fld.SetFloat(f())
			case reflect.Int64:
				fld.SetInt(rng.Int63n(1 << 40))
			case reflect.Bool:
				fld.SetBool(rng.Intn(2) == 0)
			default:
				t.Fatalf("ci.Stats field %s has kind %s, which EncodeStats does not handle", v.Type().Field(k).Name, fld.Kind())
			}
		}
		got, err := DecodeStats(EncodeStats(s))
		if err != nil || got != s {
			t.Fatalf("%+v\nencoded %q\ndecoded %+v (%v)", s, EncodeStats(s), got, err)
		}
	}
	for _, bad := range []string{"", "N=1", "N=x Estimate=1", "N=1 Estimate=1 Future=3", "N=1 Estimate=NaN",
		"N=1 Estimate=1 Mixed=yes", "N=-1 Estimate=1", "N=1 Estimate"} {
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
