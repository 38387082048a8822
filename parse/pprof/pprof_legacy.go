package pprof

// Legacy text heap profiles: "heap profile: N: B [N: B] @ <kind>/<period>",
// written by gperftools (MallocExtension::GetHeapSample, heap_v2), jemalloc 3
// (heap_v2), Go's runtime/pprof with debug=1 (heap, period 2·MemProfileRate)
// and gperftools' full heap profiler (heapprofile, every allocation). The
// numbers on every line are raw sampled counts and bytes; google/pprof's
// parser scales them on reading, so heapest reads the lines itself and keeps
// them raw, to the byte.

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// maxLegacyLine bounds one text line: no real stack line comes near it.
const maxLegacyLine = 16 << 20

func detectLegacyHeap(head []byte) bool { return hasPrefix(head, "heap profile:") }

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
}

// parseLegacyHeap reads a legacy text heap profile into raw-count records.
func parseLegacyHeap(name string, r *bufio.Reader, opt Options) (*Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLegacyLine)
	if !sc.Scan() {
		return nil, scanError(name, 1, sc.Err(), "a \"heap profile:\" header")
	}
	h, err := parseLegacyHeader(strings.TrimPrefix(sc.Text(), "\ufeff"))
	if err != nil {
		return nil, &Error{File: name, Line: 1, Msg: err.Error()}
	}
	out := &Profile{HasInUse: true, HasAlloc: h.hasAlloc}
	if err := legacyRate(name, &h, opt, out); err != nil {
		return nil, err
	}
	lp := legacyParser{name: name, h: h, out: out}
	if err := lp.body(sc); err != nil {
		return nil, err
	}
	return finish(out, h.rate), nil
}

// legacyRate settles the sampling period and the format name from the header.
func legacyRate(name string, h *legacyHeader, opt Options, out *Profile) error {
	switch {
	case h.complete:
		out.Source.Format, out.Source.Detail = "gperftools", "heapprofile: every allocation recorded"
		h.rate = 1
		return nil
	case h.goText:
		out.Source.Format, out.Source.Detail = "pprof-go", "Go legacy text (debug=1), raw counts"
	default:
		out.Source.Format, out.Source.Detail = "gperftools", h.kind+" text (gperftools or jemalloc 3), raw counts"
		if h.kind == "heap_v2" {
			out.Warnings = append(out.Warnings, gperftoolsWarning)
		}
	}
	if opt.Rate > 0 {
		if h.rate > 0 && h.rate != opt.Rate {
			out.Warnings = append(out.Warnings, fmt.Sprintf(
				"--rate %g overrides the header's period %g", opt.Rate, h.rate))
		}
		h.rate = opt.Rate
	}
	if h.rate <= 0 {
		return &Error{File: name, Line: 1, Msg: "the header has no sampling period (expected @ " + h.kind + "/<period>); pass --rate"}
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
	if h.inN, h.inB, h.allocN, h.allocB, err = parseCountPairs(counts); err != nil {
		return h, bad(err.Error())
	}
	kind, period, _ := strings.Cut(strings.TrimSpace(tail), "/")
	h.kind = kind
	switch kind {
	case "heap_v2", "heapz_v2":
	case "heap":
		h.goText = true
	case "heapprofile":
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
	// differ from the in-use ones (Go adds 1 to the header to make sure).
	h.hasAlloc = (h.allocN != h.inN && h.allocN != 0) || (h.allocB != h.inB && h.allocB != 0)
	return h, nil
}

// parseCountPairs reads "N: B [N: B]".
func parseCountPairs(s string) (inN, inB, allocN, allocB int64, err error) {
	in, alloc, ok := strings.Cut(s, "[")
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("no '['")
	}
	alloc, _, ok = strings.Cut(alloc, "]")
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
func parsePair(s string) (n, b int64, err error) {
	ns, bs, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("expected \"count: bytes\", got %q", strings.TrimSpace(s))
	}
	if n, err = strconv.ParseInt(strings.TrimSpace(ns), 10, 64); err != nil || n < 0 {
		return 0, 0, fmt.Errorf("bad count %q", strings.TrimSpace(ns))
	}
	if b, err = strconv.ParseInt(strings.TrimSpace(bs), 10, 64); err != nil || b < 0 {
		return 0, 0, fmt.Errorf("bad byte count %q", strings.TrimSpace(bs))
	}
	if n == 0 && b != 0 {
		return 0, 0, fmt.Errorf("count 0 with %d bytes", b)
	}
	return n, b, nil
}

func scanError(name string, line int, err error, want string) error {
	if err != nil {
		return &Error{File: name, Line: line, Msg: "reading", Err: err}
	}
	return &Error{File: name, Line: line, Msg: "unexpected end of file, expected " + want}
}

// legacyParser reads the stack lines, Go's "#" symbol lines and the
// memory-map section that follow the header.
type legacyParser struct {
	name string
	h    legacyHeader
	out  *Profile
	line int
	// goFrames collects the "#\t0x…\tfunc+0x…\tfile:line" lines Go's
	// debug=1 output writes after each stack line.
	goFrames []Frame
	pending  bool
}

func (lp *legacyParser) body(sc *bufio.Scanner) error {
	lp.line = 1
	for sc.Scan() {
		lp.line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
			continue
		case text == "MAPPED_LIBRARIES:" || text == "--- Memory map: ---":
			lp.flushGoFrames()
			return lp.mappings(sc)
		case strings.HasPrefix(text, "# runtime.MemStats"):
			lp.flushGoFrames()
			return nil
		case strings.HasPrefix(text, "#"):
			lp.goFrame(text)
			continue
		}
		lp.flushGoFrames()
		if err := lp.sample(text); err != nil {
			return err
		}
	}
	lp.flushGoFrames()
	if err := sc.Err(); err != nil {
		return &Error{File: lp.name, Line: lp.line + 1, Msg: "reading", Err: err}
	}
	return nil
}

// sample reads "N: B [N: B] @ 0x1 0x2 ...".
func (lp *legacyParser) sample(text string) error {
	counts, addrs, ok := strings.Cut(text, "@")
	if !ok {
		return &Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("expected \"N: B [N: B] @ addresses\", got %.60q", text)}
	}
	inN, inB, allocN, allocB, err := parseCountPairs(counts)
	if err != nil {
		return &Error{File: lp.name, Line: lp.line, Msg: err.Error()}
	}
	var stack []Frame
	for _, f := range strings.Fields(addrs) {
		a, err := strconv.ParseUint(f, 0, 64)
		if err != nil || a == 0 {
			return &Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("bad address %.40q: expected 0x-prefixed hex", f)}
		}
		// Stack addresses are return addresses; one less lands inside the
		// call instruction, as pprof and jeprof do.
		stack = append(stack, Frame{Addr: a - 1})
	}
	rec := Record{Stack: stack, Scheme: Bernoulli, Rate: lp.h.rate}
	if lp.h.complete {
		rec.Scheme = Exact
	}
	rec.InUse = lp.raw(inN, inB)
	if lp.h.hasAlloc {
		rec.Alloc = lp.raw(allocN, allocB)
	}
	lp.out.Records = append(lp.out.Records, rec)
	lp.pending = lp.h.goText
	lp.goFrames = lp.goFrames[:0]
	return nil
}

// raw makes a Raw pair. The size is known when the line holds one object, or
// for Go, whose lines are one (stack, size) bucket each.
func (lp *legacyParser) raw(n, b int64) Counts {
	c := Counts{Objects: float64(n), Bytes: float64(b), Enc: Raw, Samples: float64(n)}
	if n == 1 || (n > 0 && lp.h.goText && b%n == 0) {
		c.Size = float64(b / n)
	}
	return c
}

// goFrame reads "#\t0x4a1b2c\tmain.f+0x2c\t/path/file.go:12"; other comment
// lines are ignored.
func (lp *legacyParser) goFrame(text string) {
	if !lp.pending {
		return
	}
	f := strings.Fields(strings.TrimPrefix(text, "#"))
	if len(f) < 2 {
		return
	}
	a, err := strconv.ParseUint(f[0], 0, 64)
	if err != nil {
		return
	}
	fr := Frame{Addr: a, Func: f[1]}
	if i := strings.LastIndex(fr.Func, "+0x"); i > 0 {
		fr.Func = fr.Func[:i]
	}
	lp.goFrames = append(lp.goFrames, fr)
}

// flushGoFrames gives the last record the symbolized frames Go printed for
// it, which also expand inlined calls.
func (lp *legacyParser) flushGoFrames() {
	if lp.pending && len(lp.goFrames) > 0 {
		last := &lp.out.Records[len(lp.out.Records)-1]
		last.Stack = append([]Frame(nil), lp.goFrames...)
	}
	lp.pending = false
	lp.goFrames = lp.goFrames[:0]
}

// mappings reads /proc/self/maps lines: "start-limit perms offset dev inode path".
func (lp *legacyParser) mappings(sc *bufio.Scanner) error {
	for sc.Scan() {
		lp.line++
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		start, limit, ok := strings.Cut(f[0], "-")
		if !ok || !strings.Contains(f[1], "x") {
			continue
		}
		m := Mapping{}
		var err1, err2, err3 error
		m.Start, err1 = strconv.ParseUint(start, 16, 64)
		m.Limit, err2 = strconv.ParseUint(limit, 16, 64)
		m.Offset, err3 = strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return &Error{File: lp.name, Line: lp.line, Msg: fmt.Sprintf("bad memory map line %.80q", sc.Text())}
		}
		if len(f) >= 6 {
			m.File = f[5]
		}
		lp.out.Mappings = append(lp.out.Mappings, m)
	}
	if err := sc.Err(); err != nil {
		return &Error{File: lp.name, Line: lp.line + 1, Msg: "reading", Err: err}
	}
	return nil
}
