package fleet

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// jemallocName matches jemalloc's dump file names,
// <prefix>.<pid>.<seq>.<i|m|u|f>[<iseq>].heap (prof_dump_filename in
// jemalloc's src/prof_sys.c), possibly gzip-compressed.
var jemallocName = regexp.MustCompile(`^(.*)\.(\d+)\.(\d+)\.([imuf])(\d*)\.heap(\.gz)?$`)

// gperftoolsName matches the gperftools heap profiler's dump file names,
// <prefix>.<seq, %04d>.heap (heap-profiler.cc): one process's dumps in
// sequence (a process of its own takes a prefix of its own, or its dumps
// would overwrite another's).
var gperftoolsName = regexp.MustCompile(`^(.*)\.(\d{4,})\.heap(\.gz)?$`)

// NameProcess returns the process a dump's file name says it came from
// ("DIR/PREFIX.PID" for jemalloc's names: dumps of one process land in
// one directory with one prefix; the same pid in two directories is two
// hosts or two runs; "DIR/PREFIX" for gperftools', which name no pid) and
// its place in that process's sequence of dumps (larger: newer). ok is
// false for names that say nothing.
func NameProcess(path string) (process string, seq Seq, ok bool) {
	m := jemallocName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return gperftoolsProcess(path)
	}
	s, err1 := strconv.ParseUint(m[3], 10, 64)
	var is uint64
	var err2 error
	if m[5] != "" {
		is, err2 = strconv.ParseUint(m[5], 10, 64)
	}
	if err1 != nil || err2 != nil {
		return "", Seq{}, false
	}
	return filepath.Join(filepath.Dir(path), m[1]+"."+m[2]), Seq{Major: s, Minor: is}, true
}

// gperftoolsProcess is NameProcess for gperftools' names: DIR/PREFIX is
// the process.
func gperftoolsProcess(path string) (process string, seq Seq, ok bool) {
	m := gperftoolsName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", Seq{}, false
	}
	s, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		return "", Seq{}, false
	}
	return filepath.Join(filepath.Dir(path), m[1]), Seq{Major: s}, true
}

// Seq orders the dumps of one process: jemalloc's global dump sequence,
// then the per-kind one.
type Seq struct{ Major, Minor uint64 }

// Less reports whether s was dumped before o.
func (s Seq) Less(o Seq) bool {
	return s.Major < o.Major || s.Major == o.Major && s.Minor < o.Minor
}

// randomized is the lowest address taken as placed by address-space
// layout randomisation: shared libraries and position-independent
// executables land far above it (0x55…, 0x7f…), non-PIE executables far
// below (0x400000).
const randomized = 1 << 40

// MapsProcess returns an identity of the process whose /proc/<pid>/maps
// copy (a jemalloc dump's MAPPED_LIBRARIES) is text: a hash of the lines
// that map a file at a randomized address. With address-space layout
// randomisation two processes never load their libraries at the same
// addresses, unless one was forked from the other without exec (see
// NamedProcess), while one process keeps them where they are from dump to
// dump (its [heap] and anonymous lines change; those are left out). ""
// when no file is mapped at a randomized address (a static, non-PIE
// program): nothing then tells processes apart.
func MapsProcess(text []byte) string {
	h := fnv.New64a()
	n := 0
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		i := bytes.IndexByte(line, '/')
		if i < 0 || !bytes.Contains(line[:i], []byte(" ")) {
			continue
		}
		dash := bytes.IndexByte(line, '-')
		start, err := strconv.ParseUint(string(bytes.TrimSpace(line[:max(dash, 0)])), 16, 64)
		if dash < 0 || err != nil || start < randomized {
			continue
		}
		h.Write(bytes.TrimSpace(line))
		h.Write([]byte{'\n'})
		n++
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("maps:%016x", h.Sum64())
}

// NamedProcess is the identity of the process a dump's contents say it
// came from (MapsProcess, MappingsProcess), told apart by the pid in its
// file name when the name has one: processes forked from one parent
// without exec (the workers of a pre-fork server, a shell's subshells)
// keep its mappings at the very same addresses, and only their pids tell
// them apart. A dump copied to two directories keeps its pid, and stays
// one process. "" when the contents say nothing.
func NamedProcess(contents, path string) string {
	if contents == "" {
		return ""
	}
	m := jemallocName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return contents
	}
	return contents + pidMark + m[2]
}

// pidMark separates a NamedProcess's contents from its pid.
const pidMark = " pid:"

// Family is the identity a process shares with the processes forked from
// its parent without exec (its NamedProcess without the pid): their
// samples may be correlated (see ci.Stats.Correlate).
func Family(process string) string {
	k, _, _ := strings.Cut(process, pidMark)
	return k
}

// Families are the process families of a set of inputs, merges among
// them counted by the inputs underneath.
type Families struct {
	// Counts are the inputs per family, by its identity (Family).
	Counts map[string]int
	// K is the most inputs of one family (0 for none), whose samples may
	// be correlated with one another; Paths are the given inputs that
	// hold some of them, in input order (nil when K < 2).
	K     int
	Paths []string
}

// FamiliesOf finds the families of the inputs: processes forked from one
// parent without exec, told apart by their pids only (NamedProcess),
// whose allocators all sample on from the parent's random state, and
// dumps of one process or recording, which hold the same samples. keys
// gives an input's identities (Keys), "" for unknown ones; merged gives a
// merge's Families counts (nil for an input that is no merge): a merge's
// family counts with the inputs of that family beside it, so that a merge
// of merges finds a family its parts split.
func FamiliesOf(paths []string, keys func(i int) []string, merged func(i int) map[string]int) Families {
	f := Families{Counts: map[string]int{}}
	holders := map[string][]int{} // the inputs that hold some of each family
	label := rawFamilies(len(paths), keys, merged, f.Counts, holders)
	for i := range paths {
		counts := merged(i)
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			if k == "" {
				continue // no family known
			}
			l := k
			if x, ok := label[k]; ok {
				l = x
			}
			f.Counts[l] += counts[k]
			if h := holders[l]; len(h) == 0 || h[len(h)-1] != i {
				holders[l] = append(h, i)
			}
		}
	}
	largest, first := "", len(paths)
	for l, n := range f.Counts {
		h := slices.Min(holders[l])
		if n > f.K || n == f.K && h < first {
			largest, first, f.K = l, h, n
		}
	}
	if f.K > 1 {
		for _, i := range slices.Sorted(slices.Values(holders[largest])) {
			f.Paths = append(f.Paths, paths[i])
		}
	}
	return f
}

// rawFamilies counts the families of the n inputs that are no merges
// (merged(i) nil) into counts and holders, each family under the first
// key of its first input, inputs linked through any key they share (a JFR
// dump's chunks); it returns the label of every key they have.
func rawFamilies(n int, keys func(i int) []string, merged func(i int) map[string]int, counts map[string]int, holders map[string][]int) map[string]string {
	var raw []int
	for i := range n {
		if merged(i) == nil {
			raw = append(raw, i)
		}
	}
	family := func(i int) []string {
		ks := slices.Clone(keys(i))
		for j, k := range ks {
			ks[j] = Family(k)
		}
		return ks
	}
	groups, labels := link(len(raw), func(j int) []string { return family(raw[j]) })
	label := map[string]string{}
	for g, members := range groups {
		if labels[g] == "" {
			continue
		}
		for _, j := range members {
			for _, k := range family(raw[j]) {
				if k != "" {
					label[k] = labels[g]
				}
			}
			holders[labels[g]] = append(holders[labels[g]], raw[j])
		}
		counts[labels[g]] += len(members)
	}
	return label
}

// Correlated is FamiliesOf's Paths for inputs none of which is a merge.
func Correlated(paths []string, keys func(i int) []string) []string {
	return FamiliesOf(paths, keys, func(int) map[string]int { return nil }).Paths
}

// RecordingProcess is the identity of a recording of format as the input
// tells it apart (parse.Source.Recording): a JFR recording by its first
// chunk's start, in nanoseconds of the wall clock (every dump of one
// recording begins with that chunk, and two recordings, of one JVM or of
// two, start at different nanoseconds); a .NET trace by its process id
// and the machine's counter at its start (copies of one trace share
// them, two traces never do); Go debug=1 text by its process's last GC
// (copies share it, and snapshots between two collections). "" for no
// recording.
func RecordingProcess(format, recording string) string {
	if recording == "" {
		return ""
	}
	return format + ":" + recording
}

// The prefixes of RecordingProcess's identities, by format, and of a
// heap's (Keys).
const (
	jfrPrefix      = "jfr:"
	nettracePrefix = "nettrace:"
	goTextPrefix   = "pprof-go:"
	heapPrefix     = "heap:"
)

// ContentsDuplicates is the refusal of the inputs that are dumps of one
// process or recording by their contents (keysOf gives an input's
// identities, Keys; inputs that share one are one): the groups, how they
// were told apart, and what to do about it; nil when there are none.
// timeOf gives when an input was taken (parse.Source.Time, 0 where it
// does not say), which tells the newest of dumps of one process apart;
// of dumps of one recording the last holds the chunks of the others
// (DuplicateError.Older).
func ContentsDuplicates(paths []string, keysOf func(i int) []string, timeOf func(i int) int64) *DuplicateError {
	all, _ := link(len(paths), keysOf)
	var e *DuplicateError
	decided := true
	var older []int
	for _, m := range all {
		if len(m) < 2 {
			continue
		}
		g := contentsKind(sharedKeys(m, keysOf))
		switch {
		case e == nil:
			e = g
		case e.Kind != g.Kind || e.How != g.How:
			e.Kind, e.How = DumpsOfOneProcess, mixedHow
		}
		e.Groups = append(e.Groups, pathsOf(paths, m))
		o := olderOf(g.Kind, m, keysOf, timeOf)
		decided = decided && o != nil
		older = append(older, o...)
	}
	if e == nil {
		return nil
	}
	e.stuck = !decided
	if decided {
		e.older = slices.Sorted(slices.Values(older))
	}
	return e
}

// HeldDuplicates is the refusal of merges given beside inputs they hold
// already (by the identities a merge records, parse.Merged.Held): each
// merge that holds some of the other inputs, or of the inputs of another
// merge, with them, in input order; nil when there are none. keysOf gives
// an input's identities (Keys), heldOf a merge's held ones (nil for an
// input that is no merge of several).
func HeldDuplicates(paths []string, keysOf, heldOf func(i int) []string) *DuplicateError {
	var e *DuplicateError
	for i := range paths {
		held := heldOf(i)
		if len(held) == 0 {
			continue
		}
		in := map[string]bool{}
		for _, k := range held {
			in[k] = true
		}
		var group []int // the merge and what it shares, in input order
		for j := range paths {
			others := keysOf(j)
			if h := heldOf(j); len(h) > 0 {
				others = h
			}
			if j == i || slices.ContainsFunc(others, func(k string) bool { return k != "" && in[k] }) {
				group = append(group, j)
			}
		}
		g := pathsOf(paths, group)
		if len(group) < 2 || e != nil && slices.ContainsFunc(e.Groups, func(h []string) bool { return slices.Equal(h, g) }) {
			continue // alone, or two merges that hold each other's
		}
		if e == nil {
			e = &DuplicateError{How: "processes, which a merge records", Kind: HeldByMerge, stuck: true}
		}
		e.Groups = append(e.Groups, g)
	}
	return e
}

// mixedHow is how groups of several kinds were told apart.
const mixedHow = "libraries mapped at identical addresses, JFR chunks, .NET traces' start or JVMs"

// contentsKind is the refusal (without its groups) of inputs linked by
// keys: what they are and how they were told apart.
func contentsKind(keys []string) *DuplicateError {
	jfr, trace, goText, heap := 0, 0, 0, 0
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, jfrPrefix):
			jfr++
		case strings.HasPrefix(k, nettracePrefix):
			trace++
		case strings.HasPrefix(k, goTextPrefix):
			goText++
		case strings.HasPrefix(k, heapPrefix):
			heap++
		}
	}
	switch {
	case goText > 0 && goText == len(keys):
		return &DuplicateError{How: "Go MemStats' last GC, to the nanosecond, which copies of one debug=1 profile share, and snapshots of one process between two collections", Kind: DumpsOfOneProcess}
	case jfr == 0 && trace == 0 && heap == 0:
		return &DuplicateError{How: "libraries mapped at identical addresses", Kind: DumpsOrForks}
	case jfr > 0 && jfr+heap == len(keys):
		// Dumps of one recording are of one JVM too: the chunks say more.
		return &DuplicateError{How: "JFR chunks, which dumps of one recording share (each began at one nanosecond)", Kind: DumpsOfOneRecording}
	case trace == len(keys):
		return &DuplicateError{How: ".NET traces' process id and start counter, which copies of one trace share", Kind: CopiesOfOneTrace}
	case heap == len(keys):
		return &DuplicateError{How: "JVM's pid and start time (jdk.JVMInformation)", Kind: SnapshotsOfOneHeap}
	}
	return &DuplicateError{How: mixedHow}
}

// olderOf returns the inputs of a group (members, of kind) that another
// of them supersedes, or nil when none can be chosen: of dumps of one
// process, all but the one taken last, when each says when (timeOf); of
// dumps of one recording, all but one that holds every chunk of the
// others (a recording that dropped its oldest chunks has none). Of
// inputs alike (taken at one nanosecond, holding the same chunks:
// copies, conversions), the last in input order stays.
func olderOf(kind DuplicateKind, members []int, keysOf func(i int) []string, timeOf func(i int) int64) []int {
	keep := -1
	switch kind {
	case DumpsOrForks:
		for _, i := range members {
			if timeOf(i) <= 0 {
				return nil
			}
			if keep < 0 || timeOf(i) >= timeOf(keep) {
				keep = i
			}
		}
	case DumpsOfOneRecording:
		keys := make([][]string, len(members))
		chunks := map[string]bool{}
		for j, i := range members {
			keys[j] = keysOf(i)
			for _, k := range keys[j] {
				if strings.HasPrefix(k, jfrPrefix) {
					chunks[k] = true
				}
			}
		}
		for j, i := range members {
			if holdsAll(keys[j], chunks) {
				keep = i
			}
		}
	}
	if keep < 0 {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(members), func(i int) bool { return i == keep })
}

// holdsAll reports whether keys hold every one of chunks.
func holdsAll(keys []string, chunks map[string]bool) bool {
	n := 0
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		if chunks[k] {
			n++
		}
	}
	return n == len(chunks)
}

// MappingsProcess is MapsProcess for a profile's parsed mappings (a pprof
// profile's): a hash of the files mapped at randomized addresses, with
// their addresses.
func MappingsProcess(ms []parse.Mapping) string {
	h := fnv.New64a()
	n := 0
	for _, m := range ms {
		if m.Start < randomized || m.File == "" {
			continue
		}
		fmt.Fprintf(h, "%x-%x %x %s\n", m.Start, m.Limit, m.Offset, m.File)
		n++
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("mappings:%016x", h.Sum64())
}

// Duplicates groups inputs by process and returns every group of two or
// more, each sorted oldest first, the groups in order of their first path.
// key gives an input's process ("": unknown, never a duplicate).
func Duplicates(paths []string, key func(i int) string) [][]string {
	all, _ := link(len(paths), func(i int) []string { return []string{key(i)} })
	var groups [][]string
	for _, members := range all {
		if len(members) >= 2 {
			groups = append(groups, pathsOf(paths, members))
		}
	}
	return groups
}

// pathsOf is the paths of the inputs members.
func pathsOf(paths []string, members []int) []string {
	group := make([]string, len(members))
	for j, i := range members {
		group[j] = paths[i]
	}
	return group
}

// sharedKeys are the keys two or more of the inputs members have: those
// that linked them (a key shared by n inputs, n−1 times).
func sharedKeys(members []int, keysOf func(i int) []string) []string {
	var shared []string
	seen := map[string]bool{}
	for _, i := range members {
		for _, k := range slices.Compact(slices.Sorted(slices.Values(keysOf(i)))) {
			if k != "" && seen[k] {
				shared = append(shared, k)
			}
			seen[k] = true
		}
	}
	return shared
}

// link groups inputs 0…n−1 that share a key, directly or through others
// (an input may have several: a JFR dump's chunks; empty keys link
// nothing): every group, of one input or more, as input indices in input
// order, the groups in order of their first input, with the first key of
// each group's first input ("" if it has none). A process without a pid
// (NamedProcess of a dump whose name has none) is also linked with each
// of its Family's processes with one: a dump renamed, or written by
// prof.dump to a name of the user's, may be any of them.
func link(n int, keys func(i int) []string) (groups [][]int, first []string) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		// The earlier input's root stays the root: groups keep the
		// order of their first input.
		if a, b := root(j), root(i); a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	owner := map[string]int{}
	withPid := map[string][]int{} // by Family: the inputs of a process with a pid
	label := make([]string, n)
	for i := range n {
		for _, k := range keys(i) {
			if k == "" {
				continue
			}
			if label[i] == "" {
				label[i] = k
			}
			if j, ok := owner[k]; ok {
				union(i, j)
			} else {
				owner[k] = i
			}
			if fam := Family(k); fam != k {
				withPid[fam] = append(withPid[fam], i)
				if j, ok := owner[fam]; ok {
					union(i, j)
				}
				continue
			}
			for _, j := range withPid[k] {
				union(i, j)
			}
		}
	}
	at := map[int]int{}
	for i := range n {
		r := root(i)
		if g, ok := at[r]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		at[r] = len(groups)
		groups, first = append(groups, []int{i}), append(first, label[r])
	}
	return groups, first
}

// Keys are an input's identities as merges compare them: its process
// (NamedProcess), the chunks of a JFR recording it holds (a dump of a
// recording that dropped its oldest chunks, maxage or maxsize, no longer
// begins with the recording's first: the chunks it shares with another
// dump say they are of one recording), and, when live values are read,
// the heap its live objects are of (parse.Source.Heap: recordings of one
// JVM that share no chunk hold different allocations, which sum, but
// list its live objects again each).
func Keys(src *parse.Source, live bool) []string {
	keys := make([]string, 0, 2+len(src.Chunks))
	keys = append(keys, src.Process)
	for _, c := range src.Chunks {
		keys = append(keys, RecordingProcess(src.Format, c))
	}
	if src.Heap != "" {
		keys = append(keys, heapPrefix+src.Heap)
	}
	return Live(keys, live)
}

// Live is keys (Keys' with live values read) as Keys gives them for live:
// without the heap's when live values are not read.
func Live(keys []string, live bool) []string {
	if live {
		return keys
	}
	return slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return strings.HasPrefix(k, heapPrefix) })
}

// Latest keeps, of the inputs whose names say they are dumps of one process,
// the newest, and returns the kept paths (in their order) and the dropped ones.
func Latest(paths []string) (kept, dropped []string) {
	type best struct {
		i   int
		seq Seq
	}
	newest := map[string]best{}
	for i, p := range paths {
		proc, seq, ok := NameProcess(p)
		if !ok {
			continue
		}
		if b, seen := newest[proc]; !seen || b.seq.Less(seq) {
			newest[proc] = best{i, seq}
		}
	}
	for i, p := range paths {
		proc, _, ok := NameProcess(p)
		if ok && newest[proc].i != i {
			dropped = append(dropped, p)
			continue
		}
		kept = append(kept, p)
	}
	return kept, dropped
}

// DuplicateError is the refusal to sum dumps of one process.
type DuplicateError struct {
	// Groups are the dumps of each process, oldest first.
	Groups [][]string
	// How says how the processes were recognised ("file names", "identical
	// mapped libraries").
	How string
	// Kind is what each group is, which the message and its hint say.
	Kind DuplicateKind
	// stuck is set when --latest-per-process cannot choose among the
	// inputs of a group, which their contents told apart (dumps that do
	// not say when they were taken, copies of a trace, recordings of
	// one JVM, dumps of a recording none of which holds all the chunks):
	// the hint then says what to give instead.
	stuck bool
	// older are the inputs (by index) that a newer one of their group
	// supersedes, when no group is stuck.
	older []int
}

// Older returns the inputs, by index among those checked, that another
// dump of the same process or recording supersedes (ContentsDuplicates);
// ok is false when they cannot be chosen, were not looked for (a refusal
// by file names), or there is no refusal (e nil).
func (e *DuplicateError) Older() (older []int, ok bool) {
	if e == nil {
		return nil, false
	}
	return e.older, len(e.older) > 0
}

// DuplicateKind is what a group of inputs refused as one is.
type DuplicateKind uint8

const (
	// DumpsOfOneProcess are successive dumps of one process.
	DumpsOfOneProcess DuplicateKind = iota
	// DumpsOrForks are dumps of one process, or processes forked from
	// one parent without exec, which keep its mappings (told apart only
	// by the pids in jemalloc's file names, which these inputs lack).
	DumpsOrForks
	// CopiesOfOneTrace are copies of one .NET trace.
	CopiesOfOneTrace
	// DumpsOfOneRecording are dumps of one JFR recording.
	DumpsOfOneRecording
	// SnapshotsOfOneHeap are inputs whose live values list one heap's
	// objects (a JVM's, in recordings that share no chunk), read for
	// a live value.
	SnapshotsOfOneHeap
	// HeldByMerge are a merge and inputs it holds already (or another
	// merge that holds some of the same).
	HeldByMerge
)

// duplicateWords are a DuplicateKind's words: what one group is, what n
// of them are, why summing is wrong, and what to do instead: hint when
// --latest-per-process can choose, stuck when it cannot (stuck; "": the
// hint, for kinds it never chooses among).
var duplicateWords = [...]struct{ one, many, harm, hint, stuck string }{
	DumpsOfOneProcess: {"successive dumps of one process", "successive dumps of %d processes",
		"summing them would count each process's memory once per dump",
		"use --latest-per-process to keep the newest dump of each, or --allow-duplicates if they are independent samples",
		"give only the newest dump of each (--latest-per-process cannot tell it for all of them: dumps that do not say when they were taken, recordings whose dumps do not hold each other's chunks, or copies of a trace), or --allow-duplicates if they are independent samples"},
	DumpsOrForks: {"successive dumps of one process or processes forked from one parent", "successive dumps of %d processes or processes forked from one parent",
		"summing dumps of one process would count its memory once per dump",
		"use --latest-per-process to keep the newest dump of each (by the time each says it was taken), or --allow-duplicates if they are forked processes or independent samples (intervals then allow for their correlated sampling)",
		"give only the newest dump of each (these dumps do not say when they were taken, and their names do not all carry a jemalloc pid and sequence: --latest-per-process cannot tell which is newest), or --allow-duplicates if they are forked processes or independent samples (intervals then allow for their correlated sampling)"},
	CopiesOfOneTrace: {"copies of one trace", "copies of %d traces",
		"summing them would count each trace's allocations once per copy",
		"give each trace once, or --allow-duplicates if they are independent samples", ""},
	DumpsOfOneRecording: {"dumps of one recording", "dumps of %d recordings",
		"summing them would count the chunks they share once per dump",
		"use --latest-per-process to keep the last dump of each recording (it holds the chunks of the ones before), or --allow-duplicates if they are independent samples",
		"give only the last dump of each recording (it holds the chunks of the ones before, unless maxage or maxsize dropped them: then give dumps that share no chunk), or --allow-duplicates if they are independent samples"},
	SnapshotsOfOneHeap: {"recordings of one JVM", "recordings of %d JVMs",
		"each lists the JVM's sampled live objects (jdk.OldObjectSample) at its end, and summing them would count the objects alive at two ends once per recording",
		"for in-use values give only the newest recording of each JVM; their allocations sum (a report of --value alloc_space or alloc_objects; pprof and Parquet output hold the in-use values too); or --allow-duplicates if they are independent samples", ""},
	HeldByMerge: {"a merge and inputs it holds already", "%d merges and inputs they hold already",
		"summing them would count what the merge holds of them twice",
		"give each input once: leave out the inputs a merge holds (or dumps of their processes), or merge the inputs afresh; or --allow-duplicates if they are independent samples", ""},
}

func (e *DuplicateError) Error() string {
	var b strings.Builder
	n := 0
	for _, g := range e.Groups {
		n += len(g)
	}
	w := duplicateWords[e.Kind]
	what := w.one
	if len(e.Groups) > 1 {
		what = fmt.Sprintf(w.many, len(e.Groups))
	}
	fmt.Fprintf(&b, "%d inputs are %s (by their %s): %s", n, what, e.How, w.harm)
	const show = 5
	for i, g := range e.Groups {
		if i == show {
			fmt.Fprintf(&b, "\n  … and %d more processes", len(e.Groups)-show)
			break
		}
		if len(g) > show {
			g = append(g[:show:show], fmt.Sprintf("… (%d dumps in all)", len(g)))
		}
		fmt.Fprintf(&b, "\n  %s", strings.Join(g, ", "))
	}
	hint := w.hint
	if e.stuck && w.stuck != "" {
		hint = w.stuck
	}
	b.WriteString("\n" + hint)
	return b.String()
}

// NameDuplicates returns the groups of inputs whose file names say they
// are dumps of one process, each oldest first.
func NameDuplicates(paths []string) [][]string {
	gs := Duplicates(paths, func(i int) string {
		proc, _, _ := NameProcess(paths[i])
		return proc
	})
	for _, g := range gs {
		sort.SliceStable(g, func(i, j int) bool {
			_, a, _ := NameProcess(g[i])
			_, b, _ := NameProcess(g[j])
			return a.Less(b)
		})
	}
	return gs
}
