package jemalloc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Detect reports whether head, the first bytes of an input, is a jemalloc
// dump: a heap_v2 header, possibly behind jeprof's symbol section. A
// symbol section may hold a legacy heap profile too (LegacyText).
func Detect(head []byte) bool {
	return parse.HasPrefix(head, "heap_v2/") || parse.HasPrefix(head, "--- symbol") || parse.HasPrefix(head, "--- heap")
}

// LegacyText is Parse's error for a pprof --raw file whose profile is a
// legacy heap profile's text ("heap profile: ..."), not a jemalloc dump:
// gperftools' google-pprof --raw writes the profile it fetched over HTTP
// so. The caller reads it as that format, Header (on line Line) and then
// the rest of the reader Parse was given, and names its frames with
// Symbols.
type LegacyText struct {
	Symbols map[uint64]string
	Header  []byte
	Line    int
}

func (e *LegacyText) Error() string {
	return fmt.Sprintf("line %d: a legacy heap profile (%q) behind a --raw symbol section, not a jemalloc dump", e.Line, clip(e.Header))
}

// maxLine bounds one text line: a 128-frame stack line is ~2.5 KB, so
// anything near this is not a jemalloc dump.
const maxLine = 1 << 20

// jeCounts is one "a: b [c: d]" quadruple.
type jeCounts struct{ curObjs, curBytes, accObjs, accBytes uint64 }

// mode is how --jemalloc-unbias says the numbers are written.
type mode uint8

const (
	modeAuto mode = iota
	modeOn
	modeOff
)

func parseMode(s string) (mode, error) {
	switch s {
	case "", "auto":
		return modeAuto, nil
	case "on":
		return modeOn, nil
	case "off":
		return modeOff, nil
	}
	return 0, fmt.Errorf("--jemalloc-unbias %q: want auto, on or off", s)
}

// state is where in the dump the body lines are.
type state uint8

const (
	inHeader state = iota // before the first stack: header thread lines
	wantT                 // after an @ line: its t* line must follow
	inStack               // after a stack's t* line: its thread lines
)

type parser struct {
	name  string
	r     *bufio.Reader
	line  int
	last  []byte // current line without its line ending
	hadNL bool   // whether the current line ended with '\n'
	long  []byte // reused buffer for lines longer than r's buffer
	opt   parse.Options
	mode  mode
	sink  parse.Sink
	prof  *parse.Profile
	rate  uint64
	state state

	rec    parse.Record  // the record handed to the sink, reused
	frames []parse.Frame // the current stack, reused
	enc    parse.Encoding

	header jeCounts
	sum    jeCounts // exact sum of the stacks' t* lines
	// oddBytes says a stack's bytes are no sum of size classes (all
	// multiples of 8): they were written by prof_unbias's encoding.
	oddBytes bool
	decSum   [2]float64 // sum of their decoded current and accumulated bytes
	lastT    jeCounts   // the last stack's t* line
	// thr holds the current stack's thread lines, the only ones a
	// truncation can leave incomplete (lastStackWhole).
	thr []jeCounts

	names       map[string]string // thread uid -> name, from the header
	threadNames map[string]string // thread uid -> "tUID name", interned
	dups        dupCheck          // hashes of the stacks read, to reject duplicates
	seed        uint64            // random, so that no input can aim at collisions
	// rawBinary is the binary= line of a --raw symbol section.
	rawBinary string
}

// binaryHint says, for an error about a --raw file, which binary to name
// the profile's frames with, when its symbol section says.
func (p *parser) binaryHint() string {
	if p.rawBinary == "" {
		return ""
	}
	return ", with --binary " + p.rawBinary + " to name its frames"
}

// Parse reads a jemalloc dump from r and sends each stack to sink as it is
// read: a record per stack, and with opt.Threads a Breakdown record per
// thread line. Under --jemalloc-unbias auto their counts are Unresolved and
// the returned Profile's Encoding says how to read them (see the package
// doc and salvagedEncoding for a dump salvaged by opt.KeepGoing). name is
// used in errors and warnings.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	m, err := parseMode(opt.JemallocUnbias)
	if err != nil {
		return nil, err
	}
	p := &parser{name: name, r: r, opt: opt, mode: m, sink: sink,
		prof:  &parse.Profile{HasInUse: true, HasAlloc: true, Source: parse.Source{Format: "jemalloc"}},
		names: map[string]string{}, threadNames: map[string]string{},
		seed: new(maphash.Hash).Sum64()}
	// A stack block takes some 400 to 800 bytes: sizing from the file
	// size avoids regrowing the duplicate check many times.
	p.dups.init(opt.KeepGoing, int(min(opt.SizeHint/384, 1<<24)))
	switch m {
	case modeAuto:
		p.enc = parse.Unresolved // finish sets prof.Encoding
	case modeOn:
		p.enc, p.prof.Encoding = parse.JemallocUnbias, parse.JemallocUnbias
	}
	if err := p.parse(); err != nil {
		var pe *parse.Error
		if p.prof.Records == 0 && errors.As(err, &pe) {
			pe.Whole = true // cut before its first stack: nothing to salvage
		}
		if !opt.KeepGoing || p.prof.Records == 0 {
			return nil, err
		}
		p.prof.Warnings = append(p.prof.Warnings, fmt.Sprintf("--keep-going: %v; kept the %d stacks before it", err, p.prof.Records))
		p.prof.Source.Salvaged = true
		p.salvagedEncoding()
	}
	return p.prof, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return &parse.Error{File: p.name, Line: p.line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// next reads the next line; io.EOF at the end.
func (p *parser) next() error {
	line, err := p.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		if line, err = p.longLine(line); err == errTooLong {
			p.line++
			return p.errorf("line longer than %d bytes: not a jemalloc dump", maxLine)
		}
	}
	if err != nil && err != io.EOF {
		return &parse.Error{File: p.name, Line: p.line + 1, Offset: -1, Msg: "reading", Err: err}
	}
	if len(line) == 0 && err == io.EOF {
		return io.EOF
	}
	p.line++
	n := len(line)
	p.hadNL = n > 0 && line[n-1] == '\n'
	for n > 0 && (line[n-1] == '\n' || line[n-1] == '\r') {
		n--
	}
	p.last = line[:n]
	return nil
}

var errTooLong = errors.New("line too long")

// longLine gathers a line longer than the reader's buffer, of which head
// was read, into p.long, bounded by maxLine.
func (p *parser) longLine(head []byte) ([]byte, error) {
	buf := append(p.long[:0], head...)
	var err error = bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		if len(buf) > maxLine {
			return nil, errTooLong
		}
		var more []byte
		more, err = p.r.ReadSlice('\n')
		buf = append(buf, more...)
	}
	p.long = buf
	return buf, err
}

func (p *parser) parse() error {
	if err := p.next(); err != nil {
		return p.errorf("empty file: expected a heap_v2/R header")
	}
	if bytes.HasPrefix(p.last, []byte("--- symbol")) {
		if err := p.parseSymbols(); err != nil {
			return err
		}
	}
	if marker := string(p.last); marker == "--- heap" || strings.HasPrefix(marker, "--- heap ") || marker == "--- profile" {
		if err := p.next(); err != nil {
			return p.errorf("truncated: expected a heap_v2/R header after %s", marker)
		}
		if bytes.HasPrefix(p.last, []byte("heap profile:")) {
			return &LegacyText{Symbols: p.prof.Symbols, Header: bytes.Clone(p.last), Line: p.line}
		}
		if marker == "--- profile" && !bytes.HasPrefix(p.last, []byte("heap_v2/")) {
			// google-pprof --raw on a file: PrintProfileData writes the
			// profile in CPU form (pairs of counts and stacks, binary),
			// which holds no heap values.
			return p.errorf("google-pprof --raw wrote this profile in its binary CPU form, without the heap profile's values (it copies a profile as text only when it fetched it over HTTP): give heapest the heap profile itself%s", p.binaryHint())
		}
	}
	if err := p.parseHeader(); err != nil {
		return err
	}
	hasMaps, err := p.parseBody()
	if line, prev, dup := p.dups.first(); dup {
		// Found only now, but it comes first in the file.
		return &parse.Error{File: p.name, Line: line, Offset: -1, Msg: fmt.Sprintf("duplicated stack (first seen on line %d)", prev)}
	}
	if err != nil {
		return err
	}
	return p.finish(hasMaps)
}

// parseSymbols reads jeprof's "--- symbol" section up to its "---" line.
func (p *parser) parseSymbols() error {
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
			p.rawBinary = string(l[len("binary="):])
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

func (p *parser) parseHeader() error {
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
	p.setRate(r)
	if err := p.next(); err != nil {
		return p.errorf("truncated: expected the \"  t*: \" totals line after the header")
	}
	_, star, rest, ok := threadPrefix(p.last)
	if !ok || !star {
		return p.errorf("expected the \"  t*: \" totals line, got %q", clip(p.last))
	}
	if p.header, _, err = parseCounts(rest, false); err != nil {
		return p.errorf("totals line: %v", err)
	}
	return nil
}

// setRate takes the dump's sampling period R: every record has it, and a
// --rate that differs is ignored, with a warning.
func (p *parser) setRate(r uint64) {
	p.rate = r
	p.prof.Source.Rate = float64(r)
	p.rec.Rate = float64(r)
	p.rec.Scheme = parse.Geometric // prof_sample_new_event_wait: a trial per byte
	if r == 1 {
		p.rec.Scheme = parse.Exact
	}
	if p.opt.Rate != 0 && p.opt.Rate != float64(r) {
		p.prof.Warnings = append(p.prof.Warnings, fmt.Sprintf("--rate %s ignored: the file's sampling period %d is used",
			parse.RateText(p.opt.Rate), r))
	}
}

// parseBody reads header thread lines, stacks and the maps section.
// It reports whether MAPPED_LIBRARIES was present.
func (p *parser) parseBody() (bool, error) {
	for {
		err := p.next()
		if err == io.EOF {
			if p.state == wantT {
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
			if p.state == wantT {
				return false, p.errorf("expected the \"  t*: \" line of the previous stack, got a new @ line")
			}
			if err := p.parseStack(l); err != nil {
				return false, err
			}
			p.state = wantT
		case bytes.HasPrefix(l, []byte("MAPPED_LIBRARIES:")):
			if p.state == wantT {
				return false, p.errorf("expected the \"  t*: \" line of the previous stack, got MAPPED_LIBRARIES")
			}
			maps, err := io.ReadAll(io.LimitReader(p.r, 64<<20))
			if err != nil {
				return false, &parse.Error{File: p.name, Line: p.line + 1, Offset: -1, Msg: "reading MAPPED_LIBRARIES", Err: err}
			}
			if n := len(maps); n > 0 && maps[n-1] != '\n' {
				// /proc/<pid>/maps ends its lines: the dump was cut in
				// its last section. The stacks are whole; the cut line
				// would map a file to a wrong range.
				maps = maps[:bytes.LastIndexByte(maps, '\n')+1]
				p.prof.Warnings = append(p.prof.Warnings, "MAPPED_LIBRARIES cut short (its last line has no end): the dump was truncated there; its stacks are whole, and frames in the libraries the cut left out are unsymbolized")
			}
			p.prof.MapsText, p.prof.MapsLine = maps, p.line+1
			return true, nil
		default:
			uid, star, rest, ok := threadPrefix(l)
			if !ok {
				return false, p.errorf("expected \"@ 0xADDR...\", \"  tN: counts\" or MAPPED_LIBRARIES:, got %q", clip(l))
			}
			if err := p.countsLine(uid, star, rest); err != nil {
				return false, err
			}
		}
	}
}

// countsLine handles one "  tX: ..." line in the body; star is X == "*".
func (p *parser) countsLine(uid []byte, star bool, rest []byte) error {
	headerThread := p.state == inHeader && !star
	c, ok := countsFast(rest)
	name := ""
	if !ok {
		var err error
		if c, name, err = parseCounts(rest, headerThread); err != nil {
			return p.errorf("%v", err)
		}
	}
	switch {
	case headerThread:
		if name != "" {
			p.names[string(uid)] = name
		}
	case p.state == wantT:
		if !star {
			return p.errorf("expected the \"  t*: \" line after the @ line, got thread t%s", uid)
		}
		var err error
		if p.sum, err = addCounts(p.sum, c); err != nil {
			return p.errorf("%v", err)
		}
		p.stackLine(c)
		p.state = inStack
	case p.state == inStack && !star:
		p.threadLine(uid, c)
	default:
		return p.errorf("unexpected \"  t%s: \" line", countsUID(uid, star))
	}
	return nil
}

func countsUID(uid []byte, star bool) string {
	if star {
		return "*"
	}
	return string(uid)
}

// stackLine sends the current stack with its t* counts.
func (p *parser) stackLine(c jeCounts) {
	r := float64(p.rate)
	_, cur := unbias.JeprofDecode(float64(c.curObjs), float64(c.curBytes), r)
	_, acc := unbias.JeprofDecode(float64(c.accObjs), float64(c.accBytes), r)
	p.decSum[0] += cur
	p.decSum[1] += acc
	p.lastT = c
	p.oddBytes = p.oddBytes || c.curBytes%8 != 0 || c.accBytes%8 != 0
	p.thr = p.thr[:0]
	p.send(c, "", false)
	p.prof.Records++
}

// threadLine notes a thread line of the current stack and, with
// Options.Threads, sends it as a breakdown.
func (p *parser) threadLine(uid []byte, c jeCounts) {
	p.thr = append(p.thr, c)
	if !p.opt.Threads {
		return
	}
	p.send(c, p.threadName(uid), true)
	p.prof.Breakdowns++
}

// threadName interns "tUID name" per thread.
func (p *parser) threadName(uid []byte) string {
	if th, ok := p.threadNames[string(uid)]; ok {
		return th
	}
	id := string(uid)
	th := "t" + id
	if n := p.names[id]; n != "" {
		th += " " + n
	}
	p.threadNames[id] = th
	return th
}

// send hands the current stack with counts c to the sink.
func (p *parser) send(c jeCounts, thread string, breakdown bool) {
	rec := &p.rec
	rec.Stack = p.frames
	// Stacks are numbered from 1 as their t* lines come, their thread
	// lines after them; the parser rejects a repeated stack, so each is
	// new when its t* line is sent.
	rec.StackID, rec.NewStack = uint64(p.prof.Records), !breakdown
	if !breakdown {
		rec.StackID++
	}
	rec.Thread = thread
	rec.Breakdown = breakdown
	rec.InUse = parse.Counts{Objects: float64(c.curObjs), Bytes: float64(c.curBytes), Enc: p.enc}
	rec.Alloc = parse.Counts{Objects: float64(c.accObjs), Bytes: float64(c.accBytes), Enc: p.enc}
	p.sink.Record(rec)
}

// parseStack reads an "@ 0xADDR ..." line into p.frames and rejects a stack
// seen before.
func (p *parser) parseStack(l []byte) error {
	if len(l) > 1 && l[1] != ' ' {
		return p.errorf("expected \"@ 0xADDR ...\", got %q", clip(l))
	}
	frames, h, bad, badEnd := scanStack(l[1:], p.frames, p.seed)
	p.frames = frames
	if bad >= 0 {
		return p.errorf("expected a 0x-prefixed hex address, got %q", clip(l[1+bad:1+badEnd]))
	}
	if prev, dup := p.dups.add(h, p.line); dup {
		return p.errorf("duplicated stack (first seen on line %d)", prev)
	}
	return nil
}
