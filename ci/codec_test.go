package ci

import (
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The bit mask of UnmarshalText has room for 32 fields.
var _ [32 - numStatsFields]struct{}

// TestStatsTextFieldsMatchStruct: the codec's list names every field of
// Stats once, under its Go name, with its kind, so that a field added to
// Stats cannot be silently dropped from heapest's pprof output. (The
// codec's order is the text's, fixed by the format; the struct's is free.)
func TestStatsTextFieldsMatchStruct(t *testing.T) {
	typ := reflect.TypeFor[Stats]()
	if typ.NumField() != numStatsFields {
		t.Fatalf("Stats has %d fields, the codec %d", typ.NumField(), numStatsFields)
	}
	var s Stats
	base := reflect.ValueOf(&s).Pointer()
	seen := map[string]bool{}
	for i := range numStatsFields {
		name, count, num, flag := s.field(i)
		sf, ok := typ.FieldByName(name)
		if !ok || seen[name] {
			t.Errorf("codec field %d: %s is no field of Stats, or named twice", i, name)
			continue
		}
		seen[name] = true
		// The accessor must point at this very field.
		var ptr uintptr
		var kind reflect.Kind
		switch {
		case count != nil && num == nil && flag == nil:
			ptr, kind = reflect.ValueOf(count).Pointer(), reflect.Int64
		case num != nil && count == nil && flag == nil:
			ptr, kind = reflect.ValueOf(num).Pointer(), reflect.Float64
		case flag != nil && count == nil && num == nil:
			ptr, kind = reflect.ValueOf(flag).Pointer(), reflect.Bool
		default:
			t.Fatalf("field %s: not exactly one accessor", name)
		}
		if ptr-base != sf.Offset || kind != sf.Type.Kind() {
			t.Errorf("field %s: accessor at offset %d kind %s, struct field at %d kind %s", name, ptr-base, kind, sf.Offset, sf.Type.Kind())
		}
	}
}

// TestStatsTextFormat: the text is exactly the one heapest-pprof/1 files
// carry (written by hand here from the format's definition).
func TestStatsTextFormat(t *testing.T) {
	s := Stats{N: 3, Estimate: 1572864.5, Var: 0.1, Samples: 3, SamplesBound: true, MaxWeight: 524288,
		P: 0.0078125, Unit: 4096, Rate: 524288, Offset: -0.0, Bias: 1e300, NoInterval: true, Approx: true,
		OpenEnd: true}
	s.Offset = math.Copysign(0, -1)
	want := "N=3 Estimate=1.5728645e+06 Var=0.1 Samples=3 SamplesBound=1 MaxWeight=524288 Mixed=0 " +
		"P=0.0078125 Unit=4096 Rate=524288 MixedRate=0 Offset=-0 HasOffset=0 OpenStart=0 OpenEnd=1 " +
		"Bias=1e+300 Complete=0 NoInterval=1 Approx=1"
	got, err := s.MarshalText()
	if err != nil || string(got) != want {
		t.Fatalf("MarshalText:\n got %s (%v)\nwant %s", got, err, want)
	}
	if app, _ := s.AppendText([]byte("x:")); string(app) != "x:"+want {
		t.Errorf("AppendText: %s", app)
	}
	var back Stats
	if err := back.UnmarshalText([]byte(want)); err != nil || !sameBits(back, s) {
		t.Errorf("UnmarshalText: %+v (%v)", back, err)
	}
}

// sameBits compares two Stats field by field, floats by their bits (so
// that -0 and 0 differ).
func sameBits(a, b Stats) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		fa, fb := va.Field(i), vb.Field(i)
		if fa.Kind() == reflect.Float64 {
			if math.Float64bits(fa.Float()) != math.Float64bits(fb.Float()) {
				return false
			}
		} else if fa.Interface() != fb.Interface() {
			return false
		}
	}
	return true
}

// randomStats sets every field, by reflection so that fields added to
// Stats later are covered too, with awkward floats among the values.
func randomStats(t testing.TB, rng *rand.Rand) Stats {
	awkward := []float64{0, math.Copysign(0, -1), 1, 0.1, 1.0 / 3, math.MaxFloat64, math.SmallestNonzeroFloat64,
		1e300, math.Inf(1), math.Inf(-1), 524288, 1e21, 1e-7, -2.5}
	var s Stats
	v := reflect.ValueOf(&s).Elem()
	for k := 0; k < v.NumField(); k++ {
		switch fld := v.Field(k); fld.Kind() {
		case reflect.Float64:
			x := rng.ExpFloat64() * math.Pow(10, float64(rng.Intn(40)-20))
			if rng.Intn(3) == 0 {
				x = awkward[rng.Intn(len(awkward))]
			}
			fld.SetFloat(x)
		case reflect.Int64:
			fld.SetInt(rng.Int63n(1 << 62))
		case reflect.Bool:
			fld.SetBool(rng.Intn(2) == 0)
		default:
			t.Fatalf("Stats field %s has kind %s, which the text codec does not handle", v.Type().Field(k).Name, fld.Kind())
		}
	}
	return s
}

// TestStatsTextRoundTrip: every field survives the text bit for bit.
func TestStatsTextRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 5000; i++ {
		s := randomStats(t, rng)
		text, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Stats
		if err := got.UnmarshalText(text); err != nil || !sameBits(got, s) {
			t.Fatalf("%+v\nencoded %s\ndecoded %+v (%v)", s, text, got, err)
		}
	}
}

// TestStatsTextFieldOrderAndSpace: fields may come in any order, separated
// by any white space.
func TestStatsTextFieldOrderAndSpace(t *testing.T) {
	s := randomStats(t, rand.New(rand.NewSource(5)))
	text, _ := s.MarshalText()
	fields := strings.Fields(string(text))
	rand.New(rand.NewSource(6)).Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	var got Stats
	if err := got.UnmarshalText([]byte("\t " + strings.Join(fields, " \n\u00a0") + "\r\n")); err != nil || !sameBits(got, s) {
		t.Errorf("shuffled: %+v (%v), want %+v", got, err, s)
	}
}

// TestStatsTextErrors: malformed text is refused with a message naming
// what is wrong, and the target is left alone.
func TestStatsTextErrors(t *testing.T) {
	full, _ := Stats{N: 1, Estimate: 2}.MarshalText()
	replace := func(old, new string) string { return strings.Replace(string(full), old, new, 1) }
	tests := []struct{ text, want string }{
		{"", "field N missing"},
		{"N=1", "field Estimate missing"},
		{replace(" Bias=0", ""), "field Bias missing"},
		{string(full) + " Future=3", "Future\" unknown"},
		{replace("N=1", "N=x"), "N=\"x\": expected a count"},
		{replace("N=1", "N=-1"), "expected a count"},
		{replace("Estimate=2", "Estimate=NaN"), "Estimate=\"NaN\": expected a number"},
		{replace("Estimate=2", "Estimate=1e999"), "expected a number"},
		{replace("Mixed=0", "Mixed=yes"), "expected 0 or 1"},
		{replace("Mixed=0", "Mixed=01"), "expected 0 or 1"},
		{replace("Estimate=2", "Estimate"), "expected Name=value"},
		{string(full) + " N=1", "N given twice"},
		{replace("Var=0", "var=0"), "unknown"},
	}
	for _, tt := range tests {
		s := Stats{N: 42}
		err := s.UnmarshalText([]byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("UnmarshalText(%q): error %v, want one saying %q", tt.text, err, tt.want)
		}
		if s != (Stats{N: 42}) {
			t.Errorf("UnmarshalText(%q) changed its target on error: %+v", tt.text, s)
		}
	}
}

// TestStatsTextAllocs: reading and writing allocate nothing beyond the
// output buffer: heapest reads one per sample of its own pprof output.
func TestStatsTextAllocs(t *testing.T) {
	s := randomStats(t, rand.New(rand.NewSource(8)))
	buf, _ := s.MarshalText()
	var got Stats
	if n := testing.AllocsPerRun(100, func() { got.UnmarshalText(buf) }); n != 0 {
		t.Errorf("UnmarshalText: %v allocations", n)
	}
	dst := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { dst, _ = s.AppendText(dst[:0]) }); n != 0 {
		t.Errorf("AppendText: %v allocations", n)
	}
}

// FuzzStatsText: no input makes UnmarshalText panic, and whatever it
// accepts writes back to a text that reads to the same bits.
func FuzzStatsText(f *testing.F) {
	rng := rand.New(rand.NewSource(9))
	for i := 0; i < 4; i++ {
		text, _ := randomStats(f, rng).MarshalText()
		f.Add(text)
	}
	f.Add([]byte("N=1 Estimate=2"))
	f.Add([]byte("N=1\u2028Estimate=0x1p-3 Var=Inf"))
	f.Fuzz(func(t *testing.T, text []byte) {
		var s Stats
		if err := s.UnmarshalText(text); err != nil {
			return
		}
		again, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Stats
		if err := back.UnmarshalText(again); err != nil || !sameBits(back, s) {
			t.Fatalf("%q read as %+v, written as %s, read back as %+v (%v)", text, s, again, back, err)
		}
	})
}

// TestAppendNumberMatchesStrconv: the fast paths of appendNumber write the
// very bytes of strconv's shortest 'g' format (the text of heapest-pprof/1
// must not change), at their edges and on random whole and other numbers.
func TestAppendNumberMatchesStrconv(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 999999, 1e6, -1e6, 1e6 + 1, 8388608, 1 << 53,
		1<<53 - 1, -(1<<53 - 1), 1 << 54, 1e15, 1e16, 123456789012345, 1e21, math.Inf(1), math.NaN(),
		524288, 4096, 100, 1e-7, 2.5}
	rng := rand.New(rand.NewSource(10))
	for i := 0; i < 200000; i++ {
		x := math.Round(rng.ExpFloat64() * math.Pow(10, float64(rng.Intn(18))))
		if rng.Intn(4) == 0 {
			x = -x
		}
		if rng.Intn(5) == 0 {
			x = math.Float64frombits(rng.Uint64())
		}
		xs = append(xs, x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1)))
	}
	for _, x := range xs {
		want := strconv.AppendFloat(nil, x, 'g', -1, 64)
		if got := appendNumber(nil, x); string(got) != string(want) {
			t.Fatalf("%b: got %s, want %s", x, got, want)
		}
	}
}

// TestStatsSameBits: SameBits says yes for a copy, and no where the texts
// differ, -0 against 0 included.
func TestStatsSameBits(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 2000; i++ {
		s := randomStats(t, rng)
		u := s
		if !s.SameBits(&u) {
			t.Fatalf("%+v differs from its copy", s)
		}
		switch i % 3 {
		case 0:
			u.Var = math.Copysign(0, -1)
			s.Var = 0
		case 1:
			u.Conditional = !u.Conditional
		case 2:
			u.N++
		}
		a, _ := s.MarshalText()
		b, _ := u.MarshalText()
		if s.SameBits(&u) != (string(a) == string(b)) {
			t.Fatalf("SameBits %v for texts\n%s\n%s", s.SameBits(&u), a, b)
		}
	}
}
