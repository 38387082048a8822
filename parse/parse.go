package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/heapest/heapest/internal/units"
)

// Options tune parsing. The zero value is usable.
type Options struct {
	// JemallocUnbias is "auto" (detect), "on" or "off": how jemalloc 5.3
	// dumps' numbers are to be read.
	JemallocUnbias string
	// Rate overrides or supplies the sampling period in bytes (0: from
	// file). A parser whose input carries its own period warns that it
	// used which one, or refuses, rather than ignoring it silently.
	Rate float64
	// KeepGoing salvages what precedes a truncation or a bad record, with a
	// warning saying what was skipped, instead of failing.
	KeepGoing bool
	// Threads asks for per-thread breakdown records (Record.Breakdown)
	// where the format has them; they cost time and only --by thread uses
	// them.
	Threads bool
	// MaxDecompressed bounds gzip output in bytes (0: DefaultMaxDecompressed).
	MaxDecompressed int64
	// Lines names frames by source line, not by function alone, where the
	// input (or the symbolizer) has lines: "func file:line" (LineName),
	// as pprof's -lines does.
	Lines bool
	// SizeHint is the input's size when known (an uncompressed regular
	// file), for parsers to size their tables once; 0 when unknown.
	SizeHint int64
}

// DefaultMaxDecompressed bounds decompressed input: real heap profiles
// are tens of MB (a merge of a large fleet, a few hundred), and a gzip
// bomb stops here, before it costs gigabytes. --max-decompressed raises it.
const DefaultMaxDecompressed = 512 << 20

// Error is a parse failure located in its input.
type Error struct {
	File string
	// Line is 1-based for text formats, 0 when not applicable.
	Line int
	// Offset is the byte offset for binary formats, -1 when not applicable.
	Offset int64
	Msg    string
	Err    error
	// Whole is set when nothing of the input can be read without what
	// the failure lost (a protobuf message cut short, a dump cut before
	// its first record): --keep-going salvages nothing of it.
	Whole bool
}

func (e *Error) Error() string {
	loc := e.File
	switch {
	case e.Line > 0:
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Offset >= 0:
		loc = fmt.Sprintf("%s: byte %d", e.File, e.Offset)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", loc, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Readable lists, for messages, what heapest reads (parse/formats has
// the formats themselves).
const Readable = "jemalloc heap_v2 dumps, gperftools, Go and Java heap profile text, pprof protos (gzipped or not), nettrace, JFR, memray CSV, V8 .heapprofile and DHAT files"

// ErrUnrecognized is returned when no parser recognizes the input.
var ErrUnrecognized = errors.New("unrecognized profile format; heapest reads " + Readable)

// ErrTooLarge is returned when decompressed input exceeds the bound.
var ErrTooLarge = errors.New("decompressed input exceeds the size limit")

// Bounded returns a reader of r that fails with ErrTooLarge, located in
// file name, once more than max bytes came out: what stops a gzip bomb.
// max ≤ 0 means DefaultMaxDecompressed.
func Bounded(name string, r io.Reader, max int64) io.Reader {
	if max <= 0 {
		max = DefaultMaxDecompressed
	}
	return &boundedReader{r: r, left: max, max: max, name: name}
}

type boundedReader struct {
	r         io.Reader
	left, max int64
	name      string
	hit       error // the bound's error, once a read met it
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Exactly max bytes is within the bound: only one more is not.
		var one [1]byte
		if n, err := b.r.Read(one[:]); n == 0 {
			return 0, err
		}
		b.hit = &Error{File: b.name, Offset: -1, Msg: fmt.Sprintf("gzip input decompresses to more than %s (a gzip bomb, or --max-decompressed raises the bound)", units.Exact(b.max)), Err: ErrTooLarge, Whole: true}
		return 0, b.hit
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// Exceeded is the bound's error when r, a reader Bounded made, refused to
// read past its bound (nil otherwise): the cause of whatever a parser
// that met it said of the input (cut short, no format it knows).
func Exceeded(r io.Reader) error {
	if b, ok := r.(*boundedReader); ok {
		return b.hit
	}
	return nil
}

// HasPrefix reports whether head starts with prefix, ignoring a UTF-8 BOM.
func HasPrefix(head []byte, prefix string) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	return bytes.HasPrefix(head, []byte(prefix))
}

// JSONStarts reports whether the JSON text head starts with prefix, its
// whitespace and a byte-order mark aside: how a JSON format whose writers
// put known keys first is told by content.
func JSONStarts(head []byte, prefix string) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	got := make([]byte, 0, len(prefix))
	for _, c := range head {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		got = append(got, c)
		if len(got) == len(prefix) {
			break
		}
	}
	return string(got) == prefix
}

// RateText writes a sampling period (--rate, a file's) as a number of
// bytes in full, 1048576 rather than %g's 1.048576e+06.
func RateText(rate float64) string { return strconv.FormatFloat(rate, 'f', -1, 64) }

// JSONEnd checks that nothing but white space follows the JSON value dec
// has read, reading the input to its end, so that a gzip stream's
// checksum is checked too: a second profile or garbage after the first is
// damage, and a decoder that stops after one value would not see it.
func JSONEnd(dec *json.Decoder) error {
	at := dec.InputOffset()
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return fmt.Errorf("after the profile, at byte %d: %w", at, err)
	}
	return fmt.Errorf("more data after the profile, at byte %d (%v): two profiles in one file, or damage", at, tok)
}
