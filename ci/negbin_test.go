package ci

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// dotnetRow is one row of the .NET design document's quantile table.
type dotnetRow struct {
	samples, lo, hi float64
}

// readDotnetTable reads testdata/dotnet_table.csv.
func readDotnetTable(t testing.TB) []dotnetRow {
	t.Helper()
	f, err := os.Open("testdata/dotnet_table.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []dotnetRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "samples") {
			continue
		}
		var v [3]float64
		for i, field := range strings.Split(line, ",") {
			v[i], err = strconv.ParseFloat(field, 64)
			if err != nil {
				t.Fatalf("dotnet_table.csv: %q: %v", line, err)
			}
		}
		rows = append(rows, dotnetRow{v[0], v[1], v[2]})
	}
	if len(rows) < 25 {
		t.Fatalf("dotnet_table.csv: %d rows, want 25", len(rows))
	}
	return rows
}

func TestNegBinQuantileDotnetTable(t *testing.T) {
	const p = 1.0 / 102400
	for _, r := range readDotnetTable(t) {
		lo, err := NegBinQuantile(0.025, r.samples, p)
		if err != nil {
			t.Fatal(err)
		}
		hi, err := NegBinQuantile(0.975, r.samples, p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lo-r.lo) > 1 || math.Abs(hi-r.hi) > 1 {
			t.Errorf("s=%v: got [%v, %v], table [%v, %v]", r.samples, lo, hi, r.lo, r.hi)
		}
	}
}

// TestNegBinQuantileDefinition checks that each quantile is the smallest
// integer reaching the level, with the CDF computed independently of the
// search (closed form for s = 1, summation otherwise).
func TestNegBinQuantileDefinition(t *testing.T) {
	cases := []struct{ s, p float64 }{
		{1, 1.0 / 102400}, {1, 0.5}, {2, 0.3}, {8, 1.0 / 102400}, {40, 1e-3},
		{500, 0.9}, {3, 0.999999}, {10000, 1.0 / 102400}, {1e6, 0.9999}, {7, 1},
	}
	for _, c := range cases {
		for _, prob := range []float64{0.0005, 0.025, 0.5, 0.975, 0.9995} {
			y, err := NegBinQuantile(prob, c.s, c.p)
			if err != nil {
				t.Fatal(err)
			}
			at, _ := NegBinCDF(y, c.s, c.p)
			below, _ := NegBinCDF(y-1, c.s, c.p)
			if at < prob || (y > 0 && below >= prob) {
				t.Errorf("s=%v p=%v prob=%v: y=%v has CDF(y)=%v CDF(y-1)=%v", c.s, c.p, prob, y, at, below)
			}
		}
	}
}

func TestNegBinCDFGeometric(t *testing.T) {
	// s = 1 is the geometric distribution: P(Y ≤ y) = 1 − q^(y+1).
	for _, p := range []float64{1.0 / 102400, 0.01, 0.5, 0.999} {
		for _, y := range []float64{0, 1, 10, 1000, 1e6, 1e9} {
			want := -math.Expm1((y + 1) * math.Log1p(-p))
			got, _ := NegBinCDF(y, 1, p)
			if math.Abs(got-want) > 1e-13*math.Max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
				t.Errorf("p=%v y=%v: got %v want %v", p, y, got, want)
			}
		}
	}
}

func TestNegBinCDFSumsToOne(t *testing.T) {
	// CDF + SF = 1 and the pmf sums to the CDF for a small case.
	s, p := 4.0, 0.2
	q := 1 - p
	sum := 0.0
	for y := 0.0; y < 60; y++ {
		sum += negBinPMF(y, s, p, q)
		cdf, sf := negBinTails(y, s, p, q)
		if math.Abs(cdf-sum) > 1e-14 || math.Abs(cdf+sf-1) > 1e-14 {
			t.Fatalf("y=%v: cdf %v sum %v sf %v", y, cdf, sum, sf)
		}
	}
}

func TestNegBinLargeFailures(t *testing.T) {
	// 10⁷ samples at p = 10⁻⁸: failures near 10¹⁵, far beyond the
	// exact-summation range; the Cornish–Fisher answer must sit where the
	// exact CDF crosses the level.
	s, p := 1e7, 1e-8
	for _, prob := range []float64{0.025, 0.975} {
		y, err := NegBinQuantile(prob, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if y < 9.9e14 || y > 1.01e15 {
			t.Fatalf("prob %v: y = %v, want about 1e15", prob, y)
		}
		// One standard deviation is √(s·q)/p ≈ 3·10¹¹ failures; the exact
		// CDF must bracket the level within 10⁻⁶ of one sd.
		d := 3e5
		a, _ := NegBinCDF(y-d, s, p)
		b, _ := NegBinCDF(y+d, s, p)
		if !(a < prob && prob <= b) {
			t.Errorf("prob %v: CDF(y−d) = %v, CDF(y+d) = %v", prob, a, b)
		}
	}
}

func TestNegBinCDFEdges(t *testing.T) {
	cases := []struct{ y, s, p, want float64 }{
		{-1, 3, 0.5, 0}, {math.Inf(1), 3, 0.5, 1}, {0, 0, 0.5, 1}, {0, 5, 1, 1}, {4, 1, 0.5, 1 - 1.0/32},
	}
	for _, c := range cases {
		got, err := NegBinCDF(c.y, c.s, c.p)
		if err != nil || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("CDF(%v; %v, %v) = %v, %v; want %v", c.y, c.s, c.p, got, err, c.want)
		}
	}
	if q, _ := NegBinQuantile(1, 3, 0.5); !math.IsInf(q, 1) {
		t.Errorf("Q(1) = %v, want +Inf", q)
	}
}

func TestNegBinInvalid(t *testing.T) {
	bad := []struct{ prob, s, p float64 }{
		{0.5, -1, 0.5}, {0.5, 1.5, 0.5}, {0.5, 3, 0}, {0.5, 3, 1.5}, {0.5, 3, math.NaN()},
		{-0.1, 3, 0.5}, {1.1, 3, 0.5}, {math.NaN(), 3, 0.5}, {0.5, math.Inf(1), 0.5},
	}
	for _, b := range bad {
		if _, err := NegBinQuantile(b.prob, b.s, b.p); err == nil {
			t.Errorf("NegBinQuantile(%v, %v, %v): no error", b.prob, b.s, b.p)
		}
	}
}

// TestNegBinQuantileOracle compares with quantiles computed independently
// at 50 significant digits by testdata/negbin_oracle.py (mpmath), covering
// p close to 1, moderate p and s far beyond the exact-summation range.
func TestNegBinQuantileOracle(t *testing.T) {
	f, err := os.Open("testdata/negbin_oracle.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var v [4]float64
		for i, field := range strings.Split(line, ",") {
			if v[i], err = strconv.ParseFloat(field, 64); err != nil {
				t.Fatalf("negbin_oracle.csv: %q: %v", line, err)
			}
		}
		got, err := NegBinQuantile(v[2], v[0], v[1])
		if err != nil {
			t.Fatal(err)
		}
		// Exact to the integer in the summation range; beyond it the
		// Cornish–Fisher answer may differ by one at a rounding boundary.
		tol := 0.0
		if v[0]*(1-v[1]) > exactLimit {
			tol = 1
		}
		if math.Abs(got-v[3]) > tol {
			t.Errorf("s=%v p=%v prob=%v: got %v, oracle %v", v[0], v[1], v[2], got, v[3])
		}
		n++
	}
	if n < 40 {
		t.Fatalf("only %d oracle rows", n)
	}
}
