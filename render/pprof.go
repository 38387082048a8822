package render

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/pprof"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

func init() { writePprof = func(w io.Writer, r *report.Report) error { return WritePprof(w, r) } }

// WritePprof writes per-stack reports as a gzip-compressed profile.proto
// that pprof viewers open: one sample per stack, one sample type per report
// (its value's unbiased estimate, rounded), the first report's value as the
// default sample type. Every sample also carries, as the string label
// "heapest.<value>", the exact ci.Stats behind each value, so that heapest
// reading the file back (parse/pprof_heapest.go) recomputes the same
// intervals and can merge such files again; and, for people looking at it in
// pprof, numeric labels: samples (the raw sample count the default value
// rests on), samples_bound (1 when that count is an upper bound), size (the
// allocation size when the stack's samples share one) and rate.
//
// The reports must be built with aggregate.ByStack and no --top cut: a
// per-function or truncated report cannot be regrouped soundly.
func WritePprof(w io.Writer, reps ...*report.Report) error {
	p, err := pprofProfile(reps)
	if err != nil {
		return err
	}
	// gzip's fastest level: the default one took half of the time of
	// writing a large profile, for files a fifth smaller.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := p.WriteUncompressed(zw); err != nil {
		return err
	}
	return zw.Close()
}

// pprofProfile builds the profile.Profile of WritePprof.
func pprofProfile(reps []*report.Report) (*profile.Profile, error) {
	if err := checkPprofReports(reps); err != nil {
		return nil, err
	}
	b := newPprofBuilder(reps)
	for i, r := range reps {
		for _, row := range r.Rows {
			b.add(i, row)
		}
	}
	return b.p, b.p.CheckValid()
}

func checkPprofReports(reps []*report.Report) error {
	if len(reps) == 0 {
		return fmt.Errorf("pprof output: no report to write")
	}
	seen := map[unbias.Value]bool{}
	for _, r := range reps {
		if r.By != aggregate.ByStack {
			return fmt.Errorf("pprof output needs per-stack statistics (a report built --by stack), got --by %s", r.By)
		}
		if r.Omitted > 0 {
			return fmt.Errorf("pprof output needs every stack, but --top cut %d of them (use --top 0)", r.Omitted)
		}
		if seen[r.Value] {
			return fmt.Errorf("pprof output: value %s given twice", r.Value)
		}
		seen[r.Value] = true
	}
	return nil
}

type pprofBuilder struct {
	p       *profile.Profile
	reps    []*report.Report
	samples map[string]*profile.Sample
	funcs   map[string]*profile.Function
	locs    map[string]*profile.Location
}

func newPprofBuilder(reps []*report.Report) *pprofBuilder {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		DefaultSampleType: reps[0].Value.String(),
		Comments:          pprofComments(reps[0]),
	}
	for _, r := range reps {
		unit := "bytes"
		if !r.Value.IsSpace() {
			unit = "count"
		}
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: r.Value.String(), Unit: unit})
	}
	if rate, ok := commonRate(reps[0].Sources); ok {
		p.Period = int64(math.Round(rate))
	}
	return &pprofBuilder{p: p, reps: reps, samples: map[string]*profile.Sample{},
		funcs: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
}

// pprofComments mark the file as heapest's and say where it came from.
func pprofComments(r *report.Report) []string {
	c := []string{pprof.HeapestMarker,
		fmt.Sprintf("heapest: unbiased estimates; value=%s confidence=%g", r.Value, r.Confidence)}
	if r.Merged != nil {
		c = append(c, pprof.MergedComment(r.Merged))
	}
	for _, s := range r.Sources {
		c = append(c, fmt.Sprintf("source: %s format=%s rate=%g samples=%g", s.Path, s.Format, s.Rate, s.Samples))
	}
	for _, s := range r.Skipped {
		c = append(c, fmt.Sprintf("skipped: %v", s.Err))
	}
	return c
}

func commonRate(srcs []parse.Source) (float64, bool) {
	if len(srcs) == 0 {
		return 0, false
	}
	for _, s := range srcs[1:] {
		if s.Rate != srcs[0].Rate {
			return 0, false
		}
	}
	return srcs[0].Rate, srcs[0].Rate > 0
}

// add puts one row of report i into the sample of its stack.
func (b *pprofBuilder) add(i int, row report.Row) {
	key := row.Key // the folded stack: one per stack
	s := b.samples[key]
	if s == nil {
		s = &profile.Sample{Value: make([]int64, len(b.reps)), Label: map[string][]string{}}
		for _, name := range row.Stack {
			s.Location = append(s.Location, b.location(name))
		}
		b.samples[key] = s
		b.p.Sample = append(b.p.Sample, s)
	}
	v := b.reps[i].Value
	s.Value[i] = int64(math.Round(row.Stats.Estimate))
	text, _ := row.Stats.MarshalText() // never fails
	s.Label[pprof.StatsLabel(v.String())] = []string{string(text)}
	if i == 0 {
		setPprofNumLabels(s, row.Stats, v)
	}
}

// setPprofNumLabels adds the human-facing numeric labels of the default value.
func setPprofNumLabels(s *profile.Sample, st ci.Stats, v unbias.Value) {
	s.NumLabel = map[string][]int64{"samples": {int64(math.Round(st.Samples))}}
	s.NumUnit = map[string][]string{"samples": {"count"}}
	bound := int64(0)
	if st.SamplesBound {
		bound = 1
	}
	s.NumLabel["samples_bound"], s.NumUnit["samples_bound"] = []int64{bound}, []string{""}
	if v.IsSpace() && !st.Mixed && st.Unit > 0 {
		s.NumLabel["size"], s.NumUnit["size"] = []int64{int64(math.Round(st.Unit))}, []string{"bytes"}
	}
	if !st.MixedRate && st.Rate > 0 {
		s.NumLabel["rate"], s.NumUnit["rate"] = []int64{int64(math.Round(st.Rate))}, []string{"bytes"}
	}
}

// location returns the location of a frame name: a symbol, or an
// unsymbolized "0x…" address kept as an address.
func (b *pprofBuilder) location(name string) *profile.Location {
	if l := b.locs[name]; l != nil {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1)}
	if addr, ok := hexAddr(name); ok {
		l.Address = addr
	} else {
		f := b.funcs[name]
		if f == nil {
			f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name}
			b.funcs[name] = f
			b.p.Function = append(b.p.Function, f)
		}
		l.Line = []profile.Line{{Function: f}}
	}
	b.locs[name] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func hexAddr(name string) (uint64, bool) {
	h, ok := strings.CutPrefix(name, "0x")
	if !ok || h == "" {
		return 0, false
	}
	a, err := strconv.ParseUint(h, 16, 64)
	return a, err == nil
}
