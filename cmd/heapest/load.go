package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/fetch"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
)

// inputOptions are the flags every command that reads profiles shares.
type inputOptions struct {
	JemallocUnbias   unbiasMode
	Rate             float64
	KeepGoing        bool
	Binary           string
	SymbolPath       []string
	KeepAllocator    bool
	Jobs             int
	AllowDuplicates  bool
	LatestPerProcess bool
	// Lines names frames by source line (parse.Options.Lines).
	Lines           bool
	NoInlines       bool
	MaxDecompressed float64
	// Timeout bounds fetching each URL input (0: fetch's default).
	Timeout time.Duration
	// Quiet leaves standard error to errors (see chatter).
	Quiet bool
}

// quietHelp is --quiet's help: what it silences, and what it does not.
const quietHelp = "standard error carries errors only: no progress line, warnings or notes " +
	"(such as which inputs --keep-going skipped); JSON output still carries the warnings (CSV has no place for them)"

// chatter is where progress, warnings and notes go: standard error, or
// nowhere with --quiet. Errors never go here: main prints them.
func (o *inputOptions) chatter(stderr io.Writer) io.Writer {
	if o.Quiet {
		return io.Discard
	}
	return stderr
}

// warnOn says msg ("" for none) on standard error (unless --quiet) and
// adds it to r's warnings, which machine output carries.
func (o *inputOptions) warnOn(stderr io.Writer, r *report.Report, msg string) {
	if msg == "" {
		return
	}
	r.Warnings = append(r.Warnings, msg)
	fmt.Fprintf(o.chatter(stderr), "heapest: warning: %s\n", msg)
}

// warnNotices says on standard error (unless --quiet) what reports say
// of themselves: filters or --hide that match nothing, a grouping their
// inputs have no key of. Both sides of a comparison say it once.
func (o *inputOptions) warnNotices(stderr io.Writer, reports ...*report.Report) {
	said := map[string]bool{}
	for _, r := range reports {
		if r == nil { // no baseline
			continue
		}
		for _, w := range r.Notices {
			if !said[w] {
				said[w] = true
				fmt.Fprintf(o.chatter(stderr), "heapest: warning: %s\n", w)
			}
		}
	}
}

func (o *inputOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.JemallocUnbias = unbiasAuto
	enumVar(cmd, &o.JemallocUnbias, "jemalloc-unbias", unbiasChoices, false, "how jemalloc 5.3 dumps were written: auto (detect), on (prof_unbias encoding) or off (raw counts)")
	sizeVar(cmd, &o.Rate, "rate", 1, "a sampling period", "sampling period `R` in bytes or with a unit (512KiB), for inputs that lack it (tcmalloc protos, sampled memray captures)")
	f.BoolVar(&o.KeepGoing, "keep-going", false, "one input: salvage what precedes a truncation or a bad record, with a warning; several: skip unreadable inputs and list them")
	f.StringVar(&o.Binary, "binary", "", "the profiled program's executable `PATH`, for dumps taken on another machine")
	f.StringSliceVar(&o.SymbolPath, "symbol-path", nil, "directories searched for the mapped executables and libraries and their debug files (`DIR`,...)")
	f.BoolVar(&o.KeepAllocator, "keep-allocator-frames", false, "keep malloc/jemalloc/tcmalloc frames at the top of stacks, and the stacks of tcmalloc's own memory (HEAP_PROFILE_MMAP, left out otherwise)")
	f.IntVar(&o.Jobs, "jobs", 0, "read up to `N` inputs at once (0: one per CPU)")
	f.BoolVar(&o.AllowDuplicates, "allow-duplicates", false, "sum inputs that are dumps of one process or recording (they are refused by default), their samples taken as correlated")
	sizeVar(cmd, &o.MaxDecompressed, "max-decompressed", 1, "a size", "bound on what a gzipped input may decompress to, and on the body a URL input sends (default 512MiB): a gzip bomb stops there")
	f.DurationVar(&o.Timeout, "timeout", 0, "URL inputs: give up on a server that has not sent the whole profile within this `duration` (default 60s plus the URL's seconds=)")
	f.BoolVar(&o.LatestPerProcess, "latest-per-process", false, "of the dumps of one process or JFR recording, keep only the newest (by jemalloc's and gperftools' file names, a pprof profile's mappings and time, or the dump that holds the chunks of the recording's others)")
	f.BoolVar(&o.Lines, "lines", false, "name frames by source line, \"func file:line\", as pprof's -lines does: rows by func are then lines (from the profile, or the binary's DWARF for jemalloc and gperftools dumps; JFR has lines but no files, .NET traces neither)")
	f.BoolVar(&o.NoInlines, "no-inlines", false, "name each address of a jemalloc or gperftools dump by its function alone, as pprof's -noinlines: by default the calls the compiler inlined there are frames of their own (from the binary's DWARF; C, C++ and Rust), as jeprof shows them")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, quietHelp)
}

// inputs are the paths a command's arguments name (see fleet.Expand);
// listed says "-" lists paths on standard input rather than being one
// profile.
func (o *inputOptions) inputs(cmd *cobra.Command, args []string, listed bool) ([]string, error) {
	switch {
	case o.Jobs < 0:
		return nil, usageError{fmt.Errorf("--jobs %d: want 1 or more (0: one per CPU)", o.Jobs)}
	case o.Jobs == 0:
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.Timeout < 0 {
		return nil, usageError{fmt.Errorf("--timeout %v: want a positive duration (0: the default)", o.Timeout)}
	}
	if o.AllowDuplicates && o.LatestPerProcess {
		return nil, usageError{fmt.Errorf("--allow-duplicates and --latest-per-process exclude each other")}
	}
	for _, dir := range o.SymbolPath {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, usageError{fmt.Errorf("--symbol-path %s: not a directory", dir)}
		}
	}
	paths, err := fleet.Expand(args, cmd.InOrStdin(), listed)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no input: standard input listed no path")
	}
	if err := outputsApart(cmd, paths); err != nil {
		return nil, err
	}
	for _, p := range paths {
		// A URL heapest cannot fetch fails before any input is read.
		if _, err := fetch.Check(p); fetch.IsURL(p) && err != nil {
			return nil, err
		}
	}
	return o.guardNames(o.chatter(cmd.ErrOrStderr()), paths)
}

// guardNames applies the same-process rule to what file names say,
// before anything is read.
func (o *inputOptions) guardNames(stderr io.Writer, paths []string) ([]string, error) {
	switch {
	case o.AllowDuplicates || len(paths) < 2:
		return paths, nil
	case o.LatestPerProcess:
		kept, dropped := fleet.Latest(paths)
		if len(dropped) > 0 {
			fmt.Fprintf(stderr, "heapest: --latest-per-process: left out %d older dump(s) of the same processes\n", len(dropped))
		}
		return kept, nil
	}
	if g := fleet.NameDuplicates(paths); len(g) > 0 {
		return nil, &fleet.DuplicateError{Groups: g, How: "file names (jemalloc's prefix.pid.seq, gperftools' prefix.seq)"}
	}
	return paths, nil
}

// input is how inputs are read with these flags; several says a merge
// is read (a bad input is then skipped whole, not salvaged).
func (o *inputOptions) input(several bool) report.Input {
	return report.Input{
		Parse: parse.Options{JemallocUnbias: string(o.JemallocUnbias), Rate: o.Rate, KeepGoing: o.KeepGoing && !several,
			MaxDecompressed: int64(o.MaxDecompressed), Lines: o.Lines},
		Symbolize: symbolize.Options{Binary: o.Binary, SymbolPath: o.SymbolPath, DropAllocator: !o.KeepAllocator, Lines: o.Lines, NoInlines: o.NoInlines},
		Fetch:     fetch.Options{Timeout: o.Timeout, MaxBytes: int64(o.MaxDecompressed)},
	}
}

// load reads each input into b: its records stream from the parser into
// the pipeline, then its frames are named. Warnings and, on a terminal,
// progress go to stderr, unless --quiet.
func (o *inputOptions) load(b *report.Builder, paths []string, stderr io.Writer) error {
	stderr = o.chatter(stderr)
	if len(paths) == 1 {
		in := o.input(false)
		var prog *readProgress
		if !o.Quiet {
			if prog = newReadProgress(stderr, paths[0]); prog != nil {
				in.Watch = prog.watch
			}
		}
		_, warns, err := b.AddFile(paths[0], in)
		prog.finish()
		if err != nil {
			return salvageHint(err, o.KeepGoing)
		}
		for _, w := range warns {
			fmt.Fprintf(stderr, "heapest: warning: %s: %s\n", paths[0], w)
		}
		return nil
	}
	older, err := o.loadSeveral(b, paths, stderr)
	if err != nil || older == nil {
		return err
	}
	if err := readAgain(stderr, paths, len(older)); err != nil {
		return err
	}
	return o.load(b, b.Restart(older), stderr)
}

// read makes a builder of ropt (SingleInput set from paths) and reads
// paths into it: how every command reads its inputs.
func (o *inputOptions) read(ropt report.Options, paths []string, stderr io.Writer) (*report.Builder, error) {
	b := report.NewBuilder(withSingle(ropt, paths))
	return b, o.load(b, paths, stderr)
}

// onceOnly reports whether the inputs can be read only once: standard
// input is gone, and a URL may answer with another profile the second
// time.
func onceOnly(paths []string) bool {
	return slices.Contains(paths, "-") || slices.ContainsFunc(paths, fetch.IsURL)
}

// readAgain says that --latest-per-process left out n older dumps of
// processes or recordings that only their contents told apart, known only
// now that the inputs were read: those kept are read again, which
// standard input and URLs cannot be.
func readAgain(stderr io.Writer, paths []string, n int) error {
	for _, p := range paths {
		if p == "-" || fetch.IsURL(p) {
			name := p
			if p == "-" {
				name = "<stdin>" // as parse/formats names it
			}
			return fmt.Errorf("--latest-per-process: some inputs are dumps of one process or recording by their contents, which tell the newest only once all are read; the ones kept are then read again, and %s cannot be: save it to a file first", name)
		}
	}
	fmt.Fprintf(stderr, "heapest: --latest-per-process: left out %d older dump(s) of the same processes or recordings (by their contents)\n", n)
	return nil
}

// loadSeveral is load of two inputs or more. older are the inputs
// --latest-per-process leaves out that only their contents told apart
// (fleet.DuplicateError.Older): b is then to be restarted without them,
// and the warnings of this reading are dropped (the inputs kept give
// theirs again).
func (o *inputOptions) loadSeveral(b *report.Builder, paths []string, stderr io.Writer) (older []int, err error) {
	gc := newMergeGC()
	defer gc.restore()
	warned := newWarnings(stderr)
	prog := &progress{}
	if !o.Quiet {
		prog = newProgress(stderr, len(paths))
	}
	done := func(path string, size int64) { prog.done(path, size) }
	before := len(b.Skipped()) // those of a first reading, already told
	err = b.AddFiles(paths, o.input(true), report.FilesOptions{
		Jobs: o.Jobs, KeepGoing: o.KeepGoing, Done: done, Warn: warned.add})
	prog.finish()
	if err != nil {
		warned.flush()
		if fleet.OutOfFiles(err) {
			return nil, fmt.Errorf("%w (reading --jobs %d inputs at a time: give fewer, or raise the limit on open files, ulimit -n)", err, o.Jobs)
		}
		// An input of several stopped them all: a directory walked may
		// hold files that are no profiles.
		return nil, fmt.Errorf("%w (one of %d inputs: --keep-going skips those that cannot be read, and lists them)", err, len(paths))
	}
	if skipped := b.Skipped()[before:]; len(skipped) > 0 {
		fmt.Fprintln(stderr, "heapest:", skippedText(len(paths), skipped))
	}
	dup := b.Duplicates()
	if dup != nil && o.LatestPerProcess {
		if older, ok := dup.Older(); ok {
			return older, nil
		}
	}
	warned.flush()
	if dup != nil && !o.AllowDuplicates {
		return nil, dup
	}
	return nil, nil
}

// mergeGC paces the garbage collector during a merge. A merge's live heap
// is its groups, small beside what each input allocates and drops:
// collecting at every doubling of it (GOGC=100) spent a third of the time.
// It collects at five times the live heap instead, but no later than at
// twice it plus 64 MiB: a soft limit set again after every collection,
// from the live heap that collection found. The peak then stays near flat
// in the number of inputs, and a merge whose live heap outgrows the limit
// (two inputs of a million stacks each) is not made to collect without
// pause: with the limit raised only every 32 inputs, merging a 6 MB and a
// 60 MB Go heap profile took 15 s of CPU instead of 1.5. A GOGC or
// GOMEMLIMIT in the environment is left alone.
type mergeGC struct {
	on      bool
	percent int
	limit   int64
	// mu orders restore and the cleanups: done is set by restore, and
	// no collection after it sets a limit.
	mu     sync.Mutex
	done   bool
	sample []metrics.Sample
}

func newMergeGC() *mergeGC {
	quiet.stop() // a merge paces its own collections
	g := &mergeGC{on: os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == ""}
	if g.on {
		g.percent = debug.SetGCPercent(400)
		g.limit = debug.SetMemoryLimit(-1)
		g.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		debug.SetMemoryLimit(mergeHeadroom)
		g.arm()
	}
	return g
}

// mergeHeadroom is what the soft limit allows above twice the live heap.
const mergeHeadroom = 64 << 20

// arm has collected called after the next collection: it finds a new
// sentinel unreachable and runs its cleanup. (64 bytes: the tiny
// allocator could keep a smaller one alive with its neighbours.)
func (g *mergeGC) arm() {
	runtime.AddCleanup(new([64]byte), func(g *mergeGC) { g.collected() }, g)
}

// collected sets the soft limit from the live heap the collection just
// measured, and waits for the next one, until restore.
func (g *mergeGC) collected() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	metrics.Read(g.sample)
	if s := g.sample[0]; s.Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(2*int64(s.Value.Uint64()) + mergeHeadroom)
	}
	g.arm()
}

// restore puts back the pacing newMergeGC found.
func (g *mergeGC) restore() {
	if g.on {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.done = true
		debug.SetGCPercent(g.percent)
		debug.SetMemoryLimit(g.limit)
	}
}

// quietStart lets a command run without collecting while its heap is
// small. The runtime's default pacing collects at 4 MiB of heap and at
// every doubling after, a cost that does not shrink with the input: 6 ms
// of the 39 ms of reading a 10 MB trace. Below 32 MiB nothing is collected
// (collection off, under a soft limit of 32 MiB); the first collection,
// which the limit starts, restores the default pacing, so that a large
// input's heap grows as it did. A GOGC or GOMEMLIMIT in the environment
// is left alone.
type quietStart struct {
	mu      sync.Mutex
	on      bool
	percent int
	limit   int64
}

// quiet is the process's: collection is paced process-wide.
var quiet quietStart

// quietHeap is the heap below which nothing is collected.
const quietHeap = 32 << 20

// start turns collection off until the heap reaches quietHeap.
func (q *quietStart) start() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.on {
		return
	}
	q.on = true
	q.percent = debug.SetGCPercent(-1)
	q.limit = debug.SetMemoryLimit(quietHeap)
	// The first collection finds the sentinel unreachable and runs the
	// cleanup, which restores the pacing. (64 bytes: the tiny allocator
	// could keep a smaller one alive with its neighbours.)
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(q *quietStart) { q.stop() }, q)
}

// stop restores the pacing start found, if start changed it.
func (q *quietStart) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.on {
		q.on = false
		debug.SetGCPercent(q.percent)
		debug.SetMemoryLimit(q.limit)
	}
}

// salvageHint says, of a single input that is truncated, how to read what
// precedes the cut, unless nothing of the input can be read without what
// the cut lost (parse.Error.Whole); with --keep-going given (keptGoing),
// why it kept nothing. (In a merge, --keep-going skips such an input
// whole.)
func salvageHint(err error, keptGoing bool) error {
	var pe *parse.Error
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "truncated") {
		return err
	}
	switch {
	case keptGoing:
		return fmt.Errorf("%w (--keep-going: nothing whole precedes it to keep)", err)
	case pe.Whole:
		return err
	}
	return fmt.Errorf("%w (--keep-going reads what precedes it)", err)
}

// skippedText says what a --keep-going merge left out.
func skippedText(total int, skipped []report.Skip) string {
	var b strings.Builder
	fmt.Fprintf(&b, "merged %d of %d inputs; skipped:", total-len(skipped), total)
	for _, s := range skipped {
		fmt.Fprintf(&b, "\n  %v", s.Err)
	}
	return b.String()
}

// warnings prints the warnings of many inputs, saying each distinct
// warning once with the number of inputs it applies to: a fleet of dumps
// of one binary would otherwise repeat the same line a thousand times.
// Warnings that differ only in their counts ("33 addresses outside
// every function symbol" in one dump, "47" in the next) are one: the
// first is said, and how many others were like it.
type warnings struct {
	w     io.Writer
	order []string          // shapes, in the order first seen
	first map[string]string // shape -> its first warning
	path  map[string]string // shape -> the input of its first warning
	count map[string]int
	same  map[string]bool // shape -> every warning of it was the first's text
}

func newWarnings(w io.Writer) *warnings {
	return &warnings{w: w, first: map[string]string{}, path: map[string]string{}, count: map[string]int{}, same: map[string]bool{}}
}

func (ws *warnings) add(path string, list []string) {
	for _, w := range list {
		k := warningShape(w)
		if ws.count[k] == 0 {
			ws.order = append(ws.order, k)
			ws.first[k], ws.path[k], ws.same[k] = w, path, true
		} else if w != ws.first[k] {
			ws.same[k] = false
		}
		ws.count[k]++
	}
}

func (ws *warnings) flush() {
	for _, k := range ws.order {
		more := ""
		switch n := ws.count[k]; {
		case n > 1 && ws.same[k]:
			more = fmt.Sprintf(" (and %d more)", n-1)
		case n > 1:
			more = fmt.Sprintf(" (and %d more like it, with other counts)", n-1)
		}
		fmt.Fprintf(ws.w, "heapest: warning: %s%s: %s\n", ws.path[k], more, ws.first[k])
	}
}

// warningShape is a warning with its standalone numbers (words of digits,
// with the commas, points and percent sign of a count) made #: numbers
// within a word, as a library's version or a path has, stay.
func warningShape(w string) string {
	words := strings.Split(w, " ")
	for i, word := range words {
		core := strings.TrimRight(strings.TrimLeft(word, "(["), ")],;:%")
		if core != "" && strings.Trim(core, "0123456789,.") == "" && strings.ContainsAny(core, "0123456789") {
			words[i] = strings.Replace(word, core, "#", 1)
			if i+1 < len(words) {
				words[i+1] = singular(words[i+1]) // "1 address", "3 addresses"
			}
		}
	}
	return strings.Join(words, " ")
}

// singular is the English singular of a counted noun: addresses →
// address, samples → sample.
func singular(w string) string {
	if end := strings.TrimRight(w, ",;:.)"); end != w {
		return singular(end) + w[len(end):]
	}
	if strings.HasSuffix(w, "ss") {
		return w // address, process: singular already
	}
	if s, ok := strings.CutSuffix(w, "es"); ok {
		for _, end := range []string{"ss", "sh", "ch", "x"} {
			if strings.HasSuffix(s, end) {
				return s
			}
		}
	}
	return strings.TrimSuffix(w, "s")
}
