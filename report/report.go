package report

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Options select what a report shows.
type Options struct {
	// Value is what the report estimates; with DefaultValue it is chosen
	// from the inputs (DefaultValueFor) instead.
	Value        unbias.Value
	DefaultValue bool
	// By is what a row is; with DefaultBy it is chosen from the inputs
	// (DefaultByFor) instead.
	By         aggregate.By
	DefaultBy  bool
	Confidence float64
	Method     ci.Method
	// Top limits the rows (0: all).
	Top           int
	Focus, Ignore *regexp.Regexp
	// Hide drops the frames whose function it matches from every stack
	// (aggregate.Table.Hide).
	Hide *regexp.Regexp
	// Lines says the inputs' frames were named by source line
	// (parse.Options.Lines): pprof output writes them as functions and
	// lines (Stacks.Lines).
	Lines bool
	// From and To select a time window of traces (ns from the trace
	// start; To ≤ 0: the end) when Window is set.
	From, To int64
	Window   bool
	// AllValues collects every value the inputs have, for pprof output
	// (Builder.Stacks).
	AllValues bool
	// Flame keeps every input's stacks for Builder.Flame, whatever By
	// needs.
	Flame bool
	// SingleInput says one input will be added: with DefaultValue, the
	// value is then that input's own, and work on the other kind of value
	// can be left out as soon as the input says what it holds.
	SingleInput bool
	// ExtraKeys are record attributes the cells keep besides those By
	// needs, for Select (a thread budget on a report by function).
	ExtraKeys aggregate.Keys
	// SourceTotals keeps each input's totals, for Select by source.
	SourceTotals bool
	// FleetSize, when > 0, says the inputs are processes sampled at
	// random from a fleet of that many: estimates are scaled to the fleet
	// and intervals are two-stage (ci.FleetInterval).
	FleetSize int
	// EstimatesOnly leaves the rows without intervals: Flat and Cum hold
	// the estimate alone (their statistics are checked all the same), for
	// a caller that computes its own intervals from Stats, as a diff does.
	EstimatesOnly bool
	// KeylessStacks leaves --by stack rows without their Key (an empty
	// stack's excepted) but with their Stack, for a caller that pairs and
	// cuts rows first and makes the keys of those it keeps, as a diff does
	// (aggregate.GroupsKeyless).
	KeylessStacks bool
}

// filtered reports whether --focus or --ignore keep some samples only.
func (o Options) filtered() bool { return o.Focus != nil || o.Ignore != nil }

// Row is one group with its intervals.
type Row struct {
	// Key is the group's key. For --by stack it is the folded stack: the
	// frames root first, joined by ";" (main;alloc;malloc), as flame-graph
	// tools read stacks and as heapest's CSV, JSON and Parquet rows key
	// them; empty but for the empty stack's in a report built with
	// KeylessStacks (aggregate.StackKey makes it from Stack).
	Key string
	// Stack is leaf first, for --by stack: the order of pprof's samples,
	// and the order StackText shows it to people in.
	Stack []string
	// Flat is the group's own estimate and interval.
	Flat ci.Result
	// Cum is, for --by func, the estimate over every stack containing the
	// function; nil otherwise.
	Cum *ci.Result
	// Stats and CumStats are the statistics behind Flat and Cum, kept so
	// that a pprof rendering can carry them and be merged again. CumStats
	// is nil where Cum is: most rows (--by stack's, a million of them in a
	// large dump's report) have no cum.
	Stats    ci.Stats
	CumStats *ci.Stats
}

// StackSep joins the frames of a stack shown to people, leaf first: each
// frame is followed by its caller ("malloc < alloc < main"). The leaf,
// what one looks for, comes first, and stays when a narrow terminal cuts
// the line.
const StackSep = " < "

// StackText is a stack (leaf first, as Row.Stack) as people read it.
func StackText(stack []string) string { return strings.Join(stack, StackSep) }

// Report is the table model.
type Report struct {
	Confidence float64
	Value      unbias.Value
	By         aggregate.By
	// Lines says frames are named by source line (Options.Lines): rows
	// by func are lines.
	Lines   bool
	Sources []parse.Source
	// Total is every group's sum. Its Key is empty: a function may well
	// be named "total", and no key of a row may stand for the total too.
	Total Row
	Rows  []Row
	// Omitted counts the rows cut by Top.
	Omitted int
	// Notes are report-wide caveats, printed as footnotes.
	Notes []string
	// Merged describes the inputs, and those underneath inputs that are
	// merges themselves. IsMerge says whether it is worth showing.
	Merged *parse.Merged
	// Skipped are the inputs left out because they could not be read.
	Skipped []Skip
	// Filters are the active --focus and --ignore (nil when none);
	// Unfiltered is then the total before them, which percentages are of,
	// as pprof's are.
	Filters    *Filters
	Unfiltered float64
	// Hidden is --hide as given: frames of functions it matches are gone
	// from every stack, their samples counted at the rest of it.
	Hidden string
	// Notices are warnings about the report itself (the filters leave
	// nothing; a grouping the inputs have no key of), beside the inputs'
	// own: the commands print them, and Warnings holds them too.
	Notices []string
	// Correlated is how many inputs' samples may be correlated with one
	// another (the largest family's, inputs underneath merges included:
	// fleet.Families.K; 0 or 1 for none), which every interval allows for
	// (Builder.correlate); CorrelatedPaths are the inputs given that hold
	// them. Notes say so.
	Correlated      int
	CorrelatedPaths []string
	// Warnings are the inputs' warnings (the parsers' and the
	// symbolizer's), each prefixed with its input's path, in input order:
	// standard error shows them, and machine output carries them.
	Warnings []string
}

// Processes is how many processes r sums (1 where it does not say).
func (r *Report) Processes() int {
	if r.Merged == nil {
		return 1
	}
	return max(r.Merged.Processes, 1)
}

// UnseenWeight is what one sample a row of r does not have may weigh:
// the largest sampling period of r's inputs, for space values (a group
// of that many bytes goes unsampled with probability 1/e). 0 where r
// does not say: object counts (tiny allocations weigh next to nothing),
// inputs without a period or that record every allocation.
func (r *Report) UnseenWeight() float64 {
	if !r.Value.IsSpace() || r.Merged == nil || !(r.Merged.RateMax > 1) {
		return 0
	}
	return r.Merged.RateMax
}

// Filters are a report's active sample filters, as given.
type Filters struct{ Focus, Ignore string }

// String is "focus=RE ignore=RE", the parts given.
func (f *Filters) String() string {
	var parts []string
	if f.Focus != "" {
		parts = append(parts, "focus="+f.Focus)
	}
	if f.Ignore != "" {
		parts = append(parts, "ignore="+f.Ignore)
	}
	return strings.Join(parts, " ")
}

// Builder runs the pipeline over any number of inputs: each input's
// records stream from its parser into a Collector (unbiased as they
// arrive), its frames are named, and its cells join one Table; Report and
// Stacks then group the table and compute the intervals.
type Builder struct {
	opt    Options
	values []unbias.Value
	keys   aggregate.Keys
	table  *aggregate.Table
	// inputs are what is kept of each joined input.
	inputs []joined
	// skipped are the inputs AddFiles left out.
	skipped []Skip
	// hid says --hide hid a frame of some input.
	hid bool
	// fleet gathers what Options.FleetSize needs.
	fleet *fleetSums
	// strs interns the strings the inputs' sources share.
	strs map[string]string
	// families are the joined inputs' process families (fleet.FamiliesOf),
	// once settle has widened the table's statistics for the largest;
	// settled says it has.
	families fleet.Families
	settled  bool
}

// allValues is every value, in the order pprof output lists them after
// the main one.
var allValues = []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}

// NewBuilder returns a Builder for opt.
func NewBuilder(opt Options) *Builder {
	b := &Builder{opt: opt}
	switch {
	case opt.AllValues:
		b.values = allValues
	case opt.DefaultValue:
		b.values = []unbias.Value{unbias.InUseSpace, unbias.AllocSpace}
	default:
		b.values = []unbias.Value{opt.Value}
	}
	// --by thread and --by size need their keys in the cells; a default
	// --by (func or type) needs neither.
	if !opt.DefaultBy {
		b.keys = aggregate.KeysFor(opt.By)
	}
	b.keys.Thread = b.keys.Thread || opt.ExtraKeys.Thread
	b.keys.Size = b.keys.Size || opt.ExtraKeys.Size
	b.table = aggregate.NewTable(b.values, b.keys)
	return b
}

// Reader streams one input's records into sink and returns what the input
// says about itself (formats.ReadFile, with its options bound).
type Reader func(sink parse.Sink, threads bool) (*parse.Profile, error)

// Namer returns the namer of a parsed input's frames (nil: none needed).
type Namer func(p *parse.Profile) (aggregate.Namer, error)

// Add reads one input and adds its cells.
func (b *Builder) Add(read Reader, namer Namer, sizeHint int64) (*parse.Profile, error) {
	p, t, err := b.load(read, namer, sizeHint)
	if err != nil {
		return nil, err
	}
	b.join(p, t)
	return p, nil
}

// load reads one input into a table of its own. It changes nothing in b,
// so that several inputs can be loaded at once.
func (b *Builder) load(read Reader, namer Namer, sizeHint int64) (*parse.Profile, *aggregate.Table, error) {
	w := aggregate.Window{From: b.opt.From, To: b.opt.To, On: b.opt.Window}
	c := aggregate.NewCollector(b.values, b.keys, w, sizeHint)
	if b.opt.DefaultValue && b.opt.SingleInput && !b.opt.AllValues {
		c.Narrow()
	}
	if b.opt.SingleInput && !b.opt.AllValues && !b.opt.Flame && b.opt.Focus == nil && b.opt.Ignore == nil {
		c.DropStacks(b.needStacks)
	}
	p, err := read(c, b.keys.Thread)
	if err != nil {
		return nil, nil, err
	}
	if b.opt.Window && !p.Timed {
		return nil, nil, fmt.Errorf("%s: --from/--to select a time window of a trace; this %s profile has no event times", p.Source.Path, p.Source.Format)
	}
	if sp := c.Span(); b.opt.Window && sp.Offered > 0 && sp.Kept() == 0 {
		// An empty report of one trace would read as "nothing allocated";
		// in a merge, one trace may well have nothing in the window.
		msg := fmt.Sprintf("no event falls in the window --from %v --to %v: the trace's events span %v to %v",
			time.Duration(b.opt.From), windowEnd(b.opt.To), time.Duration(sp.First), time.Duration(sp.Last))
		if b.opt.SingleInput {
			return nil, nil, fmt.Errorf("%s: %s", p.Source.Path, msg)
		}
		p.Warnings = append(p.Warnings, msg)
	}
	var n aggregate.Namer
	if namer != nil {
		if n, err = namer(p); err != nil {
			return nil, nil, err
		}
	}
	t := aggregate.NewTable(b.values, b.keys)
	// Frames no symbol names are keyed by module and offset, not by
	// address: the same in every process (a merge's inputs load their
	// libraries at different addresses), and a name a user can look up.
	t.KeyByModule()
	if b.opt.Hide != nil {
		t.Hide(b.opt.Hide)
	}
	if err := c.Finish(t, n, p); err != nil {
		return nil, nil, err
	}
	if b.opt.SingleInput && sizeHint >= bigInput {
		// The collector's tables are garbage now, tens of MB of them:
		// collected here, before grouping makes its own, their memory is
		// reused instead of more being faulted in (page faults are a
		// large part of reading a big dump on this project's machines).
		runtime.GC()
	}
	return p, t, nil
}

// bigInput is the size from which a single input's collector is collected
// as soon as it is finished.
const bigInput = 16 << 20

// regexpText is re as given, "" for none.
func regexpText(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}

// windowEnd is --to in words: its end, or the trace's.
func windowEnd(to int64) string {
	if to <= 0 {
		return "(the end)"
	}
	return time.Duration(to).String()
}

// join adds a loaded input's table to the others. Inputs are joined in
// the order they were given, whatever order they were loaded in: sums of
// floating-point numbers depend on their order, and the same inputs must
// give the same bytes.
func (b *Builder) join(p *parse.Profile, t *aggregate.Table) {
	if b.settled {
		// The table's statistics were widened for the inputs joined
		// before (correlate): one more would be summed unwidened.
		panic("report: an input joined after the Builder was read")
	}
	// The samples each source rests on are counted on its own table,
	// before it joins the others.
	totals := t.Total(b.filter())
	b.hid = b.hid || t.Hid()
	if b.opt.FleetSize > 0 {
		b.addFleet(p, t, totals)
	}
	if m := p.Merged; m != nil && m.Correlated > 1 {
		// Its statistics were widened for its own share of a family; the
		// family may have more inputs beside it, or in other merges, and
		// the table is widened for the whole of it once (correlate).
		t.Uncorrelate(m.Correlated)
	}
	if len(b.inputs) == 0 {
		b.table = t // the first input's table becomes the shared one
	} else {
		b.table.Merge(t)
	}
	b.inputs = append(b.inputs, b.slim(p, totals))
}

// joined is what is kept of an input once its table joined the others:
// its source, which values it has, and the samples each value rests on.
// The rest (mappings, symbols, a trace's method names) can be large and is
// done with once the input's frames are named; a merge of a hundred
// thousand dumps keeps little more per input than its path.
type joined struct {
	src                       parse.Source
	hasInUse, hasAlloc, timed bool
	defaultType               string
	merged                    *parse.Merged
	// samples are the raw samples per value (in Builder.values order)
	// after the filter; totals, kept for --by source only, the statistics.
	samples [4]float64
	totals  []ci.Stats
	// warnings are the input's, for Report.Warnings.
	warnings []string
}

// unwidened is the input's total of value index v as independent
// samples: a merge's statistics carry the widening for its own share of a
// family (parse.Merged.Correlated), which a sum over inputs widens again
// for the whole family.
func (j *joined) unwidened(v int) ci.Stats {
	s := j.totals[v]
	if m := j.merged; m != nil {
		s.Uncorrelate(m.Correlated)
	}
	return s
}

// profile is the input as the parse.Profile the helpers of this package
// take.
func (j *joined) profile() *parse.Profile {
	return &parse.Profile{Source: j.src, HasInUse: j.hasInUse, HasAlloc: j.hasAlloc, Timed: j.timed, DefaultType: j.defaultType, Merged: j.merged}
}

// slim keeps what a report needs of a joined input. The strings inputs
// share (format, detail, build) are kept once.
func (b *Builder) slim(p *parse.Profile, totals []ci.Stats) joined {
	src := p.Source
	src.Format, src.Detail, src.Build = b.intern(src.Format), b.intern(src.Detail), b.intern(src.Build)
	j := joined{src: src, hasInUse: p.HasInUse, hasAlloc: p.HasAlloc, timed: p.Timed, defaultType: b.intern(p.DefaultType), merged: p.Merged}
	for i := range totals {
		j.samples[i] = totals[i].Samples
	}
	if b.opt.By == aggregate.BySource && !b.opt.DefaultBy || b.opt.SourceTotals {
		j.totals = totals
	}
	return j
}

// warnings are the joined inputs' warnings, each after its input's path.
func (b *Builder) warnings() []string {
	var out []string
	for i := range b.inputs {
		for _, w := range b.inputs[i].warnings {
			out = append(out, b.inputs[i].src.Path+": "+w)
		}
	}
	return out
}

// notice adds a warning about the report itself.
func (r *Report) notice(w string) {
	r.Notices = append(r.Notices, w)
	r.Warnings = append(r.Warnings, w)
}

// mixedWindows is the notice of an alloc_* report that sums delta
// profiles with cumulative ones: a delta's allocations are those of its
// window, a cumulative profile's those since its process started, which
// include the window when it is the same process. "" otherwise.
func mixedWindows(v unbias.Value, sources []parse.Source) string {
	var delta []string
	for _, s := range sources {
		if s.Delta {
			delta = append(delta, s.Path)
		}
	}
	if !v.IsAlloc() || len(delta) == 0 || len(delta) == len(sources) {
		return ""
	}
	deltas, cumulative := "a delta profile", "a cumulative one"
	if len(delta) > 1 {
		deltas = fmt.Sprintf("%d delta profiles", len(delta))
	}
	if n := len(sources) - len(delta); n > 1 {
		cumulative = fmt.Sprintf("%d cumulative ones", n)
	}
	return fmt.Sprintf("%s sums %s (%s) with %s: a delta profile holds what was allocated in its window, a cumulative one what was allocated since its process started, "+
		"so where both profiled one process its window counts twice; merge delta profiles, or cumulative ones, alone",
		v, deltas, strings.Join(delta, ", "), cumulative)
}

// forcedFleet is how many Go profiles of a period other than the
// runtime's default make forcedSamples speak: each process carries about
// one forced sample, and their bias grows with the processes summed
// while the interval grows with the square root.
const forcedFleet = 10

// forcedSamples is the notice of a sum of many Go profiles sampled at a
// period other than the runtime's default, directly or in merges
// underneath (m, the inputs' summary): setting runtime.MemProfileRate
// makes each P sample its next allocation whatever its size
// (docs/pprof.md), weighed at the period as any sample. "" otherwise, and
// for inputs of other formats too, whose periods m does not tell apart.
func forcedSamples(m *parse.Merged) string {
	if m == nil || len(m.Formats) != 1 || m.Formats["pprof-go"] < forcedFleet || !(m.RateMax > 1) ||
		m.RateMin == goDefaultRate && m.RateMax == goDefaultRate {
		return ""
	}
	n := m.Formats["pprof-go"]
	period := units.Format(m.RateMax, true)
	if m.RateMin != m.RateMax {
		period = units.Format(m.RateMin, true) + "–" + period
	}
	return fmt.Sprintf("%d Go profiles sampled at a period other than the runtime's default 512KiB (%s): "+
		"setting runtime.MemProfileRate makes the runtime sample each P's next allocation whatever its size, about one forced sample a process, weighed at the period; "+
		"summed over %d processes they bias small sites' estimates high, beyond their intervals (an audit: a 64-byte site's covered in 9.5%% of fleets of 50 at 1MiB, 57%% at 256KiB): read small sites with care (docs/pprof.md)",
		n, period, n)
}

// goDefaultRate is the Go runtime's default MemProfileRate.
const goDefaultRate = 512 * 1024

// keyAbsent is the notice of a report by thread, type or size of inputs
// that record none (a jemalloc dump's types, a Go profile's threads, a
// JFR recording's sizes): its one row is all of it. "" otherwise.
func keyAbsent(by aggregate.By, groups []*aggregate.Group, cut int) string {
	none, what := "", ""
	switch by {
	case aggregate.ByThread:
		none, what = aggregate.NoThread, "the inputs record no threads"
	case aggregate.ByType:
		none, what = aggregate.NoType, "the inputs record no types"
	case aggregate.BySize:
		none, what = aggregate.MixedSize, "no sample has one size of its own (a dump line of several sizes; JFR's weights, which are bytes, not an object's size)"
	}
	if none == "" || cut > 0 || len(groups) != 1 || groups[0].Key != none {
		return ""
	}
	return fmt.Sprintf("--by %s: %s, so every sample is under %s", by, what, none)
}

// profiles returns the joined inputs as parse.Profiles.
func (b *Builder) profiles() []*parse.Profile {
	out := make([]*parse.Profile, len(b.inputs))
	for i := range b.inputs {
		out[i] = b.inputs[i].profile()
	}
	return out
}

func (b *Builder) intern(s string) string {
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if t, ok := b.strs[s]; ok {
		return t
	}
	b.strs[s] = s
	return s
}

// needStacks reports whether a report on p alone groups by something
// stacks decide (func, stack, leaf), once --by is settled for it.
func (b *Builder) needStacks(p *parse.Profile) bool {
	by := b.opt.By
	if b.opt.DefaultBy {
		by = DefaultByFor([]*parse.Profile{p})
	}
	return by == aggregate.ByFunc || by == aggregate.ByStack || by == aggregate.ByLeaf
}

func (b *Builder) filter() aggregate.Filter {
	return aggregate.Filter{Focus: b.opt.Focus, Ignore: b.opt.Ignore}
}

// settle decides the defaults and checks that every input has the value.
// The first call, after the last input joined, also widens the
// statistics for correlated inputs (correlate).
func (b *Builder) settle() (Options, error) {
	b.correlate()
	opt := b.opt
	profiles := b.profiles()
	if opt.DefaultValue {
		opt.Value = DefaultValueFor(profiles)
	}
	if opt.DefaultBy {
		opt.By = DefaultByFor(profiles)
	}
	if len(profiles) == 0 {
		return opt, errNoInput
	}
	return opt, checkValues(profiles, opt.Value)
}

// correlate finds, once, the largest group of joined inputs whose samples
// may be correlated (forked children of one process, or dumps of one)
// and widens every statistic of the table for it: k such inputs may be
// one sample counted k times, whose variance is k times what independent
// inputs would have (ci.Stats.Correlate). The largest group bounds every
// row's, however few of its inputs a row holds.
func (b *Builder) correlate() {
	if b.settled {
		return
	}
	b.settled = true
	live := b.readsLive()
	b.families = fleet.FamiliesOf(b.paths(), func(i int) []string { return b.identities(i, live) },
		func(i int) map[string]int {
			if m := b.inputs[i].merged; m != nil {
				return m.Families
			}
			return nil
		})
	if m := b.merged(); m.RateMin > 0 && m.RateMax > m.RateMin {
		// Inputs of different periods: a row one of the largest has no
		// sample of may still hold bytes there (before widening for
		// correlation, which scales the allowance with the rest).
		b.table.AllowUnseen(m.RateMax)
	}
	if k := b.correlation(); k > 1 {
		b.table.Correlate(k)
	}
}

// setCorrelated records that k inputs' samples may be correlated (paths
// hold them) and says so in a note, when k is two or more.
func (r *Report) setCorrelated(k int, paths []string) {
	if k > 1 {
		r.Correlated, r.CorrelatedPaths = k, paths
		r.Notes = append(r.Notes, correlatedNote(k, paths))
	}
}

// correlatedNote says which inputs' samples may be correlated, and how
// the intervals allow for it.
func correlatedNote(k int, paths []string) string {
	const show = 3
	list := strings.Join(paths[:min(len(paths), show)], ", ")
	if len(paths) > show {
		list += fmt.Sprintf(" and %d more", len(paths)-show)
	}
	if len(paths) != k {
		list += " hold them" // merges hold several
	}
	return fmt.Sprintf("%d inputs share one process's identity (%s): forked from one parent, dumps of one process, or run without address randomization, their samplers may draw one random sequence; every interval allows for %d correlated inputs", k, list, k)
}

// correlation is how many inputs' samples may be correlated with one
// another, at most (1: none).
func (b *Builder) correlation() float64 { return float64(max(b.families.K, 1)) }

func (b *Builder) valueIndex(v unbias.Value) int {
	for i, x := range b.values {
		if x == v {
			return i
		}
	}
	return -1
}

// Sources are the joined inputs' sources (their sample counts are per
// value: Report's carry them).
func (b *Builder) Sources() []parse.Source {
	out := make([]parse.Source, len(b.inputs))
	for i := range b.inputs {
		out[i] = b.inputs[i].src
	}
	return out
}

// sources lists the inputs with the samples value index vi rests on.
func (b *Builder) sources(vi int) []parse.Source {
	out := make([]parse.Source, len(b.inputs))
	for i := range b.inputs {
		out[i] = b.inputs[i].src
		out[i].Samples = b.inputs[i].samples[vi]
	}
	return out
}

// Report groups the inputs' cells and computes every interval.
func (b *Builder) Report() (*Report, error) {
	opt, err := b.settle()
	if err != nil {
		return nil, err
	}
	vi := b.valueIndex(opt.Value)
	var groups []*aggregate.Group
	var cut int
	var total []ci.Stats
	if opt.By == aggregate.BySource {
		groups, cut, total = b.sourceGroups(vi, opt.Top)
	} else {
		groupsOf := b.table.Groups
		if opt.KeylessStacks {
			groupsOf = b.table.GroupsKeyless
		}
		groups, cut, total = groupsOf(opt.By, b.filter(), vi, opt.Top)
	}
	bopt := opt
	// With --fleet-size, fleetRows computes every interval shown: the
	// rows' own would be computed for nothing.
	bopt.EstimatesOnly = bopt.EstimatesOnly || opt.FleetSize > 0
	r, err := build(bopt, b.sources(vi), groups, cut, total[vi])
	if err != nil {
		return nil, err
	}
	r.Merged, r.Skipped, r.Warnings = b.merged(), b.skipped, b.warnings()
	r.setCorrelated(b.families.K, b.families.Paths)
	if opt.filtered() {
		r.Filters = &Filters{Focus: regexpText(opt.Focus), Ignore: regexpText(opt.Ignore)}
		r.Unfiltered = b.table.Total(aggregate.Filter{})[vi].Estimate
		if r.Total.Stats.Estimate == 0 && r.Total.Stats.Samples == 0 && r.Unfiltered > 0 {
			r.notice("the filters (" + r.Filters.String() + ") match no sample")
		}
	}
	if opt.Hide != nil {
		r.Hidden = opt.Hide.String()
		if !b.hid && (opt.By == aggregate.ByFunc || opt.By == aggregate.ByStack || opt.By == aggregate.ByLeaf) {
			r.notice("--hide " + r.Hidden + " matches no frame")
		}
	}
	if none := keyAbsent(opt.By, groups, cut); none != "" {
		r.notice(none)
	}
	if mixed := mixedWindows(opt.Value, r.Sources); mixed != "" {
		r.notice(mixed)
	}
	if forced := forcedSamples(r.Merged); forced != "" {
		r.notice(forced)
	}
	if opt.DefaultValue {
		if differ := defaultsDiffer(b.profiles(), opt.Value); differ != "" {
			r.notice(differ)
		}
	}
	if opt.FleetSize > 0 {
		if err := b.fleetRows(r, opt, vi); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Select returns the statistics, for the report's value and after its
// filter, of the cells a budget names: all of them (re nil), those with
// a frame matching re (by func, each cell once, as --focus keeps them),
// or those whose group by by (leaf, type, thread, size or source) has a
// key matching re. Thread and size keys must have been kept
// (Options.ExtraKeys), and sources' totals (Options.SourceTotals).
func (b *Builder) Select(by aggregate.By, re *regexp.Regexp) (ci.Stats, error) {
	opt, err := b.settle()
	if err != nil {
		return ci.Stats{}, err
	}
	vi := b.valueIndex(opt.Value)
	f := b.filter()
	if re == nil || by == aggregate.ByFunc {
		f.Within = re
		st := b.table.Total(f)[vi]
		if re == nil {
			unshift(&st, opt) // the total, as a report's (build)
		}
		return st, nil
	}
	var st ci.Stats
	if by == aggregate.BySource {
		if !b.opt.SourceTotals {
			return ci.Stats{}, fmt.Errorf("report: Select by source needs Options.SourceTotals")
		}
		for i := range b.inputs {
			if s := b.inputs[i].unwidened(vi); s.N > 0 && re.MatchString(b.inputs[i].src.Path) {
				unshift(&s, opt)
				st.Merge(&s)
			}
		}
		st.Correlate(b.correlation()) // sources' own totals, summed here
		return st, nil
	}
	groups, _, _ := b.table.Groups(by, f, vi, 0)
	for _, g := range groups {
		if re.MatchString(g.Key) {
			flat := g.Flat
			if whole(by, g.Key) {
				unshift(&flat, opt)
			}
			st.Merge(&flat)
		}
	}
	return st, nil
}

// whole reports whether a row of key by by holds every record of what it
// is: a thread's all its records, a source's all its input's, and JFR's
// one row of sizes ("mixed": its weights have none) every JFR record.
func whole(by aggregate.By, key string) bool {
	return by == aggregate.ByThread || by == aggregate.BySource || by == aggregate.BySize && key == aggregate.MixedSize
}

// unshift drops the widening for bytes a gap in a JFR thread's samples may
// have moved between its records (ci.Stats.Spill, Excess) from the
// statistics of a whole (the total, a thread's or a source's row): no
// bytes move into or out of one, unless a filter took some of its stacks.
func unshift(s *ci.Stats, opt Options) {
	if !opt.filtered() {
		s.Spill, s.Excess = 0, 0
	}
}

// IsMerge reports whether the report is of more than one input (or one
// merge of several, or with inputs skipped): its header then says what
// was merged.
func (r *Report) IsMerge() bool {
	return r.Merged != nil && (r.Merged.Inputs > 1 || r.Merged.Skipped > 0 || len(r.Skipped) > 0)
}

// sourceGroups are the --by source rows: each input's own total, after
// the filter, for value index vi, largest first.
func (b *Builder) sourceGroups(vi, top int) (groups []*aggregate.Group, cut int, total []ci.Stats) {
	total = make([]ci.Stats, len(b.values))
	for i := range b.inputs {
		p, st := &b.inputs[i], b.inputs[i].totals
		for v := range total {
			s := p.unwidened(v)
			total[v].Merge(&s)
		}
		if st[vi].N > 0 {
			groups = append(groups, &aggregate.Group{Key: p.src.Path, Flat: st[vi], Values: st})
		}
	}
	for v := range total {
		total[v].Correlate(b.correlation())
	}
	aggregate.SortBy(groups, vi)
	if top > 0 && len(groups) > top {
		groups, cut = groups[:top], len(groups)-top
	}
	return groups, cut, total
}

// build computes the intervals of the rows, the first groups in order; cut
// more were left out.
func build(opt Options, sources []parse.Source, groups []*aggregate.Group, cut int, total ci.Stats) (*Report, error) {
	r := &Report{Confidence: opt.Confidence, Value: opt.Value, By: opt.By, Lines: opt.Lines, Sources: sources, Omitted: cut}
	if len(groups) > 0 {
		r.Rows = make([]Row, 0, len(groups)) // some 500 bytes a row: --top 0 grew them through every size
	}
	// A gap in a JFR thread's samples may move bytes between two records
	// of that thread (ci.Stats.Spill, Excess), never into or out of the
	// total or the thread's row: those need no widening for it. A
	// filtered total is a set of stacks, as a row is: bytes move in and
	// out of it.
	unshift(&total, opt)
	if total.N == 0 {
		total = NoSample(opt.Value, sources)
	}
	iv := newIntervals(opt)
	var err error
	if r.Total, err = iv.row("", nil, total, nil); err != nil {
		return nil, err
	}
	for _, g := range groups {
		var cum *ci.Stats
		if opt.By == aggregate.ByFunc {
			cum = &g.Cum
		}
		flat := g.Flat
		if whole(opt.By, g.Key) {
			unshift(&flat, opt)
		}
		rw, err := iv.row(g.Key, g.Stack, flat, cum)
		if err != nil {
			return nil, err
		}
		r.Rows = append(r.Rows, rw)
	}
	return r, nil
}

// NoSample is the statistics of a group no sample fell in (a total, a
// budget's selection) of inputs sources: where every input recorded
// every allocation (period 1), exactly nothing; with one sampling period
// R for every input and a byte value, those of no sample at R, whose
// interval bounds the bytes above (no sample falls in B bytes with
// probability exp(−B/R), whatever their sizes), as the calculator's
// "--samples 0" does. Otherwise (objects, which tiny allocations may hide
// in any number; periods that differ; no period) none: zero Stats.
func NoSample(v unbias.Value, sources []parse.Source) ci.Stats {
	if len(sources) == 0 {
		return ci.Stats{}
	}
	rate := sources[0].Rate
	for _, s := range sources {
		if s.Rate != rate {
			return ci.Stats{}
		}
	}
	switch {
	case rate == 1:
		return ci.Stats{N: 1, Complete: true, P: 1, Rate: 1}
	case rate > 1 && v.IsSpace():
		return unbias.Samples{Rate: rate}.Stats(v)
	}
	return ci.Stats{}
}

// intervals computes rows' intervals, those of statistics met before
// once (ci.Memo): a dump nothing symbolizes has hundreds of thousands of
// functions, most of one or two samples of a few sizes.
type intervals struct {
	opt  Options
	memo *ci.Memo
}

func newIntervals(opt Options) *intervals {
	return &intervals{opt: opt, memo: ci.NewMemo(opt.Method, opt.Confidence)}
}

// of is interval(s, opt), remembered.
func (iv *intervals) of(s ci.Stats) (ci.Result, error) {
	return intervalWith(s, iv.opt, iv.memo.Interval)
}

// row is the row of a group's statistics (flat, and cum for --by func).
func (iv *intervals) row(key string, stack []string, flat ci.Stats, cum *ci.Stats) (Row, error) {
	rw := Row{Key: key, Stack: stack, Stats: flat}
	var err error
	if rw.Flat, err = iv.of(flat); err != nil {
		return rw, fmt.Errorf("%s: %w", rowName(key, stack), err)
	}
	if cum != nil {
		c, err := iv.of(*cum)
		if err != nil {
			return rw, fmt.Errorf("%s: %w", rowName(key, stack), err)
		}
		rw.Cum, rw.CumStats = cumOf(c, *cum)
	}
	return rw, nil
}

// cumOf holds a row's cum interval and statistics in one allocation.
func cumOf(c ci.Result, st ci.Stats) (*ci.Result, *ci.Stats) {
	both := &struct {
		c  ci.Result
		st ci.Stats
	}{c, st}
	return &both.c, &both.st
}

// rowName names a row in an error: its key, a keyless stack row's made
// (KeylessStacks), or "total" for the total's, which has none.
func rowName(key string, stack []string) string {
	if k := aggregate.KeyOf(key, stack); k != "" {
		return k
	}
	return "total"
}

// interval is ci.Interval, with an empty group (a function that only
// appears as a caller) reported as zero.
func interval(s ci.Stats, opt Options) (ci.Result, error) {
	return intervalWith(s, opt, func(s ci.Stats) (ci.Result, error) { return ci.Interval(s, opt.Method, opt.Confidence) })
}

// intervalWith is interval with ci.Interval's results from of.
func intervalWith(s ci.Stats, opt Options, of func(ci.Stats) (ci.Result, error)) (ci.Result, error) {
	if s.N == 0 {
		return ci.Result{Method: "-"}, nil
	}
	if opt.EstimatesOnly {
		if err := s.Validate(); err != nil {
			return ci.Result{}, err
		}
		return ci.Result{Estimate: s.Estimate, Lo: s.Estimate, Hi: s.Estimate, Method: ci.MethodNone}, nil
	}
	res, err := of(s)
	if err != nil {
		return res, err
	}
	if math.IsNaN(res.Lo) || math.IsNaN(res.Hi) || math.IsNaN(res.Estimate) {
		return res, fmt.Errorf("interval method %s gave NaN for %+v", res.Method, s)
	}
	return res, nil
}

// checkValues rejects a value some profiles do not have, naming them.
func checkValues(profiles []*parse.Profile, v unbias.Value) error {
	var first error
	var lack []string
	for _, p := range profiles {
		if err := checkValue(p, v); err != nil {
			if first == nil {
				first = err
			}
			lack = append(lack, p.Source.Path)
		}
	}
	if len(lack) == 0 || len(profiles) == 1 {
		return first
	}
	const show = 10
	n, more := len(lack), ""
	if n > show {
		more = fmt.Sprintf(" and %d more", len(lack)-show)
		lack = lack[:show]
	}
	common := sharedValues(profiles)
	if len(common) == 0 {
		// Any --value leaves some out: say so once, not one input's way
		// out that another's then closes.
		return fmt.Errorf("the inputs share no value (%d of %d have no %s: %s%s); give inputs with a value in common",
			n, len(profiles), v, strings.Join(lack, ", "), more)
	}
	return fmt.Errorf("%d of %d inputs have no %s value: %s%s; use --value %s, which every input has",
		n, len(profiles), v, strings.Join(lack, ", "), more, strings.Join(common, " or "))
}

// sharedValues are the names of the values every profile has.
func sharedValues(profiles []*parse.Profile) []string {
	var out []string
	for _, v := range []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects} {
		if HasValue(profiles, v) {
			out = append(out, v.String())
		}
	}
	return out
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
	if v == unbias.AllocObjects && p.Source.Format == "jfr" {
		return fmt.Errorf("%s: JFR allocation events weigh bytes, not objects: there is no alloc_objects estimate; use --value alloc_space", p.Source.Path)
	}
	return nil
}

// DefaultByFor is what a row is when --by is not given: the allocated type for
// traces (whose stacks are often unsymbolized), the function otherwise.
func DefaultByFor(profiles []*parse.Profile) aggregate.By {
	for _, p := range profiles {
		if p.Source.Format != "nettrace" {
			return aggregate.ByFunc
		}
	}
	return aggregate.ByType
}

// DefaultValueFor is the value a report shows when --value is not given:
// the inputs' own default (unbias.DefaultValue) where they agree; else
// alloc_space if any input's default is an allocation value, else
// inuse_space. Only the two space values are collected for a default
// (NewBuilder), so an objects default shows its space value.
// Where they disagree, the report says so (defaultsDiffer): the value is
// then no input's own choice.
func DefaultValueFor(profiles []*parse.Profile) unbias.Value {
	var v unbias.Value
	for i, p := range profiles {
		d := unbias.DefaultValue(p)
		switch {
		case i == 0:
			v = d
		case d != v && (d.IsAlloc() || v.IsAlloc()):
			v = unbias.AllocSpace
		case d != v:
			v = unbias.InUseSpace
		}
	}
	switch v {
	case unbias.InUseObjects:
		return unbias.InUseSpace
	case unbias.AllocObjects:
		return unbias.AllocSpace
	}
	return v
}

// defaultsDiffer is the notice ("" for none) of inputs that name different
// default values, v the one DefaultValueFor chose for them all.
func defaultsDiffer(profiles []*parse.Profile, v unbias.Value) string {
	var named []string
	for _, p := range profiles {
		if d := unbias.DefaultValue(p).String(); !slices.Contains(named, d) {
			named = append(named, d)
		}
	}
	if len(named) < 2 {
		return ""
	}
	return fmt.Sprintf("the inputs name different values (%s): showing %s, which all of them have; --value chooses", strings.Join(named, ", "), v)
}
