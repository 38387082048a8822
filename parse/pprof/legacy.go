package pprof

// Legacy text heap profiles: "heap profile: N: B [N: B] @ <kind>/<period>",
// written by gperftools (MallocExtension::GetHeapSample, heap_v2), jemalloc 3
// (heap_v2), Go's runtime/pprof with debug=1 (heap, period 2·MemProfileRate)
// and gperftools' full heap profiler (heapprofile, every allocation). The
// numbers on every line are raw sampled counts and bytes; google/pprof's
// parser scales them on reading, so heapest reads the lines itself and keeps
// them raw, to the byte. Records are sent line by line; a Go stack line is
// held until the "#" lines that name its frames have been read.

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/heapest/heapest/internal/textscan"
	"github.com/heapest/heapest/parse"
)

// maxLegacyLine bounds one text line: no real stack line comes near it.
const maxLegacyLine = 16 << 20

// DetectLegacy accepts the legacy text heap profiles' header.
func DetectLegacy(head []byte) bool {
	return parse.HasPrefix(skipWarnLines(head), "heap profile:")
}

// skipWarnLines is head after its leading "%warn" lines: gperftools'
// GetHeapSample writes a few before its header when sampling is off.
func skipWarnLines(head []byte) []byte {
	for bytes.HasPrefix(head, []byte("%warn")) {
		_, rest, ok := bytes.Cut(head, []byte("\n"))
		if !ok {
			return nil
		}
		head = rest
	}
	return head
}

// samplingOff is the error of a heap sample taken with sampling off.
const samplingOff = "the heap sample was taken with tcmalloc's sampling off (heap_v2/0, and gperftools' note that it holds no data): " +
	"TCMALLOC_SAMPLE_PARAMETER was unset or 0, or the program links libtcmalloc_minimal, which never samples; " +
	"set TCMALLOC_SAMPLE_PARAMETER (524288, say) and link libtcmalloc"

// gperftoolsWarning is emitted for every heap_v2 file (gperftools'
// GetHeapSample; jemalloc 3 wrote the same header). See docs/gperftools.md
// for the source analysis behind it.
const gperftoolsWarning = "if this heap sample comes from gperftools before 2.16: it reads TCMALLOC_SAMPLE_PARAMETER in a static initializer " +
	"that runs after the main thread's first malloc, so the main thread does not sample its first 16 MiB of allocation " +
	"(minus what start-up allocated); allocations made early in main() are then under-represented and their estimates " +
	"and intervals too low. Profile after a warm-up, or with gperftools >= 2.16 (docs/gperftools.md)"

type legacyHeader struct {
	kind                       string
	rate                       float64
	inN, inB, allocN, allocB   int64
	hasAlloc, goText, complete bool
	// classes is set for gperftools' heap sample, which tcmalloc took by
	// size class (parse.TcmallocClasses).
	classes parse.SizeClasses
	// jemalloc3 is set for a heap_v2 header that gperftools cannot have
	// written (gperftoolsLayout): jemalloc 3's.
	jemalloc3 bool
}

// ParseLegacy reads a legacy text heap profile, sending one raw-count
// record per stack line.
func ParseLegacy(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLegacyLine)
	ends := &lineEnds{}
	sc.Split(ends.split)
	line, warned := 1, false
	for ; ; line++ {
		if !sc.Scan() {
			return nil, scanError(name, line, sc.Err(), "a \"heap profile:\" header")
		}
		if !strings.HasPrefix(sc.Text(), "%warn") {
			break
		}
		warned = true
	}
	h, err := parseLegacyHeader(strings.TrimPrefix(sc.Text(), "\ufeff"))
	if err != nil {
		return nil, &parse.Error{File: name, Line: line, Msg: err.Error()}
	}
	if warned && h.rate <= 0 && h.kind == "heap_v2" {
		return nil, &parse.Error{File: name, Line: line, Msg: samplingOff}
	}
	out := &parse.Profile{HasInUse: true, HasAlloc: h.hasAlloc, ReturnAddrs: true}
	if err := legacyRate(name, &h, opt, out); err != nil {
		return nil, err
	}
	lp := legacyParser{name: name, line: line, lines: opt.Lines, keepGoing: opt.KeepGoing, h: h, out: out, sink: sink, funcs: map[string]string{}, ends: ends}
	lp.rec = parse.Record{Scheme: parse.Bernoulli, Rate: h.rate}
	switch {
	case h.complete:
		lp.rec.Scheme = parse.Exact
	case h.jemalloc3:
		lp.rec.Scheme = parse.Geometric // jemalloc 3 draws a trial per byte too
	}
	if err := lp.body(sc); err != nil {
		return nil, err
	}
	if err := lp.checkTotals(opt); err != nil {
		return nil, err
	}
	out.Source.Rate = h.rate
	out.Source.Samples = lp.samples
	if lp.noStack > 0 && lp.noStack == out.Records {
		out.Warnings = append(out.Warnings, "no line of the file has a stack (every row is \"(no stack)\"): the unwinder recorded no frame "+
			"(gperftools' TCMALLOC_STACKTRACE_METHOD=x86 records none with Debian's libtcmalloc, nor do libtcmalloc_minimal's growth stacks; its default method, libunwind or libgcc, does)")
	}
	// The heap profiler's header counts the mallocs: with some, records
	// beyond them are the mmap and sbrk calls HEAP_PROFILE_MMAP adds.
	out.OwnMemoryTwice = h.kind == "heapprofile" && h.inN+h.allocN > 0 && lp.sums[1] > h.inB
	out.OwnMemorySaid = h.kind == "heapprofile"
	return out, nil
}

// legacyRate settles the sampling period and the format name from the
// header. A period in the file is what its counts were sampled with, so
// --rate only supplies a missing one.
func legacyRate(name string, h *legacyHeader, opt parse.Options, out *parse.Profile) error {
	switch {
	case h.complete:
		out.Source.Format, out.Source.Detail = "gperftools", h.kind+": every allocation recorded"
		if h.kind != "heapprofile" {
			// GetHeapGrowthStacks: where the page heap grew, each growth
			// recorded, over the whole run.
			out.Source.Detail = h.kind + ": the heap's growth (tcmalloc's page heap, each time it grew, over the whole run; not what is in use)"
		}
		h.rate = 1
		if opt.Rate > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf(
				"--rate %s ignored: the file records every allocation (sampling period 1)", parse.RateText(opt.Rate)))
		}
		return nil
	case h.goText:
		out.Source.Format, out.Source.Detail = "pprof-go", "Go legacy text (debug=1), raw counts"
	case h.jemalloc3:
		out.Source.Format, out.Source.Detail = "gperftools", h.kind+" text (jemalloc 3: its counts are not padded as gperftools pads them), raw counts"
		out.Source.Writer = "jemalloc"
	default:
		out.Source.Format, out.Source.Detail = "gperftools", h.kind+" text (gperftools or jemalloc 3), raw counts"
		if h.classes == parse.TcmallocClasses {
			out.Source.Detail = h.kind + " text (gperftools' heap sample: sampled by tcmalloc's size classes), raw counts"
		}
		if h.kind == "heap_v2" {
			out.Warnings = append(out.Warnings, gperftoolsWarning)
		}
	}
	switch {
	case opt.Rate > 0 && h.rate > 0:
		if opt.Rate != h.rate {
			out.Warnings = append(out.Warnings, rateIgnored(opt.Rate, h.rate, "from its header"))
		}
	case opt.Rate > 0:
		h.rate = opt.Rate
	case h.rate <= 0 && h.goText:
		return &parse.Error{File: name, Line: 1, Msg: "the header's sampling period is 0 (the profile was written while MemProfileRate was 0: its counts are the raw samples, taken at the rate in effect before): pass that rate with --rate"}
	case h.rate <= 0:
		return &parse.Error{File: name, Line: 1, Msg: "the header has no sampling period (expected @ " + h.kind + "/<period>); pass --rate"}
	}
	return nil
}

// parseLegacyHeader reads "heap profile: 1: 2 [3: 4] @ heap_v2/524288".
func parseLegacyHeader(line string) (legacyHeader, error) {
	var h legacyHeader
	bad := func(what string) error {
		return fmt.Errorf("bad heap profile header (%s): expected \"heap profile: N: B [N: B] @ heap_v2/<period>\"", what)
	}
	rest, ok := strings.CutPrefix(line, "heap profile:")
	if !ok {
		return h, bad("no \"heap profile:\"")
	}
	counts, tail, ok := strings.Cut(rest, "@")
	if !ok {
		return h, bad("no '@'")
	}
	var err error
	if h.inN, h.inB, h.allocN, h.allocB, err = parseCountPairs([]byte(counts)); err != nil {
		return h, bad(err.Error())
	}
	kind, period, _ := strings.Cut(strings.TrimSpace(tail), "/")
	h.kind = kind
	switch kind {
	case "heap_v2", "heapz_v2":
	case "heap":
		h.goText = true
	case "heapprofile", "growthz", "growth":
		// Every allocation recorded: a heap profile with sampling off,
		// and the heap-growth profile (each growth of the heap).
		h.complete = true
	default:
		return h, bad(fmt.Sprintf("unknown profile kind %q", kind))
	}
	if period != "" {
		v, err := strconv.ParseInt(period, 10, 64)
		if err != nil || v < 0 {
			return h, bad(fmt.Sprintf("period %q", period))
		}
		h.rate = float64(v)
		if h.goText {
			// Go writes 2·MemProfileRate because early C++ profilers did.
			h.rate /= 2
		}
	}
	// As pprof does: the alloc columns carry information only when they
	// differ from the in-use ones.
	h.hasAlloc = (h.allocN != h.inN && h.allocN != 0) || (h.allocB != h.inB && h.allocB != 0)
	if h.goText {
		// Go's lines always carry the alloc columns. Go 1.20 and later
		// add the 1 to the header; Go 1.19 and before do not, and a
		// profile of theirs where no sampled object was freed has equal
		// totals (go tool pprof refuses its alloc values).
		h.hasAlloc = true
	}
	if kind == "heapprofile" {
		// gperftools' heap profiler records every allocation's totals:
		// before anything is freed they equal the in-use ones, and are
		// no less there (google-pprof reads them; go tool pprof does not).
		h.hasAlloc = true
	}
	// GetHeapSample writes each pair twice; jemalloc 3, the other writer
	// of heap_v2, writes its cumulative counts (or zeros) in the second,
	// or the same pair again when nothing was freed (prof_accum), but
	// without gperftools' padding.
	if kind == "heap_v2" || kind == "heapz_v2" {
		h.jemalloc3 = !gperftoolsLayout(counts)
		if !h.jemalloc3 && h.inN == h.allocN && h.inB == h.allocB {
			h.classes = parse.TcmallocClasses
		}
	}
	return h, nil
}

// gperftoolsLayout reports whether a header's counts (" N: B [N: B] ")
// may be gperftools': it writes each count at least 6 characters wide
// and each size at least 8 ("%6d: %8d [%6d: %8d]"), padded with blanks;
// jemalloc 3 writes them as they are ("%d: %d [%d: %d]"). Counts of
// those widths or more look alike in both.
func gperftoolsLayout(counts string) bool {
	s := strings.TrimPrefix(counts, " ")
	inN, rest, ok1 := strings.Cut(s, ": ")
	inB, rest, ok2 := strings.Cut(rest, " [")
	allocN, rest, ok3 := strings.Cut(rest, ": ")
	allocB, _, ok4 := strings.Cut(rest, "]")
	return ok1 && ok2 && ok3 && ok4 && len(inN) >= 6 && len(inB) >= 8 && len(allocN) >= 6 && len(allocB) >= 8
}

// parseCountPairs reads "N: B [N: B]".
func parseCountPairs(s []byte) (inN, inB, allocN, allocB int64, err error) {
	in, alloc, ok := bytes.Cut(s, []byte("["))
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("no '['")
	}
	alloc, _, ok = bytes.Cut(alloc, []byte("]"))
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("no ']'")
	}
	if inN, inB, err = parsePair(in); err != nil {
		return
	}
	allocN, allocB, err = parsePair(alloc)
	return
}

// parsePair reads "N: B" with non-negative integers.
func parsePair(s []byte) (n, b int64, err error) {
	ns, bs, ok := bytes.Cut(s, []byte(":"))
	if !ok {
		return 0, 0, fmt.Errorf("expected \"count: bytes\", got %q", bytes.TrimSpace(s))
	}
	ns, bs = bytes.TrimSpace(ns), bytes.TrimSpace(bs)
	if n, err = strconv.ParseInt(string(ns), 10, 64); err != nil || n < 0 {
		return 0, 0, fmt.Errorf("bad count %q", ns)
	}
	if b, err = strconv.ParseInt(string(bs), 10, 64); err != nil || b < 0 {
		return 0, 0, fmt.Errorf("bad byte count %q", bs)
	}
	if n == 0 && b != 0 {
		return 0, 0, fmt.Errorf("count 0 with %d bytes", b)
	}
	return n, b, nil
}

func scanError(name string, line int, err error, want string) error {
	if err != nil {
		return &parse.Error{File: name, Line: line, Msg: "reading", Err: err}
	}
	return &parse.Error{File: name, Line: line, Msg: "unexpected end of file, expected " + want}
}

// legacyParser reads the stack lines, Go's "#" symbol lines and the
// memory-map section that follow the header.
type legacyParser struct {
	name      string
	lines     bool // name Go's frames by line (parse.Options.Lines)
	keepGoing bool // salvage a cut file (parse.Options.KeepGoing)
	ends      *lineEnds
	h         legacyHeader
	out       *parse.Profile
	sink      parse.Sink
	line      int
	samples   float64
	// noStack counts the records with no frame.
	noStack int
	// rec is the record of the last stack line, held until the lines after
	// it are known not to name its frames.
	rec   parse.Record
	held  bool
	addrs []parse.Frame
	// goFrames collects the "#\t0x…\tfunc+0x…\tfile:line" lines Go's
	// debug=1 output writes after each stack line.
	goFrames []parse.Frame
	// funcs interns function names: one string per distinct name.
	funcs map[string]string
	// sums are the records' counts (in use, then allocated), checked
	// against the header's totals: a cut file has fewer.
	sums [4]int64
}

// checkTotals compares the records' in-use counts with the header's
// totals, which the producer computed over the same records: fewer means
// the file was cut (a truncated copy, a full disk), and a report of it
// would be far too low. (Allocation totals are not checked: real files'
// headers disagree with their records there, and more than the header is
// no truncation.) With --keep-going, what was read is kept with a warning.
func (lp *legacyParser) checkTotals(opt parse.Options) error {
	h := lp.h
	if lp.sums[0] >= h.inN && lp.sums[1] >= h.inB || lp.out.Source.Salvaged {
		return nil
	}
	msg := fmt.Sprintf("truncated: the header counts %d objects in use (%d bytes), the records only %d (%d bytes)",
		h.inN, h.inB, lp.sums[0], lp.sums[1])
	if opt.KeepGoing {
		lp.out.Warnings = append(lp.out.Warnings, msg+"; salvaged what was read (--keep-going)")
		lp.out.Source.Salvaged = true
		return nil
	}
	return &parse.Error{File: lp.name, Line: lp.line, Msg: msg}
}

// body reads the lines after the header, which is lp.line.
func (lp *legacyParser) body(sc *bufio.Scanner) error {
	for sc.Scan() {
		lp.line++
		text := bytes.TrimSpace(sc.Bytes())
		switch {
		case len(text) == 0:
			continue
		case string(text) == "MAPPED_LIBRARIES:" || string(text) == "--- Memory map: ---":
			lp.flush()
			return lp.mappings(sc, string(text) == "MAPPED_LIBRARIES:")
		case bytes.HasPrefix(text, []byte("# runtime.MemStats")):
			lp.flush()
			return lp.memStats(sc)
		case text[0] == '#':
			lp.goFrame(text)
			continue
		}
		lp.flush()
		if err := lp.sample(text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &parse.Error{File: lp.name, Line: lp.line + 1, Msg: "reading", Err: err}
	}
	if lp.ends.cut {
		return lp.cutShort()
	}
	lp.flush()
	return nil
}

// memStats reads the runtime.MemStats Go writes after a debug=1
// profile's records for the one figure that tells the process apart:
// LastGC, its last collection's time in nanoseconds, which copies of the
// profile, and snapshots taken between two collections, share and no
// other process does (parse.Source.Recording).
func (lp *legacyParser) memStats(sc *bufio.Scanner) error {
	for sc.Scan() {
		lp.line++
		v, ok := bytes.CutPrefix(bytes.TrimSpace(sc.Bytes()), []byte("# LastGC = "))
		if ok {
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil && n != 0 {
				lp.out.Source.Recording = "LastGC=" + string(v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return &parse.Error{File: lp.name, Line: lp.line + 1, Msg: "reading", Err: err}
	}
	return nil
}

// cutShort is the end of a body whose last line has no line ending: the
// file was cut inside that line, whose record (a stack's counts, its
// addresses, or a frame Go named) may be cut too. It is an error; with
// --keep-going the records before it are kept, with a warning.
func (lp *legacyParser) cutShort() error {
	err := &parse.Error{File: lp.name, Line: lp.line, Msg: "truncated: last line has no line ending"}
	if !lp.keepGoing || lp.out.Records == 0 {
		return err
	}
	lp.held = false
	lp.out.Warnings = append(lp.out.Warnings, fmt.Sprintf("--keep-going: %v; kept the %d stacks before it", err, lp.out.Records))
	lp.out.Source.Salvaged = true
	return nil
}

// lineEnds is bufio.ScanLines that notes a last line without its line
// ending: every writer ends its lines, so the file was cut there.
type lineEnds struct{ cut bool }

func (l *lineEnds) split(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if atEOF && tok != nil && adv == len(data) && data[len(data)-1] != '\n' {
		l.cut = true
	}
	return adv, tok, err
}

// sample reads "N: B [N: B] @ 0x1 0x2 ..." into the held record.
func (lp *legacyParser) sample(text []byte) error {
	counts, addrs, ok := bytes.Cut(text, []byte("@"))
	if !ok {
		return &parse.Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("expected \"N: B [N: B] @ addresses\", got %.60q", text)}
	}
	inN, inB, allocN, allocB, err := parseCountPairs(counts)
	if err != nil {
		return &parse.Error{File: lp.name, Line: lp.line, Msg: err.Error()}
	}
	for i, x := range []int64{inN, inB, allocN, allocB} {
		lp.sums[i] += x
	}
	// Stack addresses are return addresses, kept as written: the namer
	// looks a caller up one byte back, inside its call (the one place
	// that adjusts, as for jemalloc's stacks; subtracting here too moved
	// runtime.goexit+1 into the function before it).
	var bad []byte
	if lp.addrs, bad = hexFrames(lp.addrs[:0], addrs, true); bad != nil {
		return &parse.Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("bad address %.40q: expected 0x-prefixed hex", bad)}
	}
	lp.rec.Stack = lp.addrs
	lp.rec.InUse = lp.raw(inN, inB)
	if lp.h.hasAlloc {
		lp.rec.Alloc = lp.raw(allocN, allocB)
	}
	lp.held = true
	lp.goFrames = lp.goFrames[:0]
	return nil
}

// raw makes a Raw pair. The size is known when the line holds one object, or
// for Go, whose lines are one (stack, size) bucket each.
func (lp *legacyParser) raw(n, b int64) parse.Counts {
	c := rawCounts(n, b, lp.h.goText)
	c.Classes = lp.h.classes
	return c
}

// rawCounts makes the Raw pair of a text line of n sampled objects of b
// bytes. The size is known when the line holds one object, or when the
// line is one (stack, size) bucket (bucket: Go's lines), and b divides.
func rawCounts(n, b int64, bucket bool) parse.Counts {
	c := parse.Counts{Objects: float64(n), Bytes: float64(b), Enc: parse.Raw, Samples: float64(n)}
	if n == 1 || (n > 0 && bucket && b%n == 0) {
		c.Size = float64(b / n)
	}
	return c
}

// goFrame reads "#\t0x4a1b2c\tmain.f+0x2c\t/path/file.go:12" after a Go
// stack line; other comment lines are ignored.
func (lp *legacyParser) goFrame(text []byte) {
	if !lp.held || !lp.h.goText {
		return
	}
	addr, fn, pos := goFrameFields(text[1:])
	if fn == nil {
		return
	}
	a, err := strconv.ParseUint(string(addr), 0, 64)
	if err != nil {
		return
	}
	if i := bytes.LastIndex(fn, []byte("+0x")); i > 0 {
		fn = fn[:i]
	}
	if lp.lines && pos != nil {
		fn = append(append(fn[:len(fn):len(fn)], ' '), pos...) // "func file:line", as parse.LineName makes
	}
	name, ok := lp.funcs[string(fn)]
	if !ok {
		name = string(fn)
		lp.funcs[name] = name
	}
	lp.goFrames = append(lp.goFrames, parse.Frame{Addr: a, Func: name})
}

// goFrameFields splits a Go frame line after its "#" into the address,
// the function (with its offset) and the position. Go separates them by
// tabs, and a function (a generic's shape: go.shape.struct { a int }) or
// a source path (/Users/Jo Ann/...) may hold spaces; a line without tabs
// (written by hand) is split at white space.
func goFrameFields(b []byte) (addr, fn, pos []byte) {
	b = bytes.TrimLeft(b, " \t")
	if a, rest, ok := bytes.Cut(b, []byte{'\t'}); ok {
		// Columns are padded with more tabs where their widths differ.
		f, p, _ := bytes.Cut(bytes.TrimLeft(rest, "\t"), []byte{'\t'})
		if f = bytes.TrimSpace(f); len(f) > 0 {
			if p = bytes.TrimSpace(p); len(p) == 0 {
				p = nil
			}
			return bytes.TrimSpace(a), f, p
		}
	}
	addr, rest := textscan.Next(b)
	fn, rest = textscan.Next(rest)
	pos, _ = textscan.Next(rest)
	return addr, fn, pos
}

// flush sends the held record, with the symbolized frames Go printed for
// it when there are some (they also expand inlined calls).
func (lp *legacyParser) flush() {
	if !lp.held {
		return
	}
	if len(lp.goFrames) > 0 {
		lp.rec.Stack = lp.goFrames
	}
	lp.samples += lp.rec.InUse.Samples
	if len(lp.rec.Stack) == 0 {
		lp.noStack++
	}
	lp.out.Records++
	lp.sink.Record(&lp.rec)
	lp.held = false
	lp.goFrames = lp.goFrames[:0]
}

// mappings reads /proc/self/maps lines: "start-limit perms offset dev inode path".
// Lines that are no maps line (binary junk appended, a second profile)
// are skipped, and a warning counts them in a MAPPED_LIBRARIES section
// (procMaps), which holds only /proc/self/maps lines; pprof's "--- Memory
// map: ---" has lines of its own ("source=", "start-end: path").
func (lp *legacyParser) mappings(sc *bufio.Scanner, procMaps bool) error {
	junk, first := 0, 0
	defer func() {
		if junk > 0 && procMaps {
			lp.out.Warnings = append(lp.out.Warnings, fmt.Sprintf("%d lines of the memory map, the first line %d, are no maps lines (damage, or a file appended): skipped", junk, first))
		}
	}()
	for sc.Scan() {
		lp.line++
		f := strings.Fields(sc.Text())
		start, limit, ok := "", "", false
		if len(f) >= 5 {
			start, limit, ok = strings.Cut(f[0], "-")
		}
		if !ok {
			if len(f) > 0 {
				if junk++; junk == 1 {
					first = lp.line
				}
			}
			continue
		}
		if !strings.Contains(f[1], "x") {
			continue
		}
		m := parse.Mapping{}
		var err1, err2, err3 error
		m.Start, err1 = strconv.ParseUint(start, 16, 64)
		m.Limit, err2 = strconv.ParseUint(limit, 16, 64)
		m.Offset, err3 = strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return &parse.Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("bad memory map line %.80q", sc.Text())}
		}
		if len(f) >= 6 {
			m.File = f[5]
		}
		if lp.ends.cut {
			break // its path may be cut: said below
		}
		lp.out.Mappings = append(lp.out.Mappings, m)
	}
	if err := sc.Err(); err != nil {
		return &parse.Error{File: lp.name, Line: lp.line + 1, Msg: "reading", Err: err}
	}
	if lp.ends.cut {
		lp.out.Warnings = append(lp.out.Warnings, "the memory map is cut short (its last line has no end): the file was truncated there; its stacks are whole, and frames in the libraries the cut left out are unsymbolized")
	}
	return nil
}

// hexFrames appends to dst a frame for each field of list, a
// space-separated list of non-zero numbers (0x-prefixed hex in practice);
// bad is the first field that is not one. With nulls, a null address
// ("(nil)" or zero) is no frame and is skipped: gperftools writes each
// frame with printf's %p, which glibc prints as "(nil)" for the null
// return address its frame-pointer unwinder (TCMALLOC_STACKTRACE_METHOD=
// generic_fp) can end a walk with, and pprof reads such a line too.
func hexFrames(dst []parse.Frame, list []byte, nulls bool) (frames []parse.Frame, bad []byte) {
	for rest := list; ; {
		var f []byte
		if f, rest = textscan.Next(rest); f == nil {
			return dst, nil
		}
		if nulls && string(f) == "(nil)" {
			continue
		}
		a, err := strconv.ParseUint(string(f), 0, 64)
		if err != nil || (a == 0 && !nulls) {
			return dst, f
		}
		if a != 0 {
			dst = append(dst, parse.Frame{Addr: a})
		}
	}
}
