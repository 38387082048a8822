// Package report runs the pipeline between parsed profiles and rendering:
// unbias → aggregate → ci, in that order, and returns the table model that
// render draws. Nothing here parses or prints.
package report

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"sync"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Options select what a report shows.
type Options struct {
	Value      unbias.Value
	By         aggregate.By
	Confidence float64
	Method     ci.Method
	// Top limits the rows (0: all).
	Top           int
	Focus, Ignore *regexp.Regexp
	// From and To select a time window of traces (ns from the trace
	// start; To ≤ 0: the end) when Window is set.
	From, To int64
	Window   bool
}

// Row is one group with its intervals.
type Row struct {
	Key string
	// Stack is leaf first, for --by stack.
	Stack []string
	// Flat is the group's own estimate and interval.
	Flat ci.Result
	// Cum is, for --by func, the estimate over every stack containing the
	// function; nil otherwise.
	Cum *ci.Result
	// Stats and CumStats are the statistics behind Flat and Cum, kept so
	// that a pprof rendering can carry them and be merged again.
	Stats, CumStats ci.Stats
}

// Report is the table model.
type Report struct {
	Confidence float64
	Value      unbias.Value
	By         aggregate.By
	Sources    []parse.Source
	Total      Row
	Rows       []Row
	// Omitted counts the rows cut by Top.
	Omitted int
	// Notes are report-wide caveats, printed as footnotes.
	Notes []string
}

// Build aggregates the profiles' records and computes every interval.
func Build(profiles []*parse.Profile, opt Options) (*Report, error) {
	agg := aggregate.New(opt.By, opt.Value, aggregate.Filter{Focus: opt.Focus, Ignore: opt.Ignore,
		From: opt.From, To: opt.To, Window: opt.Window})
	r := &Report{Confidence: opt.Confidence, Value: opt.Value, By: opt.By}
	for _, p := range profiles {
		if err := checkValue(p, opt.Value); err != nil {
			return nil, err
		}
		if opt.Window && !p.Timed {
			return nil, fmt.Errorf("%s: --from/--to select a time window of a trace; this %s profile has no event times", p.Source.Path, p.Source.Format)
		}
		recs := p.Records
		if opt.By == aggregate.ByThread && len(p.ThreadRecords) > 0 {
			recs = p.ThreadRecords
		}
		before := agg.Total().Samples
		addProfile(agg, recs)
		src := p.Source
		src.Samples = agg.Total().Samples - before // the samples this report rests on
		r.Sources = append(r.Sources, src)
	}
	var err error
	if r.Total, err = row("total", nil, agg.Total(), nil, opt); err != nil {
		return nil, err
	}
	groups := agg.Groups()
	if opt.Top > 0 && len(groups) > opt.Top {
		r.Omitted = len(groups) - opt.Top
		groups = groups[:opt.Top]
	}
	for _, g := range groups {
		var cum *ci.Stats
		if opt.By == aggregate.ByFunc {
			cum = &g.Cum
		}
		rw, err := row(g.Key, g.Stack, g.Flat, cum, opt)
		if err != nil {
			return nil, err
		}
		r.Rows = append(r.Rows, rw)
	}
	return r, nil
}

func row(key string, stack []string, flat ci.Stats, cum *ci.Stats, opt Options) (Row, error) {
	rw := Row{Key: key, Stack: stack, Stats: flat}
	var err error
	if rw.Flat, err = interval(flat, opt); err != nil {
		return rw, fmt.Errorf("%s: %w", key, err)
	}
	if cum != nil {
		rw.CumStats = *cum
		c, err := interval(*cum, opt)
		if err != nil {
			return rw, fmt.Errorf("%s: %w", key, err)
		}
		rw.Cum = &c
	}
	return rw, nil
}

// interval is ci.Interval, with an empty group (a function that only
// appears as a caller) reported as zero.
func interval(s ci.Stats, opt Options) (ci.Result, error) {
	if s.N == 0 {
		return ci.Result{Method: "-"}, nil
	}
	res, err := ci.Interval(s, opt.Method, opt.Confidence)
	if err != nil {
		return res, err
	}
	if math.IsNaN(res.Lo) || math.IsNaN(res.Hi) || math.IsNaN(res.Estimate) {
		return res, fmt.Errorf("interval method %s gave NaN for %+v", res.Method, s)
	}
	return res, nil
}

// parallelMin is the number of records from which aggregation is split
// across CPUs: below it the split costs more than it saves.
const parallelMin = 8192

// addProfile adds a profile's records to agg, in GOMAXPROCS parts when
// there are many. Each part is a fixed range merged back in order, so the
// result does not depend on scheduling.
func addProfile(agg *aggregate.Aggregator, recs []parse.Record) {
	n := runtime.GOMAXPROCS(0)
	if n < 2 || len(recs) < parallelMin {
		agg.AddProfile(recs)
		return
	}
	parts := make([]*aggregate.Aggregator, n)
	size := (len(recs) + n - 1) / n
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = agg.Fork()
		lo, hi := min(i*size, len(recs)), min((i+1)*size, len(recs))
		wg.Go(func() { parts[i].AddProfile(recs[lo:hi]) })
	}
	wg.Wait()
	for _, part := range parts {
		agg.Merge(part)
	}
}

// BuildPerStack builds what a pprof rendering needs: per-stack reports
// with every stack (opt's By and Top do not apply), opt.Value first (it
// becomes the default sample type), then every other value all the
// profiles have, so that the file can be read back, and merged, for any
// value.
func BuildPerStack(profiles []*parse.Profile, opt Options) ([]*Report, error) {
	opt.By, opt.Top = aggregate.ByStack, 0
	values := []unbias.Value{opt.Value}
	for _, v := range []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects} {
		if v != opt.Value && HasValue(profiles, v) {
			values = append(values, v)
		}
	}
	var reps []*Report
	for _, v := range values {
		opt.Value = v
		r, err := Build(profiles, opt)
		if err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	return reps, nil
}

// HasValue reports whether every profile has value v.
func HasValue(profiles []*parse.Profile, v unbias.Value) bool {
	for _, p := range profiles {
		if checkValue(p, v) != nil {
			return false
		}
	}
	return true
}

// checkValue rejects a value the profile does not have.
func checkValue(p *parse.Profile, v unbias.Value) error {
	if v.IsAlloc() && !p.HasAlloc {
		return fmt.Errorf("%s: has no allocation (alloc_*) values; use --value inuse_space or inuse_objects", p.Source.Path)
	}
	if !v.IsAlloc() && !p.HasInUse {
		return fmt.Errorf("%s: has no in-use (inuse_*) values; use --value alloc_space or alloc_objects", p.Source.Path)
	}
	return nil
}

// DefaultBy is what a row is when --by is not given: the allocated type for
// traces (whose stacks are often unsymbolized), the function otherwise.
func DefaultBy(profiles []*parse.Profile) aggregate.By {
	for _, p := range profiles {
		if p.Source.Format != "nettrace" {
			return aggregate.ByFunc
		}
	}
	return aggregate.ByType
}

// DefaultValue is the value a report shows when --value is not given:
// inuse_space where the input has it, else alloc_space.
func DefaultValue(profiles []*parse.Profile) unbias.Value {
	for _, p := range profiles {
		if !p.HasInUse {
			return unbias.AllocSpace
		}
	}
	return unbias.InUseSpace
}
