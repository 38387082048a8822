// Package formats is the one list of the input formats heapest reads, and
// the reader that detects which one an input is (by content, after removing
// one gzip layer) and streams its records to a Sink.
package formats

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/jemalloc"
	"github.com/heapest/heapest/parse/jfr"
	"github.com/heapest/heapest/parse/memray"
	"github.com/heapest/heapest/parse/nettrace"
	"github.com/heapest/heapest/parse/pprof"
)

// Format is one input format.
type Format struct {
	// Name is the format's name in output ("jemalloc", "pprof", ...); a
	// parser may name its input more precisely in Profile.Source.Format.
	Name string
	// Detect reports whether the (decompressed) head of the input, up to
	// 4096 bytes, is this format.
	Detect func(head []byte) bool
	// Parse streams the input's records to sink and returns what the
	// input says about itself. name is used in errors.
	Parse func(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error)
}

// List holds the formats in the order they are tried: formats with a magic
// number (or, for memray's CSV, an exact header line) first, pprof protobuf
// (which has none) last.
var List = []Format{
	{Name: "jemalloc", Detect: jemalloc.Detect, Parse: jemalloc.Parse},
	{Name: "gperftools", Detect: pprof.DetectLegacy, Parse: pprof.ParseLegacy},
	{Name: "nettrace", Detect: nettrace.Detect, Parse: nettrace.Parse},
	{Name: "jfr", Detect: jfr.Detect, Parse: jfr.Parse},
	{Name: "memray", Detect: memray.Detect, Parse: memray.Parse},
	{Name: "pprof", Detect: pprof.Detect, Parse: pprof.Parse},
}

// ReadFile parses the profile at path; "-" reads standard input.
func ReadFile(path string, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	if path == "-" {
		return Read("<stdin>", os.Stdin, opt, sink)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		opt.SizeHint = st.Size()
	}
	return Read(path, f, opt, sink)
}

// Read detects the format of r (gzip-compressed or not) and parses it.
func Read(name string, r io.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &parse.Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(parse.Bounded(name, zr, opt.MaxDecompressed), 64<<10)
		opt.SizeHint = 0 // the compressed size says little
	}
	head, err := br.Peek(4096)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return nil, &parse.Error{File: name, Offset: 0, Msg: "reading", Err: err}
		}
		return nil, &parse.Error{File: name, Offset: -1, Msg: "empty file"}
	}
	for _, f := range List {
		if f.Detect(head) {
			return parseWith(f, name, br, opt, sink)
		}
	}
	return nil, &parse.Error{File: name, Offset: -1, Err: parse.ErrUnrecognized, Msg: "cannot read"}
}

func parseWith(f Format, name string, br *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	p, err := f.Parse(name, br, opt, sink)
	if err != nil {
		return nil, err
	}
	p.Source.Path = name
	if p.Source.Format == "" {
		p.Source.Format = f.Name
	}
	return p, nil
}
