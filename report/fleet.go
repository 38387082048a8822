package report

import (
	"fmt"
	"hash/maphash"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
)

// fleetSums are, per value, the sums over inputs of each group's estimate
// and of its square and cube, which the two-stage interval of a sampled fleet needs
// (ci.FleetInterval). They are gathered as each input joins, grouped as the
// report will be: a group's estimate in one process is not a sum of cells.
type fleetSums struct {
	by aggregate.By
	// flat and cum map a group's key to its sums, per value index.
	flat, cum []map[fleetKey]*[3]float64
	// total are the sums of the inputs' totals, per value index.
	total [][3]float64
	// seeds are fleetKey's.
	seeds [2]maphash.Seed
}

// fleetKey stands for a group's key: two independent 64-bit hashes of it
// (aggregate.HashStackKey: a --by stack group's stack hashes as its key).
// A --by stack key is kilobytes, made for every group of every input and
// held by the sums; two keys that differ share 128 bits once in about
// 10^38 pairs (a million groups make 5·10^11 pairs).
type fleetKey [2]uint64

// key is the fleetKey of a group or row's key, or of its stack.
func (f *fleetSums) key(key string, stack []string) fleetKey {
	var k fleetKey
	for i, seed := range f.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		aggregate.HashStackKey(&h, key, stack)
		k[i] = h.Sum64()
	}
	return k
}

// addSq adds x, x² and x³ to acc.
func addSq(acc *[3]float64, x float64) {
	acc[0] += x
	acc[1] += x * x
	acc[2] += x * x * x
}

// addFleet adds one input's groups to the sums.
func (b *Builder) addFleet(p *parse.Profile, t *aggregate.Table, totals []ci.Stats) {
	f := b.fleet
	if f == nil {
		by := b.opt.By
		if b.opt.DefaultBy {
			by = DefaultByFor([]*parse.Profile{p})
		}
		f = &fleetSums{by: by, total: make([][3]float64, len(b.values)), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
		for range b.values {
			f.flat = append(f.flat, map[fleetKey]*[3]float64{})
			f.cum = append(f.cum, map[fleetKey]*[3]float64{})
		}
		b.fleet = f
	}
	for vi := range b.values {
		addSq(&f.total[vi], totals[vi].Estimate)
		groups, _, _ := t.GroupsKeyless(f.by, b.filter(), vi, 0)
		for _, g := range groups {
			k := f.key(g.Key, g.Stack)
			addSq(entry(f.flat[vi], k), g.Flat.Estimate)
			if f.by == aggregate.ByFunc {
				addSq(entry(f.cum[vi], k), g.Cum.Estimate)
			}
		}
	}
}

func entry(m map[fleetKey]*[3]float64, key fleetKey) *[3]float64 {
	e := m[key]
	if e == nil {
		e = new([3]float64)
		m[key] = e
	}
	return e
}

// fleetRows replaces the intervals of r's rows and total by the two-stage
// ones for a fleet of opt.FleetSize processes.
func (b *Builder) fleetRows(r *Report, opt Options, vi int) error {
	f := b.fleet
	if f == nil || f.by != opt.By {
		return fmt.Errorf("--fleet-size: give --by explicitly when the inputs' default groupings differ")
	}
	for _, p := range b.inputs {
		if p.merged != nil && p.merged.Inputs > 1 {
			return fmt.Errorf("--fleet-size needs one input per sampled process; %s is a merge of %d inputs", p.src.Path, p.merged.Inputs)
		}
	}
	n := len(b.inputs)
	interval := func(st ci.Stats, sums *[3]float64) (ci.Result, error) {
		return ci.FleetInterval(st, ci.Fleet{Sum: sums[0], SumSq: sums[1], SumCube: sums[2], Sampled: n, Size: opt.FleetSize}, opt.Confidence)
	}
	var err error
	if r.Total.Flat, err = interval(r.Total.Stats, &f.total[vi]); err != nil {
		return err
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		k := f.key(row.Key, row.Stack)
		if row.Stats.N > 0 { // a function seen only as a caller has no flat row
			if row.Flat, err = interval(row.Stats, entry(f.flat[vi], k)); err != nil {
				return err
			}
		}
		if row.Cum != nil {
			c, err := interval(*row.CumStats, entry(f.cum[vi], k))
			if err != nil {
				return err
			}
			row.Cum = &c
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("estimates scaled to a fleet of %d processes from the %d sampled (--fleet-size)", opt.FleetSize, n))
	if g := b.families.K; g > 1 {
		// Workers of one host drawn together are a cluster: alike in what
		// they hold, they vary less than processes drawn one by one would.
		r.Notes = append(r.Notes, fmt.Sprintf("--fleet-size takes each input for a process drawn from the fleet on its own; %d of them are forked from one parent, and if their host was drawn whole, the fleet interval does not model that cluster", g))
	}
	return nil
}
