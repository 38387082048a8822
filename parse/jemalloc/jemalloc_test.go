package jemalloc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func samplesDir(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "samples", "jemalloc")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not found at %s (CI has them beside the repo): %v", dir, err)
	}
	return dir
}

func mustRead(t *testing.T, path string, opt Options) *Profile {
	t.Helper()
	p, err := ReadFile(path, opt)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return p
}

func TestJemallocSamples(t *testing.T) {
	dir := samplesDir(t)
	tests := []struct {
		file               string
		rate               float64
		stacks, threadRecs int
		unbias             bool
		hasAlloc           bool
	}{
		{"google-pprof-pr690_jemalloc.heap", 1 << 20, 471, 6593, true, false},
		{"generated/je530_mixed_unbias-off.heap", 1 << 19, 5, 5, false, true},
		{"generated/je530_mixed_unbias-on.heap", 1 << 19, 5, 5, true, true},
		{"generated/je530_threads_unbias-off.heap", 1 << 19, 3, 5, false, false},
		{"generated/je530_threads_unbias-on.heap", 1 << 19, 3, 5, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := mustRead(t, filepath.Join(dir, tt.file), Options{Threads: true})
			if p.Source.Format != "jemalloc" || p.Source.Rate != tt.rate {
				t.Errorf("format %q rate %v, want jemalloc %v", p.Source.Format, p.Source.Rate, tt.rate)
			}
			if len(p.Records) != tt.stacks || len(p.ThreadRecords) != tt.threadRecs {
				t.Errorf("got %d stacks, %d thread lines; want %d, %d", len(p.Records), len(p.ThreadRecords), tt.stacks, tt.threadRecs)
			}
			wantEnc := Raw
			if tt.unbias {
				wantEnc = JemallocUnbias
			}
			for _, r := range p.Records {
				if r.InUse.Enc != wantEnc || r.Alloc.Enc != wantEnc {
					t.Fatalf("encoding %v, want %v (detail %q)", r.InUse.Enc, wantEnc, p.Source.Detail)
				}
			}
			if p.HasAlloc != tt.hasAlloc || !p.HasInUse {
				t.Errorf("HasAlloc %v HasInUse %v, want %v true", p.HasAlloc, p.HasInUse, tt.hasAlloc)
			}
			if len(p.MapsText) == 0 {
				t.Errorf("MAPPED_LIBRARIES not kept")
			}
		})
	}
}

// The generated dumps' lines are documented in the samples README.
func TestJemallocSampleLines(t *testing.T) {
	dir := samplesDir(t)
	p := mustRead(t, filepath.Join(dir, "generated/je530_mixed_unbias-off.heap"), Options{})
	c := p.Records[2] // stack C: 12 × 256 KiB + 2 × 16 B
	if c.InUse.Objects != 14 || c.InUse.Bytes != 3145760 || len(c.Stack) != 9 || c.Stack[0].Addr != 0x7f709aca2630 {
		t.Errorf("stack C = %+v", c)
	}
	d := p.Records[3] // stack D: all freed, accumulated only
	if !d.InUse.IsZero() || d.Alloc.Objects != 44 || d.Alloc.Bytes != 2816 {
		t.Errorf("stack D = %+v / %+v", d.InUse, d.Alloc)
	}
	th := mustRead(t, filepath.Join(dir, "generated/je530_threads_unbias-on.heap"), Options{Threads: true})
	if len(mustRead(t, filepath.Join(dir, "generated/je530_threads_unbias-on.heap"), Options{}).ThreadRecords) != 0 {
		t.Errorf("thread records kept without Options.Threads")
	}
	var names []string
	for _, r := range th.ThreadRecords {
		names = append(names, r.Thread)
	}
	if got := strings.Join(names, ","); got != "t1 worker 1,t2 io-pool,t1 worker 1,t2 io-pool,t0" {
		t.Errorf("thread names %q", got)
	}
}

func TestJemallocVariants(t *testing.T) {
	p := mustRead(t, "testdata/jemalloc/variants.heap", Options{Threads: true})
	if p.Symbols[0x401000] != "alloc_thing" || p.Symbols[0x401100] != "main" {
		t.Errorf("symbols %v", p.Symbols)
	}
	if len(p.Records) != 2 || len(p.Records[1].Stack) != 0 {
		t.Fatalf("records %+v", p.Records)
	}
	if p.ThreadRecords[0].Thread != "t1 worker pool 1" {
		t.Errorf("thread %q", p.ThreadRecords[0].Thread)
	}
	if p.MapsText != nil || p.Records[0].InUse.Enc != Raw {
		t.Errorf("maps %q enc %v", p.MapsText, p.Records[0].InUse.Enc)
	}
	q := mustRead(t, "testdata/jemalloc/crlf_accum.heap", Options{})
	if q.Records[0].Alloc.Objects != 5 || !q.HasAlloc || !bytes.Contains(q.MapsText, []byte("dbus-daemon")) {
		t.Errorf("crlf: %+v", q.Records[0])
	}
	for _, mode := range []string{"on", "off"} {
		r := mustRead(t, "testdata/jemalloc/crlf_accum.heap", Options{JemallocUnbias: mode})
		want := map[string]Encoding{"on": JemallocUnbias, "off": Raw}[mode]
		if r.Records[0].InUse.Enc != want || !strings.Contains(r.Source.Detail, "--jemalloc-unbias") {
			t.Errorf("--jemalloc-unbias %s: enc %v detail %q", mode, r.Records[0].InUse.Enc, r.Source.Detail)
		}
	}
}

func TestJemallocBadInput(t *testing.T) {
	const ok = "heap_v2/524288\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED_LIBRARIES:\n"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty file"},
		{"junk", "\x00\x01\x02garbage\xff", "unrecognized profile format"},
		{"rate zero", strings.Replace(ok, "524288", "0", 1), "t.heap:1: sampling rate R = 0"},
		{"rate junk", strings.Replace(ok, "524288", "12x", 1), "t.heap:1: bad sampling rate"},
		{"overflow", strings.Replace(ok, "t*: 1: 64", "t*: 1: 18446744073709551616", 1), "t.heap:2: totals line: current bytes: \"18446744073709551616\": value out of range"},
		{"negative", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: -1: 64", 1), "t.heap:5: expected current objects"},
		{"non-numeric", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: 1: abc", 1), "t.heap:5: expected current bytes"},
		{"junk address", strings.Replace(ok, "0x2", "0xZZ", 1), "t.heap:4: expected a 0x-prefixed hex address, got \"0xZZ\""},
		{"address without 0x", strings.Replace(ok, "0x2", "1234", 1), "t.heap:4: expected a 0x-prefixed hex address"},
		{"address too long", strings.Replace(ok, "0x2", "0x12345678901234567", 1), "t.heap:4: expected a 0x-prefixed hex address"},
		{"duplicate stack", strings.Replace(ok, "\n\nMAPPED", "\n@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED", 1), "t.heap:7: duplicated stack (first seen on line 4)"},
		{"missing t*", strings.Replace(ok, "  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\n", "\n", 1), "t.heap:6: expected the \"  t*: \" line of the previous stack, got MAPPED_LIBRARIES"},
		{"bad bracket", strings.Replace(ok, "[0: 0]\n@", "0: 0]\n@", 1), "t.heap:3: expected '['"},
		{"trailing junk", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64 [0: 0]", "@ 0x1 0x2\n  t*: 1: 64 [0: 0] x", 1), "t.heap:5: unexpected text"},
		{"objects without bytes", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: 1: 0", 1), "t.heap:5: objects and bytes must be both zero"},
		{"unknown line", strings.Replace(ok, "\n\nMAPPED", "\nhello\n\nMAPPED", 1), "t.heap:7: expected \"@ 0xADDR...\""},
		{"thread before t*", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n", "@ 0x1 0x2\n", 1), "t.heap:5: expected the \"  t*: \" line after the @ line"},
		{"no header totals", "heap_v2/524288\n@ 0x1\n", "t.heap:2: expected the \"  t*: \" totals line"},
		{"unclosed symbols", "--- symbol\n0x1 f\n", "t.heap:2: truncated: --- symbol section"},
		{"bad symbol", "--- symbol\nfoo\n---\n", "t.heap:2: expected \"0xADDR name\""},
		{"header only", "heap_v2/524288\n  t*: 1: 64 [0: 0]\n", "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read("t.heap", strings.NewReader(tt.in), Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "t.heap" {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
	if _, err := Read("t.heap", strings.NewReader(ok), Options{}); err != nil {
		t.Fatalf("the base case must parse: %v", err)
	}
}

// TestJemallocTruncated cuts real dumps at every line boundary and in the
// middle of every line of their header and stacks: each cut must be an
// error, except the cuts that leave a whole dump without MAPPED_LIBRARIES.
func TestJemallocTruncated(t *testing.T) {
	dir := samplesDir(t)
	for _, file := range []string{"generated/je530_mixed_unbias-off.heap", "generated/je530_threads_unbias-on.heap", "generated/je530_mixed_unbias-on.heap"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		end := bytes.Index(data, []byte("\nMAPPED_LIBRARIES:")) // the blank line before it
		whole := map[int]bool{end: true, end + 1: true}
		for cut := 0; cut < end+1; cut++ {
			if whole[cut] {
				continue
			}
			if cut > 0 && data[cut-1] != '\n' && cut%7 != 0 {
				continue // mid-line: every 7th byte is enough
			}
			_, err := Read(file, bytes.NewReader(data[:cut]), Options{})
			if err == nil {
				t.Errorf("%s cut at byte %d (%q...): no error", file, cut, tail(data[:cut]))
			}
		}
		for cut := range whole {
			if _, err := Read(file, bytes.NewReader(data[:cut]), Options{}); err != nil {
				t.Errorf("%s cut at byte %d before MAPPED_LIBRARIES: %v", file, cut, err)
			}
		}
		// --keep-going salvages the stacks before the cut, and says so.
		cut := bytes.LastIndex(data[:end], []byte("\n@"))
		p, err := Read(file, bytes.NewReader(data[:cut+5]), Options{KeepGoing: true})
		if err != nil || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "--keep-going") {
			t.Errorf("%s --keep-going: %v, %v", file, err, p)
		}
	}
}

func tail(b []byte) string {
	if len(b) > 30 {
		b = b[len(b)-30:]
	}
	return string(b)
}

func FuzzJemalloc(f *testing.F) {
	for _, dir := range []string{"testdata/jemalloc", filepath.Join("..", "..", "shared", "samples", "jemalloc", "generated")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.heap"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("heap_v2/1\n  t*: 0: 0 [0: 0]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read("fuzz.heap", bytes.NewReader(data), Options{KeepGoing: len(data)%2 == 0})
		if err != nil {
			if p != nil {
				t.Fatalf("profile and error both returned")
			}
			return
		}
		for _, r := range p.Records {
			if r.InUse.Objects < 0 || r.InUse.Bytes < 0 || r.Rate < 1 {
				t.Fatalf("bad record %+v", r)
			}
		}
	})
}
