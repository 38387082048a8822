package parse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// Options tune parsing. The zero value is usable.
type Options struct {
	// JemallocUnbias is "auto" (detect), "on" or "off": how jemalloc 5.3
	// dumps' numbers are to be read.
	JemallocUnbias string
	// Rate overrides or supplies the sampling period in bytes (0: from file).
	Rate float64
	// KeepGoing salvages what precedes a truncation or a bad record, with a
	// warning saying what was skipped, instead of failing.
	KeepGoing bool
	// Threads keeps per-thread breakdowns (Profile.ThreadRecords) where
	// the format has them; they cost memory and only --by thread uses them.
	Threads bool
	// MaxDecompressed bounds gzip output in bytes (0: DefaultMaxDecompressed).
	MaxDecompressed int64
	// sizeHint is the input's size when known (ReadFile of an uncompressed
	// file), for parsers to size their record slices once.
	sizeHint int64
}

// DefaultMaxDecompressed bounds decompressed input: no real heap profile
// comes near it, and a gzip bomb stops here.
const DefaultMaxDecompressed = 4 << 30

// Error is a parse failure located in its input.
type Error struct {
	File string
	// Line is 1-based for text formats, 0 when not applicable.
	Line int
	// Offset is the byte offset for binary formats, -1 when not applicable.
	Offset int64
	Msg    string
	Err    error
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

// ErrUnrecognized is returned when no parser recognizes the input.
var ErrUnrecognized = errors.New("unrecognized profile format (expected a jemalloc heap_v2 dump, gperftools/pprof legacy heap text, pprof protobuf, nettrace or JFR)")

// Format is a parser registered for a format.
type Format struct {
	// Name is the format's name in output ("jemalloc", "pprof", ...).
	Name string
	// Detect reports whether the (decompressed) head of the input, up to
	// 4096 bytes, is this format.
	Detect func(head []byte) bool
	// Parse reads the whole input. name is used in errors.
	Parse func(name string, r *bufio.Reader, opt Options) (*Profile, error)
}

var formats []Format

// Register adds a format. Formats are tried in registration order, so
// specific magic numbers must register before catch-alls (see init order:
// files are initialised in name order, so catch-alls use Fallback).
func Register(f Format) { formats = append(formats, f) }

// fallback is tried when no registered format's Detect matches (pprof
// protobuf has no magic number).
var fallback *Format

// RegisterFallback sets the format tried when no other detects the input.
func RegisterFallback(f Format) { fallback = &f }

// ReadFile parses the profile at path; "-" reads standard input.
func ReadFile(path string, opt Options) (*Profile, error) {
	if path == "-" {
		return Read("<stdin>", os.Stdin, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		opt.sizeHint = st.Size()
	}
	return Read(path, f, opt)
}

// Read detects the format of r (gzip-compressed or not) and parses it.
func Read(name string, r io.Reader, opt Options) (*Profile, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		max := opt.MaxDecompressed
		if max <= 0 {
			max = DefaultMaxDecompressed
		}
		br = bufio.NewReaderSize(&boundedReader{r: zr, left: max, name: name}, 64<<10)
		opt.sizeHint = 0 // the compressed size says little
	}
	head, err := br.Peek(4096)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return nil, &Error{File: name, Offset: 0, Msg: "reading", Err: err}
		}
		return nil, &Error{File: name, Offset: -1, Msg: "empty file"}
	}
	for _, f := range formats {
		if f.Detect(head) {
			return parseWith(f, name, br, opt)
		}
	}
	if fallback != nil && fallback.Detect(head) {
		return parseWith(*fallback, name, br, opt)
	}
	return nil, &Error{File: name, Offset: -1, Err: ErrUnrecognized, Msg: "cannot read"}
}

func parseWith(f Format, name string, br *bufio.Reader, opt Options) (*Profile, error) {
	p, err := f.Parse(name, br, opt)
	if err != nil {
		return nil, err
	}
	p.Source.Path = name
	if p.Source.Format == "" {
		p.Source.Format = f.Name
	}
	return p, nil
}

// ErrTooLarge is returned when decompressed input exceeds the bound.
var ErrTooLarge = errors.New("decompressed input exceeds the size limit")

// boundedReader stops a gzip bomb: it fails once more than left bytes came out.
type boundedReader struct {
	r    io.Reader
	left int64
	name string
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &Error{File: b.name, Offset: -1, Msg: "gzip input", Err: ErrTooLarge}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// hasPrefix reports whether head starts with prefix, ignoring a UTF-8 BOM.
func hasPrefix(head []byte, prefix string) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	return bytes.HasPrefix(head, []byte(prefix))
}
