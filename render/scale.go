package render

import (
	"math"
	"strconv"
)

// axis maps a report's values to pixels, linear from 0 or logarithmic,
// and lists the ticks of its human units. Its domain is rounded out to
// ticks, so the ends are labelled.
type axis struct {
	lo, hi float64 // the domain
	x0, x1 float64 // the pixels it maps to
	log    bool
	ticks  []tick
}

type tick struct {
	v     float64
	label string
	// stroke is its line's colour ("": the grid's grey).
	stroke string
}

// unitNames are the suffixes of the powers of the base, as
// internal/units writes them.
var (
	byteUnits  = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	countUnits = []string{"", "k", "M", "G", "T", "P", "E"}
)

// newAxis returns the axis that holds [minPos, max] (minPos, the smallest
// positive value, matters only on a log scale).
func newAxis(minPos, max float64, log, bytes bool, x0, x1 float64) axis {
	a := axis{x0: x0, x1: x1, log: log}
	if log {
		a.logTicks(minPos, max, bytes)
	} else {
		a.linearTicks(max, bytes)
	}
	return a
}

// unitOf returns the power of the base (1024 for bytes, 1000 for counts)
// x is best written in, and its suffix.
func unitOf(x float64, bytes bool) (float64, string) {
	base, names := 1000.0, countUnits
	if bytes {
		base, names = 1024, byteUnits
	}
	u, i := 1.0, 0
	for x >= base*u && i < len(names)-1 {
		u *= base
		i++
	}
	return u, names[i]
}

// linearTicks are 0 and about five steps of 1, 2 or 5 times a power of
// ten, in the unit the largest value is written in.
func (a *axis) linearTicks(max float64, bytes bool) {
	if !(max > 0) {
		max = 1
	}
	u, name := unitOf(max, bytes)
	step := niceStep(max / u / 5)
	n := int(math.Ceil(max/u/step - 1e-9))
	a.lo, a.hi = 0, float64(n)*step*u
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		label := tickNumber(v) + name
		if i == 0 {
			label = "0"
		}
		a.ticks = append(a.ticks, tick{v: v * u, label: label})
	}
}

// niceStep is the smallest of 1, 2 and 5 times a power of ten at least x.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// logTicks are 1, 10 and 100 of each unit (1KiB, 10KiB, 100KiB, 1MiB for
// bytes, 1k, 10k, 100k for counts) from the one at or below minPos to the
// one at or above max.
func (a *axis) logTicks(minPos, max float64, bytes bool) {
	if !(max > 0) {
		max = 1
	}
	if !(minPos > 0) || minPos > max {
		minPos = max
	}
	all := logTickValues(bytes)
	first, last := 0, len(all)-1
	for i, t := range all {
		if t.v <= minPos {
			first = i
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].v >= max {
			last = i
		}
	}
	if last == first {
		last = min(first+1, len(all)-1)
	}
	a.ticks = all[first : last+1]
	a.lo, a.hi = a.ticks[0].v, a.ticks[len(a.ticks)-1].v
}

// logTickValues are the candidate ticks of a log axis, smallest first.
func logTickValues(bytes bool) []tick {
	base, names := 1000.0, countUnits
	if bytes {
		base, names = 1024, byteUnits
	}
	var out []tick
	u := 1.0
	for _, name := range names {
		for _, m := range []float64{1, 10, 100} {
			out = append(out, tick{v: m * u, label: tickNumber(m) + name})
		}
		u *= base
	}
	return out
}

// tickNumber writes a tick's number in its unit without float noise.
func tickNumber(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64)
}

// pos is the pixel of value v, clamped to the axis (an interval's open end
// or a zero on a log scale reaches the edge).
func (a axis) pos(v float64) float64 {
	var f float64
	switch {
	case a.log && v <= 0:
		f = 0
	case a.log:
		f = (math.Log(v) - math.Log(a.lo)) / (math.Log(a.hi) - math.Log(a.lo))
	default:
		f = (v - a.lo) / (a.hi - a.lo)
	}
	if math.IsNaN(f) {
		f = 0
	}
	f = math.Max(0, math.Min(1, f))
	return a.x0 + f*(a.x1-a.x0)
}

// inside reports whether v lies on the axis rather than past an end.
func (a axis) inside(v float64) bool {
	return v >= a.lo && v <= a.hi && !(a.log && v <= 0)
}

// px writes a pixel coordinate with one decimal: fixed, so the same
// report gives the same bytes.
func px(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
