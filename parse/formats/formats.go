// Package formats is the one list of the input formats heapest reads, and
// the reader that detects which one an input is (by content, after removing
// up to two gzip layers) and streams its records to a Sink.
package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/dhat"
	"github.com/heapest/heapest/parse/heapprofile"
	"github.com/heapest/heapest/parse/jemalloc"
	"github.com/heapest/heapest/parse/jfr"
	"github.com/heapest/heapest/parse/memray"
	"github.com/heapest/heapest/parse/nettrace"
	"github.com/heapest/heapest/parse/pprof"
	"github.com/klauspost/compress/gzip"
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
	// Before jemalloc, whose jeprof --raw header "--- heap" it starts like.
	{Name: "java-heapz", Detect: pprof.DetectJavaHeap, Parse: pprof.ParseJavaHeap},
	{Name: "jemalloc", Detect: jemalloc.Detect, Parse: jemalloc.Parse},
	{Name: "gperftools", Detect: pprof.DetectLegacy, Parse: pprof.ParseLegacy},
	{Name: "nettrace", Detect: nettrace.Detect, Parse: nettrace.Parse},
	{Name: "jfr", Detect: jfr.Detect, Parse: jfr.Parse},
	{Name: "memray", Detect: memray.Detect, Parse: memray.Parse},
	{Name: "heapprofile", Detect: heapprofile.Detect, Parse: heapprofile.Parse},
	{Name: "dhat", Detect: dhat.Detect, Parse: dhat.Parse},
	{Name: "pprof", Detect: pprof.Detect, Parse: pprof.Parse},
}

// VersionWarning is what an input of the named format (its
// Profile.Source.Format) needs said of the allocator that wrote it, or
// "". Only jemalloc's dumps have such a caveat, by the version of the
// jemalloc mapped or linked, which jemallocVersion finds (symbolize's
// Session.JemallocVersion: called for jemalloc dumps only, as it may
// open a file).
func VersionWarning(format string, jemallocVersion func() (version, file string)) string {
	if format != "jemalloc" {
		return ""
	}
	return jemalloc.VersionWarning(jemallocVersion())
}

// Recognize names the format whose magic number or header head starts
// with, "" for none (a pprof protobuf, which has none, is never named).
func Recognize(head []byte) string {
	for _, f := range List {
		if f.Name != "pprof" && f.Detect(head) {
			return f.Name
		}
	}
	return ""
}

// ReadFile parses the profile at path; "-" reads standard input.
func ReadFile(path string, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	return ReadFileWatched(path, opt, sink, nil)
}

// Watch is given an input as it is opened, with its size in bytes (0 when
// unknown: standard input, a pipe), and returns the reader to parse
// instead; it sees the bytes as stored, before any gzip layer is removed.
// A caller counts a slow input's bytes with it, for a progress line.
type Watch func(r io.Reader, size int64) io.Reader

// ReadFileWatched is ReadFile with the input read through watch, when
// watch is not nil.
func ReadFileWatched(path string, opt parse.Options, sink parse.Sink, watch Watch) (*parse.Profile, error) {
	name, r := path, io.Reader(os.Stdin)
	if path == "-" {
		name = "<stdin>"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			opt.SizeHint = st.Size()
		}
		r = f
	}
	if watch != nil {
		r = watch(r, opt.SizeHint)
	}
	return Read(name, r, opt, sink)
}

// Read detects the format of r (gzip-compressed or not) and parses it.
func Read(name string, r io.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var bounded io.Reader // the bound on a gzipped input
	var cut *cutWatch     // the innermost gzip stream, which may end cut
	// Two gzip layers are removed: a .pb.gz gzipped again (pprof reads
	// that) is a profile too.
	for layer := 0; layer < 2; layer++ {
		if head, _ := br.Peek(2); len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &parse.Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		cut = &cutWatch{r: zr}
		bounded = parse.Bounded(name, cut, opt.MaxDecompressed)
		br = bufio.NewReaderSize(bounded, 64<<10)
		opt.SizeHint = 0 // the compressed size says little
	}
	p, err := detect(name, br, opt, sink)
	if hit := parse.Exceeded(bounded); err != nil && hit != nil {
		// What the parser saw was cut by the bound, not by the file.
		return nil, hit
	}
	var pe *parse.Error
	if cut != nil && cut.cut && errors.As(err, &pe) && !strings.Contains(pe.Msg, "gzip") {
		// A text parser's "unexpected EOF", or the truncation it saw,
		// at a line of the decompressed text: the cut is the gzip
		// stream's.
		pe.Msg += " (truncated gzip input)"
	}
	return p, err
}

// cutWatch notes whether a gzip stream ended before its end: the
// decompressor's io.ErrUnexpectedEOF.
type cutWatch struct {
	r   io.Reader
	cut bool
}

func (c *cutWatch) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.cut = c.cut || errors.Is(err, io.ErrUnexpectedEOF)
	return n, err
}

// detect tells the format of br's input from its head, and parses it.
func detect(name string, br *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	head, err := br.Peek(4096)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return nil, &parse.Error{File: name, Offset: 0, Msg: "reading", Err: err}
		}
		return nil, &parse.Error{File: name, Offset: -1, Msg: "empty file"}
	}
	for _, f := range List {
		if f.Name == "pprof" {
			// The proto check is a guess from one byte: name what is
			// surely no proto before it decodes one.
			if msg := notAProfile(head); msg != "" {
				return nil, &parse.Error{File: name, Offset: -1, Msg: msg}
			}
		}
		if f.Detect(head) {
			return parseWith(f, name, br, opt, sink)
		}
	}
	return nil, &parse.Error{File: name, Offset: -1, Err: parse.ErrUnrecognized, Msg: "cannot read"}
}

func parseWith(f Format, name string, br *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	p, err := f.Parse(name, br, opt, sink)
	var legacy *jemalloc.LegacyText
	if errors.As(err, &legacy) {
		f = Format{Name: "gperftools"}
		p, err = parseLegacyRaw(name, legacy, br, opt, sink)
	}
	if err != nil {
		return nil, err
	}
	p.Source.Path = name
	if p.Source.Format == "" {
		p.Source.Format = f.Name
	}
	return p, nil
}

// parseLegacyRaw reads the legacy heap profile behind a pprof --raw symbol
// section (google-pprof --raw of a gperftools profile fetched over HTTP):
// its header line, then the rest of br, named with the section's symbols.
// Errors give the file's own line numbers.
func parseLegacyRaw(name string, l *jemalloc.LegacyText, br *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	rest := io.MultiReader(bytes.NewReader(append(l.Header, '\n')), br)
	p, err := pprof.ParseLegacy(name, bufio.NewReaderSize(rest, 64<<10), opt, sink)
	var pe *parse.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		pe.Line += l.Line - 1
	}
	if err != nil {
		return nil, err
	}
	p.Symbols = l.Symbols
	return p, nil
}

// compressions are the magic numbers of the compressed formats heapest
// does not undo itself (it removes gzip only, as pprof does).
var compressions = []struct{ magic, name, tool string }{
	{"BZh", "bzip2", "bunzip2"},
	{"\x28\xb5\x2f\xfd", "zstd", "zstd -d"},
	{"\xfd7zXZ\x00", "xz", "unxz"},
	{"\x04\x22\x4d\x18", "lz4", "lz4 -d"},
	{"PK\x03\x04", "zip", "unzip"},
}

// others are the magic numbers of files users take for heap profiles,
// and what each is instead.
var others = []struct{ magic, what string }{
	{"JAVA PROFILE 1.0.", "a Java heap dump (hprof: every object alive, not a sampled profile); " +
		"for Java heapest reads Flight Recorder recordings (java -XX:StartFlightRecording, jcmd PID JFR.dump)"},
	{"\x7fELF", "an ELF file (a program, a library or a core dump), not a profile: " +
		"a program is given with --binary or --symbol-path, to name a dump's frames"},
	{"PERFILE2", "a Linux perf.data file: CPU samples, not a heap profile"},
	// memray's HeaderRecord: its magic with the NUL, then the version.
	{"memray\x00", "a memray capture file (memray run's .bin, once lz4 -d took off its compression): heapest reads its CSV export, memray transform csv FILE"},
	// V8's other JSON, as Node and Chrome write it.
	{`{"snapshot":{"meta":`, "a V8 heap snapshot (.heapsnapshot: every object alive, not a sampled profile); " +
		"for Node.js heapest reads sampling heap profiles: node --heap-prof writes them (.heapprofile), or @datadog/pprof's and pprof-nodejs's pprof files"},
	{`{"nodes":[{"id":1,"callFrame":`, "a V8 CPU profile (.cpuprofile), not a heap profile: node --heap-prof writes Node.js's heap profiles"},
	// The stream header of FastSerialization: int32 20, then its name.
	{"\x14\x00\x00\x00!FastSerialization.1", "a .NET FastSerialization file (a .gcdump heap snapshot, or an EventPipe trace older than NetTrace V4): " +
		"heapest reads .nettrace traces with AllocationSampled events (dotnet-trace collect, .NET 10)"},
}

// notAProfile says what an input that no format recognised is, when
// that is clear from its head: compressed, another jemalloc dump version,
// heapest's Parquet rows, another kind of file (others), or text. ""
// means it may be a profile.proto.
func notAProfile(head []byte) string {
	if bytes.HasPrefix(head, []byte("\x1f\x8b")) {
		// Seen under the two gzip layers Read removed.
		return "gzip-compressed three times: gunzip it; heapest removes two gzip layers"
	}
	for _, c := range compressions {
		if bytes.HasPrefix(head, []byte(c.magic)) {
			return fmt.Sprintf("%s-compressed: decompress it first (%s); heapest removes gzip only", c.name, c.tool)
		}
	}
	if v, ok := bytes.CutPrefix(head, []byte("heap_v")); ok && len(v) > 0 && v[0] >= '0' && v[0] <= '9' {
		end := bytes.IndexByte(v, '/')
		if end < 0 || end > 4 {
			end = 1
		}
		return fmt.Sprintf("a jemalloc heap_v%s dump: heapest reads heap_v2 (jemalloc 4 and 5)", v[:end])
	}
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return "a Parquet file: heapest's statistics rows are read with --from-parquet"
	}
	for _, o := range others {
		if bytes.HasPrefix(head, []byte(o.magic)) {
			return o.what
		}
	}
	if isText(head) {
		// Its first line with text: blank lines first said it starts "".
		line, _, _ := bytes.Cut(bytes.TrimLeft(head, " \t\r\n"), []byte("\n"))
		if len(line) > 60 {
			line = append(line[:57:57], "..."...)
		}
		return fmt.Sprintf("a text file no format recognises (it starts %q); heapest reads %s", line, parse.Readable)
	}
	return ""
}

// isText reports whether head is printable UTF-8 text: a profile.proto
// has lengths and varints in its first bytes that no text has.
func isText(head []byte) bool {
	if len(head) > 512 {
		head = head[:512]
	}
	if !utf8.Valid(head) {
		// A cut in the middle of a rune at the end is not binary.
		for i := 1; i <= 3 && i < len(head); i++ {
			if utf8.Valid(head[:len(head)-i]) {
				head = head[:len(head)-i]
				break
			}
		}
		if !utf8.Valid(head) {
			return false
		}
	}
	for _, r := range string(head) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}
