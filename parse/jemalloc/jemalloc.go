package jemalloc

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"strconv"
)

// jemalloc heap_v2 dumps (jemalloc 4.0 through 5.3+). The grammar, from
// jemalloc's prof_dump_header / prof_dump_gctx / prof_dump_maps:
//
//	heap_v2/R
//	  t*: curobjs: curbytes [accumobjs: accumbytes]
//	  tUID: counts[ thread name]          (one per thread)
//	@ 0xADDR 0xADDR ...                   (one block per stack)
//	  t*: counts
//	  tUID: counts                        (one per thread)
//
//	MAPPED_LIBRARIES:
//	<raw /proc/pid/maps>
//
// optionally preceded by jeprof's "--- symbol" section and a "--- heap" line.

func init() {
	Register(Format{
		Name: "jemalloc",
		Detect: func(head []byte) bool {
			return hasPrefix(head, "heap_v2/") || hasPrefix(head, "--- symbol") || hasPrefix(head, "--- heap")
		},
		Parse: parseJemalloc,
	})
}

// maxLine bounds one text line: a 128-frame stack line is ~2.5 KB, so
// anything near this is not a jemalloc dump.
const maxLine = 1 << 20

// jeCounts is one "a: b [c: d]" quadruple.
type jeCounts struct{ curObjs, curBytes, accObjs, accBytes uint64 }

type jeParser struct {
	name   string
	r      *bufio.Reader
	line   int
	last   []byte // current line without its line ending
	hadNL  bool   // whether the current line ended with '\n'
	opt    Options
	prof   *Profile
	rate   uint64
	header jeCounts
	sum    jeCounts // exact sum of stack t* lines
	// lastT and lastThreads (an index into ThreadRecords) locate the last
	// stack's lines, the only ones a truncation can leave incomplete.
	lastT jeCounts
	names map[string]string
	seen  map[uint64]int // hash of the stack's addresses -> line, to reject duplicates
	seed  uint64         // random, so that no input can aim at collisions
	// frames is a slab the stacks are cut from: one allocation for many
	// stacks instead of one each.
	frames []Frame
	// threadNames interns "tUID name" per thread.
	threadNames map[string]string
	// lastSum sums the last stack's thread lines, for lastStackWhole when
	// thread records are not kept.
	lastSum  jeCounts
	lastDec  [2]float64 // decoded current and accumulated bytes of those lines
	lastNThr int
}

func parseJemalloc(name string, r *bufio.Reader, opt Options) (*Profile, error) {
	// A stack block takes at least ~256 bytes (24 frames of ~15 bytes and
	// its count lines): sizing the records from the file size avoids
	// regrowing a large slice many times.
	recs := make([]Record, 0, min(opt.sizeHint/256, 1<<22))
	p := &jeParser{name: name, r: r, opt: opt, prof: &Profile{HasInUse: true, HasAlloc: true, Records: recs},
		names: map[string]string{}, seen: map[uint64]int{}, seed: new(maphash.Hash).Sum64(), threadNames: map[string]string{}}
	if err := p.parse(); err != nil {
		if !opt.KeepGoing || p.prof == nil || len(p.prof.Records) == 0 {
			return nil, err
		}
		p.prof.Warnings = append(p.prof.Warnings, fmt.Sprintf("--keep-going: %v; kept the %d stacks before it", err, len(p.prof.Records)))
	}
	return p.prof, nil
}

func (p *jeParser) errorf(format string, args ...any) error {
	return &Error{File: p.name, Line: p.line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// next reads the next line; io.EOF at the end.
func (p *jeParser) next() error {
	line, err := p.r.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		// Long line: accumulate, bounded by maxLine.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf) > maxLine {
				p.line++
				return p.errorf("line longer than %d bytes: not a jemalloc dump", maxLine)
			}
			line, err = p.r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil && err != io.EOF {
		return &Error{File: p.name, Line: p.line + 1, Offset: -1, Msg: "reading", Err: err}
	}
	if len(line) == 0 && err == io.EOF {
		return io.EOF
	}
	p.line++
	p.hadNL = len(line) > 0 && line[len(line)-1] == '\n'
	line = bytes.TrimRight(line, "\r\n")
	p.last = line
	return nil
}

func (p *jeParser) parse() error {
	if err := p.next(); err != nil {
		return p.errorf("empty file: expected a heap_v2/R header")
	}
	if bytes.HasPrefix(p.last, []byte("--- symbol")) {
		if err := p.parseSymbols(); err != nil {
			return err
		}
	}
	if bytes.Equal(p.last, []byte("--- heap")) || bytes.HasPrefix(p.last, []byte("--- heap ")) {
		if err := p.next(); err != nil {
			return p.errorf("truncated: expected a heap_v2/R header after --- heap")
		}
	}
	if err := p.parseHeader(); err != nil {
		return err
	}
	hasMaps, err := p.parseBody()
	if err != nil {
		return err
	}
	return p.finish(hasMaps)
}

// parseSymbols reads jeprof's "--- symbol" section up to its "---" line.
func (p *jeParser) parseSymbols() error {
	p.prof.Symbols = map[uint64]string{}
	for {
		if err := p.next(); err != nil {
			return p.errorf("truncated: --- symbol section without its closing ---")
		}
		l := p.last
		switch {
		case bytes.Equal(l, []byte("---")):
			return p.next()
		case bytes.HasPrefix(l, []byte("binary=")):
			continue
		case bytes.HasPrefix(l, []byte("0x")):
			sp := bytes.IndexByte(l, ' ')
			if sp < 0 {
				return p.errorf("expected \"0xADDR name\" in the symbol section, got %q", clip(l))
			}
			a, err := strconv.ParseUint(string(l[2:sp]), 16, 64)
			if err != nil {
				return p.errorf("bad address %q in the symbol section", clip(l[:sp]))
			}
			p.prof.Symbols[a] = string(bytes.TrimSpace(l[sp+1:]))
		default:
			return p.errorf("expected \"0xADDR name\" or --- in the symbol section, got %q", clip(l))
		}
	}
}

func (p *jeParser) parseHeader() error {
	l := p.last
	if !bytes.HasPrefix(l, []byte("heap_v2/")) {
		return p.errorf("expected a heap_v2/R header, got %q", clip(l))
	}
	r, err := parseUint(l[len("heap_v2/"):])
	if err != nil {
		return p.errorf("bad sampling rate in header %q: %v", clip(l), err)
	}
	if r == 0 {
		return p.errorf("sampling rate R = 0 in header: R must be at least 1")
	}
	if !p.hadNL {
		return p.errorf("truncated after the header line")
	}
	p.rate = r
	p.prof.Source.Rate = float64(r)
	if err := p.next(); err != nil {
		return p.errorf("truncated: expected the \"  t*: \" totals line after the header")
	}
	uid, rest, ok := threadPrefix(p.last)
	if !ok || uid != "*" {
		return p.errorf("expected the \"  t*: \" totals line, got %q", clip(p.last))
	}
	if p.header, _, err = parseCounts(rest, false); err != nil {
		return p.errorf("totals line: %v", err)
	}
	return nil
}

// parseBody reads header thread lines, stacks and the maps section.
// It reports whether MAPPED_LIBRARIES was present.
func (p *jeParser) parseBody() (bool, error) {
	var cur *Record // stack being read
	var stack []Frame
	wantT := false // an '@' line must be followed by its t* line
	for {
		err := p.next()
		if err == io.EOF {
			if wantT {
				return false, p.errorf("truncated: stack without its \"  t*: \" line at end of file")
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		l := p.last
		if !p.hadNL {
			return false, p.errorf("truncated: last line has no line ending")
		}
		switch {
		case len(l) == 0:
			continue
		case l[0] == '@':
			if wantT {
				return false, p.errorf("expected the \"  t*: \" line of the previous stack, got a new @ line")
			}
			if stack, err = p.parseStack(l); err != nil {
				return false, err
			}
			wantT = true
			cur = nil
		case bytes.HasPrefix(l, []byte("MAPPED_LIBRARIES:")):
			if wantT {
				return false, p.errorf("expected the \"  t*: \" line of the previous stack, got MAPPED_LIBRARIES")
			}
			maps, err := io.ReadAll(io.LimitReader(p.r, 64<<20))
			if err != nil {
				return false, &Error{File: p.name, Line: p.line + 1, Offset: -1, Msg: "reading MAPPED_LIBRARIES", Err: err}
			}
			p.prof.MapsText, p.prof.MapsLine = maps, p.line+1
			return true, nil
		default:
			uid, rest, ok := threadPrefix(l)
			if !ok {
				return false, p.errorf("expected \"@ 0xADDR...\", \"  tN: counts\" or MAPPED_LIBRARIES:, got %q", clip(l))
			}
			if err := p.countsLine(uid, rest, stack, &cur, &wantT); err != nil {
				return false, err
			}
		}
	}
}

// countsLine handles one "  tX: ..." line in the body.
func (p *jeParser) countsLine(uid string, rest []byte, stack []Frame, cur **Record, wantT *bool) error {
	inHeader := stack == nil && *cur == nil && !*wantT
	c, name, err := parseCounts(rest, inHeader && uid != "*")
	if err != nil {
		return p.errorf("%v", err)
	}
	switch {
	case inHeader && uid != "*":
		if name != "" {
			p.names[uid] = name
		}
	case *wantT:
		if uid != "*" {
			return p.errorf("expected the \"  t*: \" line after the @ line, got thread t%s", uid)
		}
		p.sum, err = addCounts(p.sum, c)
		if err != nil {
			return p.errorf("%v", err)
		}
		p.prof.Records = append(p.prof.Records, jeRecord(stack, "", c, p.rate))
		p.lastT, p.lastSum, p.lastDec, p.lastNThr = c, jeCounts{}, [2]float64{}, 0
		*cur = &p.prof.Records[len(p.prof.Records)-1]
		*wantT = false
	case *cur != nil && uid != "*":
		p.addThreadLine(uid, stack, c)
	default:
		return p.errorf("unexpected \"  t%s: \" line", uid)
	}
	return nil
}

// addThreadLine keeps a thread line under a stack (with --by thread) and
// adds it to the last stack's sums.
func (p *jeParser) addThreadLine(uid string, stack []Frame, c jeCounts) {
	r := float64(p.rate)
	p.lastSum, _ = addCounts(p.lastSum, c) // bounded by the t* line checked later
	_, cur := unbias.JeprofDecode(float64(c.curObjs), float64(c.curBytes), r)
	_, acc := unbias.JeprofDecode(float64(c.accObjs), float64(c.accBytes), r)
	p.lastDec[0] += cur
	p.lastDec[1] += acc
	p.lastNThr++
	if !p.opt.Threads {
		return
	}
	th, ok := p.threadNames[uid]
	if !ok {
		th = "t" + uid
		if n := p.names[uid]; n != "" {
			th += " " + n
		}
		p.threadNames[uid] = th
	}
	p.prof.ThreadRecords = append(p.prof.ThreadRecords, jeRecord(stack, th, c, p.rate))
}

func jeRecord(stack []Frame, thread string, c jeCounts, rate uint64) Record {
	return Record{
		Stack:  stack,
		Thread: thread,
		Scheme: Bernoulli,
		Rate:   float64(rate),
		InUse:  Counts{Objects: float64(c.curObjs), Bytes: float64(c.curBytes)},
		Alloc:  Counts{Objects: float64(c.accObjs), Bytes: float64(c.accBytes)},
	}
}

func (p *jeParser) parseStack(l []byte) ([]Frame, error) {
	if len(l) > 1 && l[1] != ' ' {
		return nil, p.errorf("expected \"@ 0xADDR ...\", got %q", clip(l))
	}
	rest := l[1:]
	n := bytes.Count(rest, []byte(" ")) + 1 // an upper bound on the frames
	if len(p.frames) < n {
		p.frames = make([]Frame, max(n, 8192))
	}
	frames := p.frames[:0:n]
	h := p.seed
	for i := 0; i < len(rest); {
		if c := rest[i]; c == ' ' || c == '\t' {
			i++
			continue
		}
		a, end, ok := scanHexAddr(rest, i)
		if !ok {
			return nil, p.errorf("expected a 0x-prefixed hex address, got %q", clip(rest[i:end]))
		}
		frames = append(frames, Frame{Addr: a})
		h = mixAddr(h, a)
		i = end
	}
	p.frames = p.frames[len(frames):]
	key := h
	if prev, dup := p.seen[key]; dup {
		return nil, p.errorf("duplicated stack (first seen on line %d)", prev)
	}
	p.seen[key] = p.line
	return frames, nil
}

// mixAddr folds a frame address into a stack's 64-bit hash (a
// multiply–rotate mix in the manner of xxHash's rounds): duplicate stacks
// are found by hash, without keeping each stack's text.
func mixAddr(h, a uint64) uint64 {
	h ^= a * 0xc2b2ae3d27d4eb4f
	h = bits.RotateLeft64(h, 31) * 0x9e3779b185ebca87
	return h ^ h>>29
}

// scanHexAddr parses "0x" and 1 to 16 hex digits at b[i:], up to the next
// blank or the end. It returns the address and where the field ends.
func scanHexAddr(b []byte, i int) (uint64, int, bool) {
	end := i
	for end < len(b) && b[end] != ' ' && b[end] != '\t' {
		end++
	}
	f := b[i:end]
	if len(f) < 3 || len(f) > 18 || f[0] != '0' || f[1] != 'x' {
		return 0, end, false
	}
	var a uint64
	for _, c := range f[2:] {
		d := hexValue[c]
		if d > 15 {
			return 0, end, false
		}
		a = a<<4 | uint64(d)
	}
	return a, end, true
}

// hexValue maps a byte to its hex digit value, or 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i], t['A'+i] = 10+i, 10+i
	}
	return t
}()

// finish decides how the numbers were written (raw or prof_unbias) and
// checks the dump is whole.
func (p *jeParser) finish(hasMaps bool) error {
	raw := p.header == p.sum
	mode := p.opt.JemallocUnbias
	unbiased := false
	switch mode {
	case "", "auto":
		unbiased = !raw
		if raw {
			p.prof.Source.Detail = "prof_unbias=off (detected: header totals equal the sum of the stacks)"
		} else {
			p.prof.Source.Detail = "prof_unbias=on (detected: header totals differ from the sum of the stacks)"
		}
	case "on":
		unbiased = true
		p.prof.Source.Detail = "prof_unbias=on (--jemalloc-unbias)"
	case "off":
		p.prof.Source.Detail = "prof_unbias=off (--jemalloc-unbias)"
	default:
		return fmt.Errorf("--jemalloc-unbias %q: want auto, on or off", mode)
	}
	if unbiased {
		for i := range p.prof.Records {
			p.prof.Records[i].InUse.Enc = JemallocUnbias
			p.prof.Records[i].Alloc.Enc = JemallocUnbias
		}
		for i := range p.prof.ThreadRecords {
			p.prof.ThreadRecords[i].InUse.Enc = JemallocUnbias
			p.prof.ThreadRecords[i].Alloc.Enc = JemallocUnbias
		}
	}
	if p.sum.accObjs == 0 && p.header.accObjs == 0 {
		p.prof.HasAlloc = false // prof_accum was off: alloc values are all zero
	}
	if p.rate == 1 {
		for i := range p.prof.Records {
			p.prof.Records[i].Scheme = Exact
		}
		for i := range p.prof.ThreadRecords {
			p.prof.ThreadRecords[i].Scheme = Exact
		}
	}
	if !hasMaps && (!raw && !p.decodedTotalsAgree() || !p.lastStackWhole(unbiased)) {
		return &Error{File: p.name, Line: p.line, Offset: -1,
			Msg: "truncated: the dump has no MAPPED_LIBRARIES section and its lines do not add up to its totals (--keep-going reads it anyway)"}
	}
	return nil
}

// decodedTotalsAgree checks, for a prof_unbias dump, that the decoded header
// totals are close to the sum of the decoded stacks: lines are encoded
// independently, so only decoded values add up. A dump cut short at a line
// boundary loses stacks and fails this.
func (p *jeParser) decodedTotalsAgree() bool {
	r := float64(p.rate)
	var sumCur, sumAcc float64
	for _, rec := range p.prof.Records {
		_, b := unbias.JeprofDecode(rec.InUse.Objects, rec.InUse.Bytes, r)
		sumCur += b
		_, b = unbias.JeprofDecode(rec.Alloc.Objects, rec.Alloc.Bytes, r)
		sumAcc += b
	}
	_, hCur := unbias.JeprofDecode(float64(p.header.curObjs), float64(p.header.curBytes), r)
	_, hAcc := unbias.JeprofDecode(float64(p.header.accObjs), float64(p.header.accBytes), r)
	// Whole dumps agree to ~0.2% (rounding of each line's encoding); a
	// missing one-sample stack is already ~R bytes off.
	within := func(a, b float64) bool { return math.Abs(a-b) <= 0.005*math.Max(a, b) }
	return within(sumCur, hCur) && within(sumAcc, hAcc)
}

// lastStackWhole checks that the last stack's thread lines add up to its
// t* line (exactly in raw mode, after decoding under prof_unbias): a dump
// cut between them would otherwise pass for a whole one.
func (p *jeParser) lastStackWhole(unbiased bool) bool {
	if len(p.prof.Records) == 0 {
		return p.header == jeCounts{}
	}
	if p.lastNThr == 0 {
		return false // jemalloc writes at least one thread line per stack
	}
	if !unbiased {
		return p.lastSum == p.lastT
	}
	r := float64(p.rate)
	_, hCur := unbias.JeprofDecode(float64(p.lastT.curObjs), float64(p.lastT.curBytes), r)
	_, hAcc := unbias.JeprofDecode(float64(p.lastT.accObjs), float64(p.lastT.accBytes), r)
	return near(p.lastDec[0], hCur, r) && near(p.lastDec[1], hAcc, r)
}

// near compares decoded byte totals, which agree only up to the rounding
// of each line's encoding.
func near(a, b, rate float64) bool { return math.Abs(a-b) <= 0.05*math.Max(a, b)+rate }


// threadPrefix splits "  tX: rest" into X and rest.
func threadPrefix(l []byte) (string, []byte, bool) {
	t := bytes.TrimLeft(l, " \t")
	if len(t) < 3 || t[0] != 't' {
		return "", nil, false
	}
	colon := bytes.IndexByte(t, ':')
	if colon < 2 {
		return "", nil, false
	}
	uid := t[1:colon]
	if !(len(uid) == 1 && uid[0] == '*') {
		if _, err := parseUint(uid); err != nil {
			return "", nil, false
		}
	}
	return string(uid), t[colon+1:], true
}

// parseCounts parses " a: b [c: d]" and, if allowName, a trailing name.
func parseCounts(s []byte, allowName bool) (jeCounts, string, error) {
	var c jeCounts
	var vals [4]uint64
	i := 0
	for k, f := range countFields {
		i = skipBlanks(s, i)
		start := i
		var v uint64
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if v > (math.MaxUint64-d)/10 {
				return c, "", fmt.Errorf("%s: %q: value out of range", f.what, clip(numberAt(s, start)))
			}
			v = v*10 + d
			i++
		}
		if i == start {
			return c, "", fmt.Errorf("expected %s (an unsigned integer), got %q", f.what, clip(s[start:]))
		}
		vals[k] = v
		i = skipBlanks(s, i)
		if i == len(s) || s[i] != f.sep {
			return c, "", fmt.Errorf("expected '%c' after %s", f.sep, f.what)
		}
		i++
	}
	c = jeCounts{vals[0], vals[1], vals[2], vals[3]}
	name := ""
	if rest := s[i:]; len(rest) > 0 {
		if !allowName || (rest[0] != ' ' && rest[0] != '\t') {
			return c, "", fmt.Errorf("unexpected text %q after the counts", clip(rest))
		}
		name = string(bytes.TrimSpace(rest))
	}
	if (c.curObjs == 0) != (c.curBytes == 0) || (c.accObjs == 0) != (c.accBytes == 0) {
		return c, "", fmt.Errorf("objects and bytes must be both zero or both non-zero")
	}
	return c, name, nil
}

// countFields names the four numbers of a counts line and the separator
// that follows each.
var countFields = [4]struct {
	what string
	sep  byte
}{
	{"current objects", ':'},
	{"current bytes", '['},
	{"accumulated objects", ':'},
	{"accumulated bytes", ']'},
}

func skipBlanks(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// numberAt is the run of digits at s[i:], for error messages.
func numberAt(s []byte, i int) []byte {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return s[i:j]
}

func addCounts(a, b jeCounts) (jeCounts, error) {
	var r jeCounts
	var over bool
	add := func(x, y uint64) uint64 {
		s := x + y
		if s < x {
			over = true
		}
		return s
	}
	r.curObjs, r.curBytes = add(a.curObjs, b.curObjs), add(a.curBytes, b.curBytes)
	r.accObjs, r.accBytes = add(a.accObjs, b.accObjs), add(a.accBytes, b.accBytes)
	if over {
		return r, fmt.Errorf("the stacks' counts overflow uint64 when summed")
	}
	return r, nil
}

func parseUint(b []byte) (uint64, error) {
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			return 0, fmt.Errorf("%q: %v", clip(b), ne.Err)
		}
		return 0, err
	}
	return v, nil
}

// clip shortens b for error messages.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
