package render

import (
	"io"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/parse/pprof"
	"github.com/heapest/heapest/report"
)

// WriteDiffPprof writes two per-stack reports (--by stack, every row) as
// one pprof profile that pprof shows as a diff, the way its -diff_base
// builds one: NEW's unbiased estimates, and BASE's negated and tagged
// pprof::base = true. Functions are named, not addressed: heapest has
// resolved them already.
func WriteDiffPprof(w io.Writer, base, new *report.Report) error {
	unit := new.Value.Unit()
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: new.Value.String(), Unit: unit}},
		DefaultSampleType: new.Value.String(),
		Comments:          []string{pprof.DiffComment},
	}
	funcs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := funcs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		funcs[name] = l
		return l
	}
	add := func(r *report.Report, sign float64, label map[string][]string) {
		for _, row := range r.Rows {
			if row.Stats.N == 0 {
				continue
			}
			s := &profile.Sample{Value: []int64{int64(sign * row.Flat.Estimate)}, Label: label}
			stack := row.Stack
			if len(stack) == 0 {
				stack = []string{row.Key}
			}
			for _, fn := range stack {
				s.Location = append(s.Location, loc(fn))
			}
			p.Sample = append(p.Sample, s)
		}
	}
	add(new, 1, nil)
	add(base, -1, map[string][]string{"pprof::base": {"true"}})
	return p.Write(w)
}
