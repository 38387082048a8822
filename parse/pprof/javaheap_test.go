package pprof_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/pprof"
)

// TestJavaHeap: Java heap text is read with its counts raw (bytes first,
// then objects, on each line), at the 512 KiB period, and its location
// ids named by the lines after the samples, as written (ids, not return
// addresses).
func TestJavaHeap(t *testing.T) {
	p, err := readFile(filepath.Join("testdata", "java-small.heap"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Format != "java-heapz" || p.Source.Rate != 512<<10 || !p.HasInUse || p.HasAlloc || p.Source.Samples != 68 {
		t.Fatalf("source %+v inuse %v alloc %v", p.Source, p.HasInUse, p.HasAlloc)
	}
	want := []struct {
		objects, bytes, size float64
		names                []string
	}{
		{1, 1 << 20, 1 << 20, []string{"java.util.Arrays.copyOf", "com.example.Cache.grow", "com.example.Main.main"}},
		{64, 4096, 0, []string{"libzip.so.inflate", "com.example.Cache.grow", "com.example.Main.main"}},
		{3, 480, 0, []string{"STUB", "GC"}},
	}
	if len(p.Records) != len(want) || p.Names == nil || !p.NamesByID {
		t.Fatalf("%d records, names %v by id %v", len(p.Records), p.Names != nil, p.NamesByID)
	}
	for i, w := range want {
		r := p.Records[i]
		c := r.InUse
		if c.Enc != parse.Raw || c.Objects != w.objects || c.Samples != w.objects || c.Bytes != w.bytes || c.Size != w.size ||
			r.Scheme != parse.Bernoulli || r.Rate != 512<<10 {
			t.Errorf("record %d: %+v rate %v", i, c, r.Rate)
		}
		var names []string
		for _, f := range r.Stack {
			names = append(names, p.Names(f.Addr))
		}
		if strings.Join(names, ";") != strings.Join(w.names, ";") {
			t.Errorf("record %d: frames %q, want %q", i, names, w.names)
		}
	}
}

// TestJavaHeapGooglePprof: google/pprof's own Java heap test input reads
// with every frame named.
func TestJavaHeapGooglePprof(t *testing.T) {
	p, err := readFile(filepath.Join("testdata", "google-pprof_java.heap"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != 7 || p.Source.Samples != 19 {
		t.Fatalf("%d records, %v samples; want 7 and 19", len(p.Records), p.Source.Samples)
	}
	for _, r := range p.Records {
		for _, f := range r.Stack {
			if p.Names(f.Addr) == "" {
				t.Errorf("location %#x unnamed", f.Addr)
			}
		}
	}
}

func TestJavaHeapBadInput(t *testing.T) {
	const head = "--- heapz 1 ---\nformat = java\nresolution = bytes\n"
	tests := []struct{ name, text, want string }{
		{"resolution", "--- heapz 1 ---\nresolution = objects\n", `:2: resolution = "objects": expected format = java, resolution = bytes`},
		{"attribute", "--- heapz 1 ---\nsampling period = 3\n", `:2: unknown header attribute "sampling period"`},
		{"zero count", head + "100 0 @ 0x1\n", `:4: expected "BYTES COUNT @ ids" with COUNT > 0`},
		{"three numbers", head + "100 1 2 @ 0x1\n", `:4: expected "BYTES COUNT @ ids"`},
		{"bad id", head + "100 1 @ 0x1 zz\n", `:4: bad location id "zz"`},
		{"bad location", head + "100 1 @ 0x1\n\n 0x1\n", `:6: expected "0xID name (File.java:line)"`},
		// A sample line without its "@" is no location line: it was read
		// as the first, and the samples after it as locations.
		{"no at", head + "100 1 @ 0x1\n4096 64\n480 3 @ 0x5\n\n 0x1 f\n", `:5: expected "BYTES COUNT @ ids" with COUNT > 0, got "4096 64"`},
		{"cut sample", head + "100 1 @ 0x1\n4096 64 @ 0x", `:5: truncated: last line has no line ending`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(tt.name, strings.NewReader(tt.text), parse.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.name+tt.want) {
				t.Errorf("error %v, want %q", err, tt.name+tt.want)
			}
		})
	}
}

// FuzzJavaHeap: whatever the bytes after the header, the parser returns a
// profile or an error naming the file, never panics, and names only ids
// of location lines.
func FuzzJavaHeap(f *testing.F) {
	for _, name := range []string{"java-small.heap", "google-pprof_java.heap"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("--- heapz 1 ---\n"))
	f.Add([]byte("--- heapz 1 ---\n1 1 @ 0x1\n 0x1 x (\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c collector
		p, err := pprof.ParseJavaHeap("fuzz.heap", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &c)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.heap") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if p.Records != len(c.recs) {
			t.Fatalf("%d records counted, %d sent", p.Records, len(c.recs))
		}
		for _, r := range c.recs {
			if r.InUse.Objects <= 0 || r.InUse.Bytes < 0 {
				t.Fatalf("record %+v", r.InUse)
			}
		}
	})
}

// TestJavaHeapCut: with --keep-going a profile cut in its samples keeps
// those before the cut; one cut in its location lines keeps every sample
// and leaves the cut location unnamed, with a warning.
func TestJavaHeapCut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "java-small.heap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cutAfter string
		records  int
		named    []uint64 // location ids named
		warn     string
	}{
		{"4096    64 @ 0x04 0x", 1, nil, "--keep-going: cut.heap:5: truncated: last line has no line ending; kept the 1 samples before it"},
		{"0x03 com.example.Main.ma", 3, []uint64{1, 2}, "the location lines are cut short"},
	} {
		i := bytes.Index(data, []byte(c.cutAfter))
		var got collector
		p, err := pprof.ParseJavaHeap("cut.heap", bufio.NewReader(bytes.NewReader(data[:i+len(c.cutAfter)])), parse.Options{KeepGoing: true}, &got)
		if err != nil {
			t.Fatalf("cut after %q: %v", c.cutAfter, err)
		}
		var named []uint64
		for id := uint64(1); id <= 6; id++ {
			if p.Names(id) != "" {
				named = append(named, id)
			}
		}
		if p.Records != c.records || len(got.recs) != c.records || !slices.Equal(named, c.named) || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], c.warn) {
			t.Errorf("cut after %q: %d records, ids named %v, warnings %q; want %d, %v, %q", c.cutAfter, p.Records, named, p.Warnings, c.records, c.named, c.warn)
		}
	}
}
