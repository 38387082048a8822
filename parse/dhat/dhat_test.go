package dhat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/parse"
)

// read parses a DHAT file, collecting its records.
func read(t *testing.T, data []byte, opt parse.Options) (*parse.Profile, []parse.Record, error) {
	t.Helper()
	var recs testfile.Records
	p, err := Parse("t.json", bufio.NewReader(bytes.NewReader(data)), opt, &recs)
	return p, recs, err
}

// stackText is a record's stack, leaf first, as names.
func stackText(r parse.Record) string {
	var names []string
	for _, f := range r.Stack {
		names = append(names, f.Func)
	}
	return strings.Join(names, " < ")
}

// The real C program's profile (testdata/README.md): each site's counts
// are the program's own, exactly.
func TestCSites(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "c-sites.dhat.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, lines := range []bool{false, true} {
		p, recs, err := read(t, data, parse.Options{Lines: lines})
		if err != nil {
			t.Fatal(err)
		}
		if p.Source.Format != "dhat" || !p.HasInUse || !p.HasAlloc || !p.AllocatorNamed || p.Records != 3 {
			t.Fatalf("profile %+v", p)
		}
		want := []struct {
			stack                  string
			peak, peakN, all, allN float64
		}{
			{"malloc < site_a < main", 48000, 1000, 48000, 1000},
			{"malloc < site_b < main", 0, 0, 2000000, 500},
			{"calloc < site_c < main", 219900, 200, 219900, 200},
		}
		if lines {
			want[0].stack = "malloc < site_a p.c:5 < main p.c:8"
			want[1].stack = "malloc < site_b p.c:6 < main p.c:8"
			want[2].stack = "calloc < site_c p.c:7 < main p.c:8"
		}
		for i, w := range want {
			r := recs[i]
			if got := stackText(r); got != w.stack {
				t.Errorf("lines %v: record %d stack %q, want %q", lines, i, got, w.stack)
			}
			if r.Scheme != parse.Exact || r.InUse.Bytes != w.peak || r.InUse.Objects != w.peakN || r.Alloc.Bytes != w.all || r.Alloc.Objects != w.allN {
				t.Errorf("record %d: %+v, want in use %v B in %v, allocated %v B in %v", i, r, w.peak, w.peakN, w.all, w.allN)
			}
		}
		if !strings.Contains(p.Source.Detail, "at the end (t-end) 267900 B in 1200 blocks") {
			t.Errorf("detail %q", p.Source.Detail)
		}
	}
}

func TestFrame(t *testing.T) {
	for _, tt := range []struct {
		in, name, byLine string
		addr             uint64
	}{
		{"0x109196: site_a (p.c:5)", "site_a", "site_a p.c:5", 0x109196},
		{"0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_dhat-amd64-linux.so)", "malloc", "malloc", 0x48417b4},
		{"0x49017B9: ??? (in /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30)", "libstdc++.so.6.0.30!0x49017B9", "libstdc++.so.6.0.30!0x49017B9", 0x49017b9},
		{"0x10923F: make_strings(int) (q.cc:5)", "make_strings(int)", "make_strings(int) q.cc:5", 0x10923f},
		{"0x4C2: operator() (a b.cc:3)", "operator()", "operator() a b.cc:3", 0x4c2},
		// dhat-rs: file:line:column.
		{"0x55d8f6a1a7f0: rsalloc::site_a (src/main.rs:5:20)", "rsalloc::site_a", "rsalloc::site_a src/main.rs:5", 0x55d8f6a1a7f0},
		{"0x1: ???", "", "", 1}, // unnamed, nowhere: its address names it
		{"0x2: f", "f", "f", 2},
	} {
		for _, lines := range []bool{false, true} {
			f, err := frame(tt.in, lines)
			want := tt.name
			if lines {
				want = tt.byLine
			}
			if err != nil || f.Func != want || f.Addr != tt.addr {
				t.Errorf("frame(%q, lines %v) = %+v, %v; want %q at %#x", tt.in, lines, f, err, want, tt.addr)
			}
		}
	}
	for _, bad := range []string{"[root]", "site_a (p.c:5)", "0xZZ: f", ": f"} {
		if _, err := frame(bad, false); err == nil {
			t.Errorf("frame(%q): no error", bad)
		}
	}
}

// What is not a DHAT heap profile is refused, naming the file.
func TestBadFiles(t *testing.T) {
	const pp = `{"tb":10,"tbk":1,"gb":10,"gbk":1,"eb":0,"ebk":0,"fs":[1]}`
	for _, tt := range []struct{ in, want string }{
		{`{"dhatFileVersion":1,"mode":"heap","pps":[],"ftbl":["[root]"]}`, "dhatFileVersion 1"},
		{`{"dhatFileVersion":2,"mode":"copy","pps":[],"ftbl":["[root]"]}`, `mode "copy": not a heap profile`},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[]}`, "no frame table"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[` + pp + `],"ftbl":["[root]"]}`, "frame 1: want an index"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[{"tb":10,"tbk":1,"fs":[]}],"ftbl":["[root]"]}`, "want gb and gbk"},
		{`{"dhatFileVersion":2,"mode":"heap","bklt":false,"pps":[{"tbk":1,"fs":[]}],"ftbl":["[root]"]}`, "want tb and tbk"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[{"tb":10,"tbk":1,"gb":20,"gbk":1,"fs":[]}],"ftbl":["[root]"]}`, "live at the peak, of 10 bytes"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[{"tb":-1,"tbk":1,"gb":0,"gbk":0,"fs":[]}],"ftbl":["[root]"]}`, "want ≥ 0"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[],"ftbl":["[root]","nonsense"]}`, `frame 1 "nonsense"`},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[`, "not a valid DHAT file"},
		// Two profiles in one file, or garbage after one, are damage.
		{`{"dhatFileVersion":2,"mode":"heap","pps":[],"ftbl":["[root]"]}` + "\n" + `{"dhatFileVersion":2}`, "more data after the profile"},
		{`{"dhatFileVersion":2,"mode":"heap","pps":[],"ftbl":["[root]"]}GARBAGE{`, "after the profile, at byte 62: invalid character 'G'"},
	} {
		_, _, err := read(t, []byte(tt.in), parse.Options{})
		var pe *parse.Error
		if err == nil || !errors.As(err, &pe) || pe.File != "t.json" || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want a parse.Error naming t.json and saying %q", tt.in, err, tt.want)
		}
	}
}

func TestDetect(t *testing.T) {
	for in, want := range map[string]bool{
		`{"dhatFileVersion":2`:              true,
		"\ufeff{\n \"dhatFileVersion\" : 2": true,
		"{\n\"dhatFileVersion\":2":          true,
		`{"head":{}}`:                       false,
		`{"dhatFileVersio`:                  false,
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%q) = %v", in, got)
		}
	}
}

// A Rust program's profile (dhat-rs writes mode rust-heap and positions
// with columns) reads as Valgrind's.
func TestRustHeap(t *testing.T) {
	const prof = `{"dhatFileVersion":2,"mode":"rust-heap","verb":"Allocated","bklt":true,"bkacc":false,"tu":"µs","Mtu":"s","tuth":10,"cmd":"target/debug/app","pid":42,"tg":5,"te":9,
"pps":[{"tb":4000,"tbk":1,"tl":7,"mb":4000,"mbk":1,"gb":4000,"gbk":1,"eb":4000,"ebk":1,"fs":[1,2,3]}],
"ftbl":["[root]","0x55d8f6a1a000: <dhat::Alloc as core::alloc::global::GlobalAlloc>::alloc (dhat-0.3.3/src/lib.rs:1389:13)","0x55d8f6a1a7f0: app::site (src/main.rs:5:20)","0x55d8f6a1a900: app::main (src/main.rs:9:5)"]}`
	p, recs, err := read(t, []byte(prof), parse.Options{Lines: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<dhat::Alloc as core::alloc::global::GlobalAlloc>::alloc dhat-0.3.3/src/lib.rs:1389 < app::site src/main.rs:5 < app::main src/main.rs:9"
	if len(recs) != 1 || stackText(recs[0]) != want || recs[0].InUse.Bytes != 4000 {
		t.Errorf("records %+v, want one of stack %s", recs, want)
	}
	if !strings.HasPrefix(p.Source.Detail, "target/debug/app, pid 42,") {
		t.Errorf("detail %q", p.Source.Detail)
	}
	if fmt.Sprint(p.Warnings) != "[]" {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// A profile without block lifetimes (bklt false: no peak, no end) holds
// allocations only.
func TestNoLifetimes(t *testing.T) {
	const prof = `{"dhatFileVersion":2,"mode":"heap","bklt":false,"pps":[{"tb":4000,"tbk":2,"fs":[1]}],"ftbl":["[root]","0x1: f (a.c:3)"]}`
	p, recs, err := read(t, []byte(prof), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.HasInUse || !p.HasAlloc || len(recs) != 1 || !recs[0].InUse.IsZero() || recs[0].Alloc.Bytes != 4000 || recs[0].Alloc.Objects != 2 {
		t.Errorf("profile %+v, records %+v: want allocations only", p, recs)
	}
}
