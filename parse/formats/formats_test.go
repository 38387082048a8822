package formats

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/parse"
)

// TestNotAProfile: files that are surely no heap profile are named for
// what they are, with what heapest reads instead, before the proto
// reader (which would take their first byte for a field) sees them.
func TestNotAProfile(t *testing.T) {
	for _, c := range []struct {
		name, head, want string
	}{
		{"hprof (jmap -dump)", "JAVA PROFILE 1.0.2\x00\x00\x00\x00\x08\x00\x00\x01", "a Java heap dump (hprof"},
		{"ELF core dump", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00", "an ELF file"},
		{"perf.data", "PERFILE2h\x00\x00\x00\x00\x00\x00\x00", "a Linux perf.data file"},
		{".gcdump or .netperf", "\x14\x00\x00\x00!FastSerialization.1\x05\x01", "a .NET FastSerialization file"},
		{"the name alone, no length before it", "!FastSerialization.1\x00\x01", ""},
		{"memray capture", "memray\x00\x07\x00\x00\x00\x01", "a memray capture file"},
		{"V8 heap snapshot", `{"snapshot":{"meta":{"node_fields":["type"`, "a V8 heap snapshot"},
		{"V8 CPU profile", `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"`, "a V8 CPU profile"},
		{"bzip2", "BZh91AY&SY", "bzip2-compressed"},
		{"gzip three times", "\x1f\x8b\x08\x00", "gzip-compressed three times: gunzip it"},
		{"text after blank lines", "\n\n  \nheap_v9/1\n", `a text file no format recognises (it starts "heap_v9/1")`},
		{"Parquet", "PAR1\x15\x04", "a Parquet file"},
		{"heap_v3", "heap_v3/524288\n", "a jemalloc heap_v3 dump"},
		{"text", "desc: --time-unit=B\ncmd: ./a.out\n", `a text file no format recognises (it starts "desc: --time-unit=B")`},
		{"a proto", "\x0a\x04\x08\x01\x10\x02", ""},
	} {
		if got := notAProfile([]byte(c.head)); c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want it to start %q", c.name, got, c.want)
		}
	}
	// Read says it, naming the file.
	_, err := Read("x.hprof", bytes.NewReader([]byte("JAVA PROFILE 1.0.2\x00\x00\x00\x00\x08")), parse.Options{}, parse.SinkFunc(func(*parse.Record) {}))
	if err == nil || !strings.HasPrefix(err.Error(), "x.hprof: a Java heap dump (hprof") {
		t.Errorf("Read: %v", err)
	}
}

// TestBoundNamedAsCause: a gzipped input cut by --max-decompressed at any
// byte is refused for the bound, not for what the parser then saw (a text
// no format knows, a section without its end, a truncated dump); one of
// exactly the bound's size is read.
func TestBoundNamedAsCause(t *testing.T) {
	for _, path := range []string{"../../testdata/fleet/host1/jeprof.101.0.f.heap", "../pprof/testdata/go-debug1.heap"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		gz := testfile.Gzip(raw)
		for bound := int64(1); bound < int64(len(raw)); bound += 1 + bound/8 {
			// (A parser that stops before the bound, at the end of what
			// it reads of the file, meets no bound.)
			_, err := Read(path, bytes.NewReader(gz), parse.Options{MaxDecompressed: bound}, nopSink{})
			if err != nil && !errors.Is(err, parse.ErrTooLarge) {
				t.Fatalf("%s cut at %d bytes: %v, want the bound's error", path, bound, err)
			}
		}
		if _, err := Read(path, bytes.NewReader(gz), parse.Options{MaxDecompressed: int64(len(raw))}, nopSink{}); err != nil {
			t.Errorf("%s within its bound: %v", path, err)
		}
	}
}

type nopSink struct{}

func (nopSink) Record(*parse.Record) {}

// TestLegacyBehindRawSymbols: a legacy heap profile behind a --raw symbol
// section (google-pprof --raw of a fetched profile) is read as one, its
// frames named by the section, and its errors give the file's own line.
func TestLegacyBehindRawSymbols(t *testing.T) {
	raw, err := os.ReadFile("testdata/google-pprof-raw-fetched.txt")
	if err != nil {
		t.Fatal(err)
	}
	var records int
	p, err := Read("raw.txt", bytes.NewReader(raw), parse.Options{}, parse.SinkFunc(func(*parse.Record) { records++ }))
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Format != "gperftools" || records != 3 || !p.ReturnAddrs {
		t.Errorf("format %q, %d records, return addresses %v; want gperftools, 3, true", p.Source.Format, records, p.ReturnAddrs)
	}
	if got := p.Symbols[0x55740eb74156]; got != "site_a<0000000000001149>" {
		t.Errorf("the leaf of site_a's stack is named %q", got)
	}
	// Line 20 of the file is the profile's second stack line.
	lines := strings.SplitAfter(string(raw), "\n")
	if !strings.HasPrefix(lines[19], " 50000:  5000000 [") {
		t.Fatalf("line 20 is %q", lines[19])
	}
	lines[19] = " 50000:  5000000 [ 50000: x] @ 0x1\n"
	_, err = Read("raw.txt", strings.NewReader(strings.Join(lines, "")), parse.Options{}, nopSink{})
	var pe *parse.Error
	if !errors.As(err, &pe) || pe.Line != 20 {
		t.Errorf("a bad line 20: %v, want an error on line 20", err)
	}
}

// TestTwoGzipLayers: an input gzipped twice (a .pb.gz gzipped again, a
// dump gzipped twice) is read as the input itself.
func TestTwoGzipLayers(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/fleet/host1/jeprof.101.0.f.heap")
	if err != nil {
		t.Fatal(err)
	}
	twice := testfile.Gzip(testfile.Gzip(raw))
	count := func(data []byte) int {
		n := 0
		if _, err := Read("t", bytes.NewReader(data), parse.Options{}, parse.SinkFunc(func(*parse.Record) { n++ })); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if a, b := count(raw), count(twice); a == 0 || a != b {
		t.Errorf("%d records read, %d gzipped twice", a, b)
	}
}

// A gzipped text dump cut short fails at a line of its text, and the
// error says the gzip stream was cut, as a cut proto's does.
func TestTruncatedGzipText(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/fleet/host1/jeprof.101.0.f.heap")
	if err != nil {
		t.Fatal(err)
	}
	gz := testfile.Gzip(raw)
	cut := gz[:len(gz)/2]
	_, err = Read("cut.heap.gz", bytes.NewReader(cut), parse.Options{}, parse.SinkFunc(func(*parse.Record) {}))
	if err == nil || !strings.Contains(err.Error(), "(truncated gzip input)") {
		t.Errorf("error %v, want one saying the gzip input is truncated", err)
	}
}

// TestVersionWarning: only a jemalloc dump asks for its jemalloc's
// version (finding it may open a file), and 5.2's gets a warning.
func TestVersionWarning(t *testing.T) {
	for _, c := range []struct {
		format, version string
		asked, warned   bool
	}{
		{"jemalloc", "5.2.1", true, true},
		{"jemalloc", "5.3.0", true, false},
		{"jemalloc", "", true, false},
		{"pprof-go", "5.2.1", false, false},
		{"gperftools", "5.2.1", false, false},
	} {
		asked := false
		w := VersionWarning(c.format, func() (string, string) {
			asked = true
			return c.version, "/lib/libjemalloc.so.2"
		})
		if asked != c.asked || (w != "") != c.warned {
			t.Errorf("%s, jemalloc %q: asked %v, warning %q; want asked %v, a warning %v", c.format, c.version, asked, w, c.asked, c.warned)
		}
	}
}
