package pprof

// Java heap profiles in text ("--- heapz 1 ---"), the legacy format
// google/pprof reads for Java heap samples:
//
//	--- heapz 1 ---
//	format = java
//	resolution = bytes
//	   7048     1 @ 0x00000003 0x00000004 ...
//	     ...
//	 0x00000003 com.example.Foo.bar (Foo.java:103)
//
// Each sample line is the bytes, then the number of objects, sampled at
// one stack (leaf first); the "addresses" are location ids that the lines
// after the samples name. The heap was sampled per byte with a mean period
// of 512 KiB, which the file does not say (pprof assumes it too). The
// counts are raw: heapest unbiases them as gperftools' lines.

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/heapest/heapest/internal/textscan"
	"github.com/heapest/heapest/parse"
)

// javaHeapHeader is the first line of a Java heap profile.
const javaHeapHeader = "--- heapz 1 ---"

// javaHeapRate is the sampling period of Java heap profiles: 512 KiB,
// fixed by the producer and not written in the file.
const javaHeapRate = 512 << 10

// DetectJavaHeap accepts a Java heap profile's header line.
func DetectJavaHeap(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	return string(bytes.TrimSpace(line)) == javaHeapHeader
}

// javaParser reads one Java heap profile.
type javaParser struct {
	name      string
	keepGoing bool
	sc        *bufio.Scanner
	ends      *lineEnds
	line      int
	out       *parse.Profile
	sink      parse.Sink
	rec       parse.Record
	stack     []parse.Frame
	names     map[uint64]string
}

// ParseJavaHeap reads a Java heap profile, sending one raw-count record per
// sample line; frames are named from the location lines that follow.
func ParseJavaHeap(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLegacyLine)
	ends := &lineEnds{}
	sc.Split(ends.split)
	jp := &javaParser{name: name, keepGoing: opt.KeepGoing, sc: sc, ends: ends, sink: sink, names: map[uint64]string{},
		out: &parse.Profile{HasInUse: true, Source: parse.Source{Format: "java-heapz", Rate: javaHeapRate,
			Detail: "Java heap text (heapz), raw counts at a 512 KiB period"}}}
	jp.rec = parse.Record{Scheme: parse.Bernoulli, Rate: javaHeapRate}
	if opt.Rate > 0 && opt.Rate != javaHeapRate {
		jp.out.Warnings = append(jp.out.Warnings, rateIgnored(opt.Rate, javaHeapRate, "as Java heap profiles are"))
	}
	first, more, err := jp.header()
	if err != nil {
		return nil, err
	}
	if err := jp.body(first, more); err != nil {
		return nil, err
	}
	jp.out.Names = func(addr uint64) string { return jp.names[addr] }
	jp.out.NamesByID = true
	return jp.out, nil
}

// next reads the next line, trimmed; ok is false at the end.
func (jp *javaParser) next() (text []byte, ok bool, err error) {
	if !jp.sc.Scan() {
		if err := jp.sc.Err(); err != nil {
			return nil, false, &parse.Error{File: jp.name, Line: jp.line + 1, Msg: "reading", Err: err}
		}
		return nil, false, nil
	}
	jp.line++
	return bytes.TrimSpace(jp.sc.Bytes()), true, nil
}

// header reads the header line and the "key = value" attributes, and
// returns the first line after them (more is false at the end of the file).
func (jp *javaParser) header() (text []byte, more bool, err error) {
	text, ok, err := jp.next()
	if err != nil || !ok || string(text) != javaHeapHeader {
		return nil, false, firstErr(err, &parse.Error{File: jp.name, Line: 1, Msg: "expected \"" + javaHeapHeader + "\""})
	}
	for {
		if text, ok, err = jp.next(); err != nil || !ok {
			return nil, false, err
		}
		key, value, isAttr := strings.Cut(string(text), "=")
		if len(text) == 0 || !isAttr || bytes.Contains(text, []byte("@")) {
			return text, true, nil
		}
		if err := jp.attribute(strings.TrimSpace(key), strings.TrimSpace(value)); err != nil {
			return nil, false, err
		}
	}
}

// attribute checks one header attribute: heapest reads Java heap profiles
// in bytes, and knows no other attribute of them.
func (jp *javaParser) attribute(key, value string) error {
	switch {
	case key == "format" && value == "java", key == "resolution" && value == "bytes":
		return nil
	case key == "format" || key == "resolution":
		return &parse.Error{File: jp.name, Line: jp.line, Msg: fmt.Sprintf("%s = %q: expected format = java, resolution = bytes", key, value)}
	}
	return &parse.Error{File: jp.name, Line: jp.line, Msg: fmt.Sprintf("unknown header attribute %q (expected format or resolution)", key)}
}

// body reads the sample lines, then the location lines; text is the
// first line after the header, more says there is one. The locations
// begin at the first line of a location id ("0x…") with no "@": a sample
// line cut or damaged before its "@" is an error, not their start.
func (jp *javaParser) body(text []byte, more bool) error {
	for more {
		if bytes.HasPrefix(text, []byte("0x")) && !bytes.Contains(text, []byte("@")) {
			return jp.locations(text)
		}
		if jp.ends.cut {
			return jp.cutShort()
		}
		if err := jp.sample(text); err != nil {
			return err
		}
		var err error
		if text, more, err = jp.next(); err != nil {
			return err
		}
	}
	return nil
}

// sample reads "BYTES COUNT @ 0x1 0x2 ..." and sends its record.
func (jp *javaParser) sample(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	counts, addrs, ok := bytes.Cut(text, []byte("@"))
	b, rest := textscan.Next(counts)
	n, rest := textscan.Next(rest)
	extra, _ := textscan.Next(rest)
	bytesN, err1 := strconv.ParseInt(string(b), 10, 64)
	count, err2 := strconv.ParseInt(string(n), 10, 64)
	if !ok || err1 != nil || err2 != nil || extra != nil || bytesN < 0 || count <= 0 {
		return &parse.Error{File: jp.name, Line: jp.line, Msg: fmt.Sprintf("expected \"BYTES COUNT @ ids\" with COUNT > 0, got %.60q", text)}
	}
	var bad []byte
	if jp.stack, bad = hexFrames(jp.stack[:0], addrs, false); bad != nil {
		return &parse.Error{File: jp.name, Line: jp.line, Msg: fmt.Sprintf("bad location id %.40q: expected 0x-prefixed hex", bad)}
	}
	jp.rec.Stack = jp.stack
	jp.rec.InUse = rawCounts(count, bytesN, false)
	jp.out.Records++
	jp.out.Source.Samples += float64(count)
	jp.sink.Record(&jp.rec)
	return nil
}

// cutShort ends a sample section whose last line has no line ending: the
// file was cut there, and the line's sample with it. It is an error; with
// --keep-going the samples before it are kept (their frames unnamed: the
// location lines were after the cut), with a warning.
func (jp *javaParser) cutShort() error {
	err := &parse.Error{File: jp.name, Line: jp.line, Msg: "truncated: last line has no line ending"}
	if !jp.keepGoing || jp.out.Records == 0 {
		return err
	}
	jp.out.Warnings = append(jp.out.Warnings, fmt.Sprintf("--keep-going: %v; kept the %d samples before it, their frames unnamed", err, jp.out.Records))
	jp.out.Source.Salvaged = true
	return nil
}

// locations reads " 0x3 com.example.Foo.bar (Foo.java:103)" lines, the
// first of which is text. The last, cut short, is left out with a
// warning: its name may be cut.
func (jp *javaParser) locations(text []byte) error {
	for {
		if jp.ends.cut {
			jp.out.Warnings = append(jp.out.Warnings, "the location lines are cut short (the last has no line ending): the file was truncated there, and frames of the locations it left out are unnamed")
			return nil
		}
		if len(text) > 0 {
			if err := jp.location(text); err != nil {
				return err
			}
		}
		var ok bool
		var err error
		if text, ok, err = jp.next(); err != nil || !ok {
			return err
		}
	}
}

// location reads one location line into names.
func (jp *javaParser) location(text []byte) error {
	idText, rest := textscan.Next(text)
	id, err := strconv.ParseUint(string(idText), 0, 64)
	desc := strings.TrimSpace(string(rest))
	if err != nil || desc == "" {
		return &parse.Error{File: jp.name, Line: jp.line, Msg: fmt.Sprintf("expected \"0xID name (File.java:line)\", got %.60q", text)}
	}
	jp.names[id] = javaFrameName(desc)
	return nil
}

// javaFrameName is a location's function: the text before " (file:line)"
// or " (library path)"; generated code is "STUB", as pprof names it.
func javaFrameName(desc string) string {
	if strings.Contains(desc, "generated stub/JIT") {
		return "STUB"
	}
	if strings.HasSuffix(desc, ")") {
		if i := strings.LastIndex(desc, " ("); i > 0 {
			return strings.TrimSpace(desc[:i])
		}
	}
	return desc // the agent's states: "GC", "VM"
}

// firstErr returns err when it is set, else def.
func firstErr(err error, def *parse.Error) error {
	if err != nil {
		return err
	}
	if def == nil {
		return nil
	}
	return def
}
