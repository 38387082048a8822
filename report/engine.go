package report

import (
	"sort"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// EachValue calls fn, for every value the joined inputs have (the one
// asked for, unless Options.AllValues), with what --format parquet writes
// of it: every group by the report's By after the filter, in no order and
// with no --top cut, and the total.
func (b *Builder) EachValue(fn func(v unbias.Value, by aggregate.By, groups []*aggregate.Group, total ci.Stats) error) error {
	opt, err := b.settle()
	if err != nil && !b.opt.AllValues {
		return err
	}
	profiles := b.profiles()
	for vi, v := range b.values {
		if !HasValue(profiles, v) {
			continue
		}
		var groups []*aggregate.Group
		var total []ci.Stats
		if opt.By == aggregate.BySource {
			groups, _, total = b.sourceGroups(vi, 0)
		} else {
			groups, _, total = b.table.Groups(opt.By, b.filter(), vi, 0)
		}
		if err := fn(v, opt.By, groups, total[vi]); err != nil {
			return err
		}
	}
	return nil
}

// FromGroups is the report of statistics grouped elsewhere: an engine's
// GROUP BY over heapest's Parquet rows gives each group's flat (and, by
// func, cum) statistics and the total, and heapest computes what the
// engine cannot, the intervals. Rows are ordered as a report orders them
// (flat, then cum, largest first, then key) and cut to opt.Top.
// correlated are the inputs whose samples the sums allow to be correlated
// (see Builder.correlate), said in a note; nil when none.
func FromGroups(opt Options, sources []parse.Source, groups []*aggregate.Group, total ci.Stats, correlated []string) (*Report, error) {
	sort.Slice(groups, func(i, j int) bool {
		x, y := groups[i], groups[j]
		switch {
		case x.Flat.Estimate != y.Flat.Estimate:
			return x.Flat.Estimate > y.Flat.Estimate
		case x.Cum.Estimate != y.Cum.Estimate:
			return x.Cum.Estimate > y.Cum.Estimate
		}
		return x.Key < y.Key
	})
	cut := 0
	if opt.Top > 0 && len(groups) > opt.Top {
		groups, cut = groups[:opt.Top], len(groups)-opt.Top
	}
	r, err := build(opt, sources, groups, cut, total)
	if err == nil {
		r.setCorrelated(len(correlated), correlated)
	}
	return r, err
}
