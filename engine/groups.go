package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// WriteGroups writes one input's groups of value v, grouped by by, and
// its total: a flat row per group with samples, a cum row per function
// with samples under it (by func), and a total row.
func (w *Writer) WriteGroups(src parse.Source, v unbias.Value, by aggregate.By, groups []*aggregate.Group, total ci.Stats) error {
	label := Row{Source: src.Path, Format: src.Format, Process: src.Process, BuildID: src.Build, Time: src.Time, By: by.String(), Value: v.String()}
	put := func(part, key string, stack []string, s ci.Stats) error {
		if s.N == 0 {
			return nil
		}
		r := label
		r.Part, r.Key, r.Stack, r.Columns = part, key, stack, ci.ColumnsOf(s)
		return w.Write(r)
	}
	if err := put(PartTotal, "total", nil, total); err != nil {
		return err
	}
	for _, g := range groups {
		if err := put(PartFlat, g.Key, g.Stack, g.Flat); err != nil {
			return err
		}
		if by == aggregate.ByFunc {
			if err := put(PartCum, g.Key, nil, g.Cum); err != nil {
				return err
			}
		}
	}
	return nil
}

// Grouped are rows read back, summed per part and key for one value.
type Grouped struct {
	By     aggregate.By
	Value  unbias.Value
	Groups []*aggregate.Group
	Total  ci.Stats
	// Rows is how many rows were read for the value.
	Rows int
	// Correlated is the largest group of sources whose samples may be
	// correlated (fleet.Correlated, by the rows' process): the sums are
	// widened for them (ci.Stats.Correlate). Nil when there is none.
	Correlated []string
}

// Group sums the rows of value v (or, with v empty, of the one value
// the rows have; where they have several, the one report would show,
// unbias.DefaultValue) per part and key:
// rows an engine grouped are summed again only where the engine left
// several of one key (as when it kept a label column), so heapest's own
// files, ungrouped, give the merge of their inputs.
func Group(rows []Row, v string) (*Grouped, error) {
	if v == "" {
		var vs valueSet
		for i := range rows {
			vs.add(&rows[i])
		}
		var err error
		if v, err = vs.value(); err != nil {
			return nil, err
		}
	}
	g, err := newGrouper(v, true)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		if err := g.add(&rows[i], i); err != nil {
			return nil, err
		}
	}
	return g.result()
}

// GroupFile is Group of the rows of file in, read as they are summed
// (Scan), never all kept: once for the values they have (survey, without
// stacks), which also finds a damaged file before before is called (the
// caller's checks of its flags), then for the value v (empty: the
// default, as Group picks it). Group's errors are given as "name: error";
// a damaged file's and before's as they are.
func GroupFile(in *Input, name, v string, before func() error) (*Grouped, error) {
	var vs valueSet
	if err := survey(in, in.Size, in.Name, func(r *Row) error { vs.add(r); return nil }); err != nil {
		return nil, err
	}
	if err := before(); err != nil {
		return nil, err
	}
	wrap := func(err error) error { return fmt.Errorf("%s: %w", name, err) }
	if v == "" {
		var err error
		if v, err = vs.value(); err != nil {
			return nil, wrap(err)
		}
	}
	g, err := newGrouper(v, false)
	if err != nil {
		return nil, wrap(err)
	}
	i := 0
	var bad error
	err = Scan(in, in.Size, in.Name, func(r *Row) error {
		i++
		bad = g.add(r, i-1)
		return bad
	})
	switch {
	case bad != nil:
		return nil, wrap(bad)
	case err != nil:
		return nil, err // the file changed since the first pass
	}
	grouped, err := g.result()
	if err != nil {
		return nil, wrap(err)
	}
	return grouped, nil
}

// grouper sums rows, one at a time, for Group.
type grouper struct {
	v      string
	g      *Grouped
	byName string
	index  map[string]*aggregate.Group
	// sources are the rows' sources in the order they first come, with
	// each one's process.
	sources []string
	process map[string]string
	// kept says the rows are kept by the caller: a group may refer to a
	// row's key and stack; else it copies them (Scan's are transient).
	kept bool
	// rateMin and rateMax bound the sampling periods of the rows.
	rateMin, rateMax float64
}

func newGrouper(v string, kept bool) (*grouper, error) {
	val, err := unbias.ParseValue(v)
	if err != nil {
		return nil, err
	}
	return &grouper{v: v, g: &Grouped{Value: val}, index: map[string]*aggregate.Group{}, process: map[string]string{}, kept: kept}, nil
}

// add sums row i.
func (gr *grouper) add(r *Row, i int) error {
	g := gr.g
	if r.Value != gr.v {
		return nil
	}
	if r.Part == PartSample {
		return fmt.Errorf("row %d: sample rows are records, not groups (read them with the records of the file)", i+1)
	}
	if gr.byName == "" {
		gr.byName = r.By
	} else if r.By != gr.byName {
		return fmt.Errorf("row %d: grouped by %q where earlier rows are by %q: one file is one grouping", i+1, r.By, gr.byName)
	}
	s, err := r.Columns.Stats()
	if err != nil {
		return fmt.Errorf("row %d (%s %s): %w", i+1, r.Part, r.Key, err)
	}
	g.Rows++
	if r.RateMin > 0 && (gr.rateMin == 0 || r.RateMin < gr.rateMin) {
		gr.rateMin = r.RateMin
	}
	gr.rateMax = max(gr.rateMax, r.RateMax)
	if _, ok := gr.process[r.Source]; !ok {
		gr.process[r.Source] = strings.Clone(r.Process)
		gr.sources = append(gr.sources, strings.Clone(r.Source))
	}
	switch r.Part {
	case PartTotal:
		g.Total.Merge(&s)
		return nil
	case PartFlat, PartCum:
	default:
		return fmt.Errorf("row %d: part %q (want %s, %s, %s or %s)", i+1, r.Part, PartTotal, PartFlat, PartCum, PartSample)
	}
	grp := gr.index[r.Key]
	if grp == nil {
		grp = &aggregate.Group{Key: r.Key, Stack: r.Stack}
		if !gr.kept {
			grp.Key, grp.Stack = strings.Clone(r.Key), slices.Clone(r.Stack)
			if len(r.Stack) == 0 {
				grp.Stack = nil
			}
		}
		gr.index[grp.Key] = grp
		g.Groups = append(g.Groups, grp)
	}
	if r.Part == PartFlat {
		grp.Flat.Merge(&s)
	} else {
		grp.Cum.Merge(&s)
	}
	return nil
}

// result checks the sums and returns them.
func (gr *grouper) result() (*Grouped, error) {
	g := gr.g
	if g.Rows == 0 {
		return nil, fmt.Errorf("no rows of value %s (the inputs had no samples of it)", gr.v)
	}
	if g.Total.N == 0 {
		return nil, fmt.Errorf("no %s row of value %s: the total is what percentages and the header rest on", PartTotal, gr.v)
	}
	var err error
	if g.By, err = aggregate.ParseBy(gr.byName); err != nil {
		return nil, fmt.Errorf("column by: %w", err)
	}
	gr.allowUnseen()
	gr.correlate()
	return g, nil
}

// allowUnseen lets every sum of rows of different sampling periods hold
// what the longest hides where it has no row of its own, as a report of
// the sources themselves does (aggregate.Table.AllowUnseen).
func (gr *grouper) allowUnseen() {
	if !(gr.rateMin > 0 && gr.rateMax > gr.rateMin) || gr.g.By == aggregate.BySource {
		return // a row by source is one source's own, whole
	}
	bytes := gr.g.Value.IsSpace()
	gr.g.Total.AllowUnseenOf(gr.rateMax, bytes)
	for _, grp := range gr.g.Groups {
		grp.Flat.AllowUnseenOf(gr.rateMax, bytes)
		grp.Cum.AllowUnseenOf(gr.rateMax, bytes)
	}
}

// correlate widens the sums for the largest group of sources whose
// samples may be correlated, as a report of the sources themselves does.
// Rows an engine summed over sources have lost their processes: their
// sums are as the engine made them.
func (gr *grouper) correlate() {
	g := gr.g
	g.Correlated = fleet.Correlated(gr.sources, func(i int) []string { return []string{gr.process[gr.sources[i]]} })
	k := float64(len(g.Correlated))
	if k < 2 {
		return
	}
	g.Total.Correlate(k)
	for _, grp := range g.Groups {
		grp.Flat.Correlate(k)
		grp.Cum.Correlate(k)
	}
}

// valueSet is the values rows have, in the order they first come, and
// whether they are a JFR recording's (whose default value is alloc_space).
type valueSet struct {
	seen map[string]bool
	list []string
	p    parse.Profile
}

func (vs *valueSet) add(r *Row) {
	if r.Format == "jfr" {
		vs.p.Source.Format = "jfr"
	}
	if vs.seen[r.Value] {
		return
	}
	if vs.seen == nil {
		vs.seen = map[string]bool{}
	}
	vs.seen[r.Value] = true
	vs.list = append(vs.list, r.Value)
	v, err := unbias.ParseValue(r.Value)
	vs.p.HasInUse = vs.p.HasInUse || err == nil && !v.IsAlloc()
	vs.p.HasAlloc = vs.p.HasAlloc || err == nil && v.IsAlloc()
}

// value is the one value of the rows, or the default among several.
func (vs *valueSet) value() (string, error) {
	switch d := unbias.DefaultValue(&vs.p).String(); {
	case len(vs.list) == 0:
		return "", fmt.Errorf("no rows")
	case len(vs.list) == 1:
		return vs.list[0], nil
	case vs.seen[d]:
		return d, nil
	}
	return "", fmt.Errorf("rows of several values (%s): choose one with --value", strings.Join(vs.list, ", "))
}
