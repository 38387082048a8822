package report

import (
	"errors"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/parse"
)

// Skip is an input left out of a merge because it could not be read.
type Skip struct {
	Path string
	Err  error
}

// FilesOptions steer AddFiles.
type FilesOptions struct {
	// Jobs is how many inputs are read at once (≤ 0: one).
	Jobs int
	// KeepGoing skips an input that cannot be read, recording it (Skipped),
	// instead of stopping at it.
	KeepGoing bool
	// Done, when set, is called once per input, in the inputs' order, after
	// it was joined or skipped, with its size in bytes (0 when unknown).
	Done func(path string, size int64)
	// Warn, when set, receives each input's warnings, in the inputs' order.
	Warn func(path string, warnings []string)
}

// loaded is one input read into its own table, not yet joined.
type loaded struct {
	p     *parse.Profile
	t     *aggregate.Table
	warns []string
	size  int64
	err   error
}

// AddFiles reads paths with opt.Jobs workers and joins them in the order
// of paths (see join). At most a few inputs per worker are held between
// being read and being joined, so memory stays that of the distinct
// groups, however many inputs there are. Without opt.KeepGoing the first
// input (in order) that cannot be read stops it, and its error is
// returned; with it, such inputs are skipped and listed by Skipped.
func (b *Builder) AddFiles(paths []string, in Input, opt FilesOptions) error {
	jobs := max(opt.Jobs, 1)
	// window bounds the inputs read ahead of the one being joined; input
	// i's result goes to slot i mod its size, free again once the input
	// that used it before was joined.
	window := make(chan struct{}, 2*jobs)
	results := make([]chan loaded, cap(window))
	for i := range results {
		results[i] = make(chan loaded, 1)
	}
	stop := make(chan struct{})
	feed := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range feed {
				results[i%len(results)] <- b.loadFile(paths[i], in)
			}
		}()
	}
	go func() {
		defer close(feed)
		for i := range paths {
			select {
			case window <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case feed <- i:
			case <-stop:
				return
			}
		}
	}()
	err := b.joinInOrder(paths, results, window, opt)
	close(stop)
	wg.Wait()
	return err
}

// joinInOrder joins the loaded inputs in order as they arrive.
func (b *Builder) joinInOrder(paths []string, results []chan loaded, window chan struct{}, opt FilesOptions) error {
	for i, path := range paths {
		r := <-results[i%len(results)]
		<-window
		if opt.Warn != nil && len(r.warns) > 0 {
			opt.Warn(path, r.warns)
		}
		switch {
		case r.err != nil && (!opt.KeepGoing || fleet.OutOfFiles(r.err)):
			return r.err
		case r.err != nil:
			b.skipped = append(b.skipped, Skip{Path: path, Err: r.err})
		default:
			b.join(r.p, r.t)
			b.inputs[len(b.inputs)-1].warnings = r.warns
		}
		if opt.Done != nil {
			opt.Done(path, r.size)
		}
	}
	return nil
}

// loadFile is AddFile's reading, into a table of the input's own.
func (b *Builder) loadFile(path string, in Input) loaded {
	var l loaded
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		l.size = st.Size()
	}
	l.p, l.t, l.warns, l.err = b.loadInput(fileReader(path, in), in, l.size)
	return l
}

// Skipped lists the inputs AddFiles left out, in order.
func (b *Builder) Skipped() []Skip { return b.skipped }

// Duplicates returns the refusal of the joined inputs that are dumps of
// one process by what their contents say (fleet.MapsProcess,
// fleet.RecordingProcess), in groups, each in input order; nil when there are
// none. Names are checked before reading (fleet.NameDuplicates).
func (b *Builder) Duplicates() *fleet.DuplicateError {
	live := b.readsLive()
	keys := func(i int) []string { return b.identities(i, live) }
	if e := fleet.ContentsDuplicates(b.paths(), keys, func(i int) int64 { return b.inputs[i].src.Time }); e != nil {
		return e
	}
	return fleet.HeldDuplicates(b.paths(), keys, func(i int) []string {
		if m := b.inputs[i].merged; m != nil && m.Inputs > 1 {
			return fleet.Live(m.Held, live)
		}
		return nil
	})
}

// Identity is what Duplicates compares of the first input b joined (its
// identities, fleet.Keys, and when it was taken, parse.Source.Time), for
// inputs read each into a Builder of its own (Parquet rows, input by
// input).
func (b *Builder) Identity() (keys []string, time int64) {
	return b.identities(0, b.readsLive()), b.inputs[0].src.Time
}

// Restart drops what b joined, keeping the inputs it skipped, and
// returns the joined inputs' paths but those of drop (indices as
// Duplicates gives them), to be read again: --latest-per-process of
// dumps of one process that their contents tell apart, read before that
// was known. One input left is read as one (Options.SingleInput).
func (b *Builder) Restart(drop []int) (keep []string) {
	for i, p := range b.paths() {
		if !slices.Contains(drop, i) {
			keep = append(keep, p)
		}
	}
	opt := b.opt
	opt.SingleInput = len(keep) == 1
	skipped := b.skipped
	*b = *NewBuilder(opt)
	b.skipped = skipped
	return keep
}

// paths are the joined inputs' paths, in order.
func (b *Builder) paths() []string {
	paths := make([]string, len(b.inputs))
	for i := range b.inputs {
		paths[i] = b.inputs[i].src.Path
	}
	return paths
}

// readsLive reports whether what b makes reads a live (in-use) value of
// the joined inputs: the report's value, or every value for pprof output.
func (b *Builder) readsLive() bool {
	switch {
	case b.opt.AllValues:
		return true
	case b.opt.DefaultValue:
		return !DefaultValueFor(b.profiles()).IsAlloc()
	}
	return !b.opt.Value.IsAlloc()
}

// merged summarizes the joined inputs, and the inputs of those that are
// merges themselves (see Report.Merged).
func (b *Builder) merged() *parse.Merged {
	m := &parse.Merged{Formats: map[string]int{}, Skipped: len(b.skipped)}
	builds := map[string]bool{}
	procs := map[string]bool{}
	for i := range b.inputs {
		p := b.inputs[i].profile()
		if o := p.Merged; o != nil {
			m.Inputs += o.Inputs
			m.Skipped += o.Skipped
			m.SkippedWhy = append(m.SkippedWhy, o.SkippedWhy...)
			m.Processes += o.Processes
			for f, n := range o.Formats {
				m.Formats[f] += n
			}
			addRate(m, o.RateMin)
			addRate(m, o.RateMax)
			for _, bld := range o.Builds {
				builds[bld] = true
			}
			continue
		}
		m.Inputs++
		m.Formats[p.Source.Format]++
		addRate(m, p.Source.Rate)
		if p.Source.Build != "" {
			builds[p.Source.Build] = true
		}
		if k := p.Source.Process; k == "" || !procs[k] {
			procs[k] = k != ""
			m.Processes++
		}
	}
	for bld := range builds {
		m.Builds = append(m.Builds, bld)
	}
	sort.Strings(m.Builds)
	// The families, with those underneath merges, and the widening the
	// statistics carry (settle found them): a merge of merges combines
	// them (fleet.FamiliesOf).
	if len(b.families.Counts) > 0 {
		m.Families = b.families.Counts
	}
	if k := b.correlation(); k > 1 {
		m.Correlated = k
	}
	if len(b.inputs) == 1 && (b.inputs[0].merged == nil || b.inputs[0].merged.Inputs == 1) {
		m.Keys = b.identities(0, true)
	} else {
		m.Held = b.held()
	}
	return m
}

// held are the identities of every input underneath the joined ones
// (parse.Merged.Held), sorted, each once; a heap's only for an input with
// in-use values, which are all a heap's identity guards.
func (b *Builder) held() []string {
	set := map[string]bool{}
	for i := range b.inputs {
		keys := b.identities(i, b.inputs[i].profile().HasInUse)
		if m := b.inputs[i].merged; m != nil && m.Inputs > 1 {
			keys = m.Held
		}
		for _, k := range keys {
			if k != "" {
				set[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// identities are input i's identities as the guard against duplicates and
// the families compare them (fleet.Keys, its heap's when live): those a
// merge of one input carries for it (parse.Merged.Keys), else its own.
func (b *Builder) identities(i int, live bool) []string {
	in := &b.inputs[i]
	if m := in.merged; m != nil && m.Inputs == 1 && len(m.Keys) > 0 {
		return fleet.Live(m.Keys, live)
	}
	return fleet.Keys(&in.src, live)
}

func addRate(m *parse.Merged, r float64) {
	if r <= 0 {
		return
	}
	if m.RateMin == 0 || r < m.RateMin {
		m.RateMin = r
	}
	m.RateMax = max(m.RateMax, r)
}

// errNoInput is returned when a merge had nothing left to merge.
var errNoInput = errors.New("no input could be read")
