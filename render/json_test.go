package render

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// appendIndented lays out an object as json.Indent lays out its
// MarshalJSON's bytes, whatever its members hold: strings to escape,
// nested objects, empty and nil lists, numbers of every size.
func TestAppendIndented(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "main", "a;b", `quo"te`, "back\\slash", "<html>&", "tab\tnew\nline", "ünï", "日本", "\u2028", "\x01"}
	str := func() string { return texts[rng.IntN(len(texts))] + texts[rng.IntN(len(texts))] }
	var value func(depth int) any
	value = func(depth int) any {
		switch rng.IntN(9) {
		case 0:
			return str()
		case 1:
			return []float64{0, 1, -2.5, 1e21, 1e-7, math.MaxFloat64, 123456789.125}[rng.IntN(7)]
		case 2:
			return rng.IntN(2) == 0
		case 3:
			return nil
		case 4:
			var l []string
			if rng.IntN(4) > 0 {
				l = []string{}
			}
			for range rng.IntN(4) {
				l = append(l, str())
			}
			return l
		case 5:
			if depth < 2 {
				return object(rng, depth+1, str, value)
			}
			return str()
		case 6:
			return []any{1.5, "x", nil} // through MarshalIndent
		case 7:
			return map[string]any{"b": 1.0, "a": []string{"y"}}
		default:
			return rng.Float64() * 1e6
		}
	}
	for i := range 2000 {
		o := object(rng, 0, str, value)
		compact, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact, "    ", "  "); err != nil {
			t.Fatal(err)
		}
		got, err := o.appendIndented(nil, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("object %d:\n got %s\nwant %s", i, got, want.Bytes())
		}
	}
}

// object is a random jsonObject of up to five members.
func object(rng *rand.Rand, depth int, str func() string, value func(int) any) jsonObject {
	var o jsonObject
	for range rng.IntN(6) {
		o = append(o, jsonMember{str(), value(depth)})
	}
	return o
}
