package jemalloc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

func samplesDir(t testing.TB) string {
	dir := filepath.Join("..", "..", "..", "shared", "samples", "jemalloc")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not found at %s (CI has them beside the repo): %v", dir, err)
	}
	return dir
}

// collector is a test sink: it keeps a copy of every record, stacks
// included, since the parser reuses them after each call.
type collector struct {
	recs, threads []parse.Record
}

func (c *collector) Record(rec *parse.Record) {
	r := *rec
	r.Stack = slices.Clone(rec.Stack)
	if r.Breakdown {
		c.threads = append(c.threads, r)
	} else {
		c.recs = append(c.recs, r)
	}
}

// parsed is a profile with the records its parser sent.
type parsed struct {
	*parse.Profile
	collector
}

func read(name string, data []byte, opt parse.Options) (*parsed, error) {
	var c collector
	p, err := Parse(name, bufio.NewReaderSize(bytes.NewReader(data), 64<<10), opt, &c)
	if err != nil {
		if p != nil {
			return nil, fmt.Errorf("Parse returned a profile with error %w", err)
		}
		return nil, err
	}
	return &parsed{p, c}, nil
}

func mustRead(t *testing.T, path string, opt parse.Options) *parsed {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := read(path, data, opt)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	if p.Records != len(p.recs) || p.Breakdowns != len(p.threads) {
		t.Fatalf("%s: Profile counts %d records, %d breakdowns; the sink got %d, %d", path, p.Records, p.Breakdowns, len(p.recs), len(p.threads))
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
			p := mustRead(t, filepath.Join(dir, tt.file), parse.Options{Threads: true})
			if p.Source.Format != "jemalloc" || p.Source.Rate != tt.rate {
				t.Errorf("format %q rate %v, want jemalloc %v", p.Source.Format, p.Source.Rate, tt.rate)
			}
			if len(p.recs) != tt.stacks || len(p.threads) != tt.threadRecs {
				t.Errorf("got %d stacks, %d thread lines; want %d, %d", len(p.recs), len(p.threads), tt.stacks, tt.threadRecs)
			}
			wantEnc := parse.Raw
			if tt.unbias {
				wantEnc = parse.JemallocUnbias
			}
			if p.Encoding != wantEnc {
				t.Errorf("Profile.Encoding %v, want %v (detail %q)", p.Encoding, wantEnc, p.Source.Detail)
			}
			for _, r := range append(p.recs, p.threads...) {
				// Auto-detection is known only at the end: the records
				// defer to Profile.Encoding.
				if r.InUse.Enc != parse.Unresolved || r.Alloc.Enc != parse.Unresolved {
					t.Fatalf("record sent with encoding %v/%v, want Unresolved", r.InUse.Enc, r.Alloc.Enc)
				}
				if p.Resolve(r.InUse.Enc) != wantEnc || p.Resolve(r.Alloc.Enc) != wantEnc {
					t.Fatalf("encoding %v, want %v (detail %q)", p.Resolve(r.InUse.Enc), wantEnc, p.Source.Detail)
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
	p := mustRead(t, filepath.Join(dir, "generated/je530_mixed_unbias-off.heap"), parse.Options{})
	c := p.recs[2] // stack C: 12 × 256 KiB + 2 × 16 B
	if c.InUse.Objects != 14 || c.InUse.Bytes != 3145760 || len(c.Stack) != 9 || c.Stack[0].Addr != 0x7f709aca2630 {
		t.Errorf("stack C = %+v", c)
	}
	d := p.recs[3] // stack D: all freed, accumulated only
	if !d.InUse.IsZero() || d.Alloc.Objects != 44 || d.Alloc.Bytes != 2816 {
		t.Errorf("stack D = %+v / %+v", d.InUse, d.Alloc)
	}
	th := mustRead(t, filepath.Join(dir, "generated/je530_threads_unbias-on.heap"), parse.Options{Threads: true})
	if n := len(mustRead(t, filepath.Join(dir, "generated/je530_threads_unbias-on.heap"), parse.Options{}).threads); n != 0 {
		t.Errorf("%d thread records sent without Options.Threads", n)
	}
	var names []string
	for _, r := range th.threads {
		names = append(names, r.Thread)
	}
	if got := strings.Join(names, ","); got != "t1 worker 1,t2 io-pool,t1 worker 1,t2 io-pool,t0" {
		t.Errorf("thread names %q", got)
	}
}

func TestJemallocVariants(t *testing.T) {
	p := mustRead(t, "testdata/variants.heap", parse.Options{Threads: true})
	if p.Symbols[0x401000] != "alloc_thing" || p.Symbols[0x401100] != "main" {
		t.Errorf("symbols %v", p.Symbols)
	}
	if len(p.recs) != 2 || len(p.recs[1].Stack) != 0 {
		t.Fatalf("records %+v", p.recs)
	}
	if p.threads[0].Thread != "t1 worker pool 1" {
		t.Errorf("thread %q", p.threads[0].Thread)
	}
	if p.MapsText != nil || p.Resolve(p.recs[0].InUse.Enc) != parse.Raw {
		t.Errorf("maps %q enc %v", p.MapsText, p.Resolve(p.recs[0].InUse.Enc))
	}
	q := mustRead(t, "testdata/crlf_accum.heap", parse.Options{})
	if q.recs[0].Alloc.Objects != 5 || !q.HasAlloc || !bytes.Contains(q.MapsText, []byte("dbus-daemon")) {
		t.Errorf("crlf: %+v", q.recs[0])
	}
	for _, mode := range []string{"on", "off"} {
		r := mustRead(t, "testdata/crlf_accum.heap", parse.Options{JemallocUnbias: mode})
		want := map[string]parse.Encoding{"on": parse.JemallocUnbias, "off": parse.Raw}[mode]
		// An explicit mode is known from the start: records carry it.
		if r.recs[0].InUse.Enc != want || r.recs[0].Alloc.Enc != want || r.Encoding != want || !strings.Contains(r.Source.Detail, "--jemalloc-unbias") {
			t.Errorf("--jemalloc-unbias %s: enc %v profile %v detail %q", mode, r.recs[0].InUse.Enc, r.Encoding, r.Source.Detail)
		}
	}
	if _, err := read("t.heap", []byte("heap_v2/1\n"), parse.Options{JemallocUnbias: "maybe"}); err == nil || !strings.Contains(err.Error(), `--jemalloc-unbias "maybe"`) {
		t.Errorf("bad --jemalloc-unbias: %v", err)
	}
}

func TestDetect(t *testing.T) {
	for in, want := range map[string]bool{
		"heap_v2/524288\n":          true,
		"\xef\xbb\xbfheap_v2/1\n":   true,
		"--- symbol\nbinary=x\n":    true,
		"--- heap\nheap_v2/1\n":     true,
		"heap profile: 1: 2 [3: 4]": false,
		"\x00\x01\x02garbage\xff":   false,
		"":                          false,
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestJemallocBadInput(t *testing.T) {
	const ok = "heap_v2/524288\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED_LIBRARIES:\n"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty file"},
		// formats.Read calls it unrecognized (TestDetect); Parse itself
		// says what it expected.
		{"junk", "\x00\x01\x02garbage\xff", "t.heap:1: expected a heap_v2/R header"},
		{"rate zero", strings.Replace(ok, "524288", "0", 1), "t.heap:1: sampling rate R = 0"},
		{"rate junk", strings.Replace(ok, "524288", "12x", 1), "t.heap:1: bad sampling rate"},
		{"overflow", strings.Replace(ok, "t*: 1: 64", "t*: 1: 18446744073709551616", 1), "t.heap:2: totals line: current bytes: \"18446744073709551616\": value out of range"},
		{"negative", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: -1: 64", 1), "t.heap:5: expected current objects"},
		{"non-numeric", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: 1: abc", 1), "t.heap:5: expected current bytes"},
		{"junk address", strings.Replace(ok, "0x2", "0xZZ", 1), "t.heap:4: expected a 0x-prefixed hex address, got \"0xZZ\""},
		{"address without 0x", strings.Replace(ok, "0x2", "1234", 1), "t.heap:4: expected a 0x-prefixed hex address"},
		{"address too long", strings.Replace(ok, "0x2", "0x12345678901234567", 1), "t.heap:4: expected a 0x-prefixed hex address"},
		{"address without digits", strings.Replace(ok, "0x2", "0x", 1), "t.heap:4: expected a 0x-prefixed hex address, got \"0x\""},
		{"address with junk after", strings.Replace(ok, "0x2", "0x2:", 1), "t.heap:4: expected a 0x-prefixed hex address, got \"0x2:\""},
		{"duplicate stack", strings.Replace(ok, "\n\nMAPPED", "\n@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED", 1), "t.heap:7: duplicated stack (first seen on line 4)"},
		{"missing t*", strings.Replace(ok, "  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\n", "\n", 1), "t.heap:6: expected the \"  t*: \" line of the previous stack, got MAPPED_LIBRARIES"},
		{"bad bracket", strings.Replace(ok, "[0: 0]\n@", "0: 0]\n@", 1), "t.heap:3: expected '['"},
		{"trailing junk", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64 [0: 0]", "@ 0x1 0x2\n  t*: 1: 64 [0: 0] x", 1), "t.heap:5: unexpected text"},
		{"objects without bytes", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: 1: 0", 1), "t.heap:5: objects and bytes must be both zero"},
		{"more objects than bytes", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64", "@ 0x1 0x2\n  t*: 100: 64", 1), "t.heap:5: more objects than bytes"},
		{"unknown line", strings.Replace(ok, "\n\nMAPPED", "\nhello\n\nMAPPED", 1), "t.heap:7: expected \"@ 0xADDR...\""},
		{"thread before t*", strings.Replace(ok, "@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n", "@ 0x1 0x2\n", 1), "t.heap:5: expected the \"  t*: \" line after the @ line"},
		{"second t*", strings.Replace(ok, "\n\nMAPPED", "\n  t*: 1: 64 [0: 0]\n\nMAPPED", 1), "t.heap:7: unexpected \"  t*: \" line"},
		{"thread uid overflow", strings.Replace(ok, "\n\nMAPPED", "\n  t18446744073709551616: 1: 64 [0: 0]\n\nMAPPED", 1), "t.heap:7: expected \"@ 0xADDR...\""},
		{"no header totals", "heap_v2/524288\n@ 0x1\n", "t.heap:2: expected the \"  t*: \" totals line"},
		{"unclosed symbols", "--- symbol\n0x1 f\n", "t.heap:2: truncated: --- symbol section"},
		{"bad symbol", "--- symbol\nfoo\n---\n", "t.heap:2: expected \"0xADDR name\""},
		{"header only", "heap_v2/524288\n  t*: 1: 64 [0: 0]\n", "truncated"},
		{"long line", "heap_v2/524288\n  t*: 1: 64 [0: 0]\n@" + strings.Repeat(" 0x1", maxLine/2) + "\n", "t.heap:3: line longer than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read("t.heap", []byte(tt.in), parse.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File != "t.heap" {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
	if _, err := read("t.heap", []byte(ok), parse.Options{}); err != nil {
		t.Fatalf("the base case must parse: %v", err)
	}
	if Detect([]byte(tests[1].in)) {
		t.Errorf("junk detected as jemalloc")
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
			_, err := read(file, data[:cut], parse.Options{})
			if err == nil {
				t.Errorf("%s cut at byte %d (%q...): no error", file, cut, tail(data[:cut]))
			}
		}
		for cut := range whole {
			if _, err := read(file, data[:cut], parse.Options{}); err != nil {
				t.Errorf("%s cut at byte %d before MAPPED_LIBRARIES: %v", file, cut, err)
			}
		}
		// --keep-going salvages the stacks before the cut, and says so.
		cut := bytes.LastIndex(data[:end], []byte("\n@"))
		p, err := read(file, data[:cut+5], parse.Options{KeepGoing: true})
		if err != nil || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "--keep-going") {
			t.Errorf("%s --keep-going: %v, %v", file, err, p)
			continue
		}
		// The records already sent stay sent, and the warning counts them.
		want := bytes.Count(data[:cut], []byte("\n@"))
		if len(p.recs) != want || p.Records != want || !strings.Contains(p.Warnings[0], fmt.Sprintf("kept the %d stacks", want)) {
			t.Errorf("%s --keep-going: %d records sent, Profile.Records %d, warning %q; want %d", file, len(p.recs), p.Records, p.Warnings[0], want)
		}
	}
}

// TestJemallocCutInMaps: a dump cut inside MAPPED_LIBRARIES, mid-line,
// is read, its maps without the cut line, with a warning that says the
// dump was truncated there; one cut at a line's end cannot be told from a
// whole one.
func TestJemallocCutInMaps(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(samplesDir(t), "generated/je530_mixed_unbias-off.heap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := len(data) - 25 // inside the last maps line
	p, err := read("cut.heap", data[:cut], parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(data[:cut], '\n')
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "MAPPED_LIBRARIES cut short") ||
		!bytes.HasSuffix(data[:last+1], p.MapsText) || len(p.MapsText) == 0 || p.MapsText[len(p.MapsText)-1] != '\n' {
		t.Errorf("warnings %q, maps ending %q", p.Warnings, tail(p.MapsText))
	}
	if p, err := read("whole.heap", data, parse.Options{}); err != nil || len(p.Warnings) != 0 {
		t.Errorf("whole dump: %v, warnings %q", err, p.Warnings)
	}
}

func tail(b []byte) string {
	if len(b) > 30 {
		b = b[len(b)-30:]
	}
	return string(b)
}

// TestRateFlag: the dump carries its own period, so --rate is not used,
// and a different one is not silently ignored.
func TestRateFlag(t *testing.T) {
	for _, tt := range []struct {
		rate float64
		warn string
	}{
		{0, ""},
		{4096, ""},
		{1000000, "--rate 1000000 ignored: the file's sampling period 4096 is used"},
	} {
		p := mustRead(t, "testdata/crlf_accum.heap", parse.Options{Rate: tt.rate})
		if got := strings.Join(p.Warnings, "; "); got != tt.warn {
			t.Errorf("--rate %v: warnings %q, want %q", tt.rate, got, tt.warn)
		}
		if p.Source.Rate != 4096 || p.recs[0].Rate != 4096 {
			t.Errorf("--rate %v: rate %v / %v, want the file's 4096", tt.rate, p.Source.Rate, p.recs[0].Rate)
		}
	}
}

// synthDump writes a raw dump of n distinct stacks of depth frames, each
// with one thread line per thread, and returns it with, per stack, the
// addresses and counts it wrote.
func synthDump(n, frames, threads int) ([]byte, [][]uint64, [][2]uint64) {
	var b bytes.Buffer
	stacks := make([][]uint64, n)
	counts := make([][2]uint64, n)
	var tot [2]uint64
	for i := range stacks {
		for f := 0; f < frames; f++ {
			stacks[i] = append(stacks[i], 0x555555554000+uint64(i)*0x100+uint64(f)*0x10000000)
		}
		counts[i] = [2]uint64{uint64(threads * (i + 1)), uint64(threads * (i + 1) * 48)}
		tot[0] += counts[i][0]
		tot[1] += counts[i][1]
	}
	fmt.Fprintf(&b, "heap_v2/524288\n  t*: %d: %d [0: 0]\n", tot[0], tot[1])
	for th := 0; th < threads; th++ {
		fmt.Fprintf(&b, "  t%d: %d: %d [0: 0] worker %d\n", th, tot[0]/uint64(threads), tot[1]/uint64(threads), th)
	}
	for i, st := range stacks {
		b.WriteString("@")
		for _, a := range st {
			fmt.Fprintf(&b, " 0x%x", a)
		}
		fmt.Fprintf(&b, "\n  t*: %d: %d [0: 0]\n", counts[i][0], counts[i][1])
		for th := 0; th < threads; th++ {
			fmt.Fprintf(&b, "  t%d: %d: %d [0: 0]\n", th, counts[i][0]/uint64(threads), counts[i][1]/uint64(threads))
		}
	}
	b.WriteString("\nMAPPED_LIBRARIES:\n555555554000-555555556000 r-xp 00000000 08:02 1 /bin/x\n")
	return b.Bytes(), stacks, counts
}

// TestStreaming checks the streaming contract: every record the sink
// copied holds its own stack although the parser reuses one buffer, the
// Profile counts what was sent, and breakdowns come only with Threads.
func TestStreaming(t *testing.T) {
	data, stacks, counts := synthDump(300, 20, 3)
	for _, threads := range []bool{false, true} {
		p, err := read("s.heap", data, parse.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.recs) != len(stacks) || p.Records != len(stacks) {
			t.Fatalf("threads=%v: %d records sent, Profile.Records %d, want %d", threads, len(p.recs), p.Records, len(stacks))
		}
		wantBreakdowns := 0
		if threads {
			wantBreakdowns = 3 * len(stacks)
		}
		if len(p.threads) != wantBreakdowns || p.Breakdowns != wantBreakdowns {
			t.Fatalf("threads=%v: %d breakdowns sent, Profile.Breakdowns %d, want %d", threads, len(p.threads), p.Breakdowns, wantBreakdowns)
		}
		for i, r := range p.recs {
			var got []uint64
			for _, f := range r.Stack {
				got = append(got, f.Addr)
			}
			if !slices.Equal(got, stacks[i]) || r.InUse.Objects != float64(counts[i][0]) || r.InUse.Bytes != float64(counts[i][1]) || r.Thread != "" {
				t.Fatalf("record %d: stack %x counts %v thread %q, want %x %v", i, got, r.InUse, r.Thread, stacks[i], counts[i])
			}
		}
		for i, r := range p.threads {
			st := stacks[i/3]
			if len(r.Stack) != len(st) || r.Stack[0].Addr != st[0] || r.Stack[len(st)-1].Addr != st[len(st)-1] {
				t.Fatalf("breakdown %d: stack of %d frames from %x, want %d from %x", i, len(r.Stack), r.Stack[0].Addr, len(st), st[0])
			}
			if want := fmt.Sprintf("t%d worker %d", i%3, i%3); r.Thread != want || r.InUse.Objects != float64(counts[i/3][0]/3) {
				t.Fatalf("breakdown %d: thread %q objects %v, want %q %v", i, r.Thread, r.InUse.Objects, want, counts[i/3][0]/3)
			}
		}
	}
}

// TestAllocsPerStack: after warming up, a stack costs no allocation, so
// parsing ten times as many stacks allocates about as much.
func TestAllocsPerStack(t *testing.T) {
	allocs := func(n int) float64 {
		data, _, _ := synthDump(n, 24, 2)
		var count int
		sink := parse.SinkFunc(func(*parse.Record) { count++ })
		opt := parse.Options{Threads: true, SizeHint: int64(len(data))}
		return testing.AllocsPerRun(5, func() {
			if _, err := Parse("a.heap", bufio.NewReader(bytes.NewReader(data)), opt, sink); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(200), allocs(2000)
	if large-small > 10 {
		t.Errorf("%v allocations for 200 stacks, %v for 2000: stacks allocate", small, large)
	}
}

func FuzzJemalloc(f *testing.F) {
	for _, dir := range []string{"testdata", filepath.Join("..", "..", "..", "shared", "samples", "jemalloc", "generated")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.heap"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("heap_v2/1\n  t*: 0: 0 [0: 0]\n"))
	// --raw symbol sections before a jemalloc dump and a legacy text.
	f.Add([]byte("--- symbol\nbinary=./a\n0x10 f--g--\n---\n--- heap\nheap_v2/2\n  t*: 1: 2 [0: 0]\n@ 0x10\n  t*: 1: 2 [0: 0]\n"))
	f.Add([]byte("--- symbol\n0x10 f\n---\n--- profile\nheap profile: 1: 2 [1: 2] @ heap_v2/2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := parse.Options{KeepGoing: len(data)%2 == 0, Threads: len(data)%3 == 0}
		var c collector
		var sent int
		sink := parse.SinkFunc(func(r *parse.Record) {
			sent++
			if r.InUse.Objects < 0 || r.InUse.Bytes < 0 || r.Rate < 1 || r.InUse.Enc != parse.Unresolved {
				t.Fatalf("bad record %+v", r)
			}
			if r.Breakdown && !opt.Threads {
				t.Fatalf("breakdown sent without Options.Threads")
			}
			c.Record(r)
		})
		p, err := Parse("fuzz.heap", bufio.NewReader(bytes.NewReader(data)), opt, sink)
		if err != nil {
			if p != nil {
				t.Fatalf("profile and error both returned")
			}
			return
		}
		if p.Records != len(c.recs) || p.Breakdowns != len(c.threads) {
			t.Fatalf("Profile counts %d+%d records, sink got %d+%d", p.Records, p.Breakdowns, len(c.recs), len(c.threads))
		}
		if p.Encoding != parse.Raw && p.Encoding != parse.JemallocUnbias {
			t.Fatalf("Profile.Encoding %v", p.Encoding)
		}
		if sent != p.Records+p.Breakdowns {
			t.Fatalf("%d records sent, Profile counts %d", sent, p.Records+p.Breakdowns)
		}
	})
}

// TestDuplicates: whether found as read (--keep-going) or from the log at
// the end, a duplicated stack gives the same error, before any later one.
func TestDuplicates(t *testing.T) {
	const head = "heap_v2/524288\n  t*: 3: 192 [0: 0]\n  t0: 3: 192 [0: 0]\n"
	block := func(addrs string) string { return "@ " + addrs + "\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n" }
	tests := []struct {
		name, in, want string
		kept           int // stacks sent before the error, with --keep-going
	}{
		{"later error", head + block("0x1") + block("0x2") + block("0x1") + "junk\n", "t.heap:10: duplicated stack (first seen on line 4)", 2},
		{"earliest of two", head + block("0x1") + block("0x2") + block("0x2") + block("0x1") + "\nMAPPED_LIBRARIES:\n", "t.heap:10: duplicated stack (first seen on line 7)", 2},
		{"truncated after", head + block("0x1") + block("0x1"), "t.heap:7: duplicated stack (first seen on line 4)", 1},
		{"order matters", head + block("0x1 0x2") + block("0x2 0x1") + block("0x1 0x2"), "t.heap:10: duplicated stack (first seen on line 4)", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := read("t.heap", []byte(tt.in), parse.Options{}); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			// The second warning: a salvaged dump's encoding is assumed.
			p, err := read("t.heap", []byte(tt.in), parse.Options{KeepGoing: true})
			if err != nil || len(p.recs) != tt.kept || len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], tt.want) {
				t.Errorf("--keep-going: %v, %v; want %d stacks kept and a warning with %q", err, p, tt.kept, tt.want)
			}
		})
	}
}

// TestSalvagedEncoding: a dump cut before its end cannot compare its
// header with its stacks; bytes that no sum of size classes makes still
// say prof_unbias, else it reads as raw counts with a warning, unless
// --jemalloc-unbias said how it was written.
func TestSalvagedEncoding(t *testing.T) {
	const head = "heap_v2/524288\n  t*: 9: 9000 [0: 0]\n  t0: 9: 9000 [0: 0]\n"
	block := func(addr, bytes string) string {
		return "@ " + addr + "\n  t*: 1: " + bytes + " [0: 0]\n  t0: 1: " + bytes + " [0: 0]\n"
	}
	const cut = "@ 0x9\n  t*: 1: 6"
	tests := []struct {
		name, in, mode string
		enc            parse.Encoding
		detail         string
		warned         bool
	}{
		{"odd bytes", head + block("0x1", "64") + block("0x2", "4097") + cut, "auto", parse.JemallocUnbias, "prof_unbias=on (detected: stacks whose bytes are no sum of size classes)", false},
		{"classes only", head + block("0x1", "64") + block("0x2", "4096") + cut, "auto", parse.Raw, "prof_unbias=off (assumed: the dump is cut)", true},
		{"said on", head + block("0x1", "64") + block("0x2", "4096") + cut, "on", parse.JemallocUnbias, "prof_unbias=on (--jemalloc-unbias)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read("t.heap", []byte(tt.in), parse.Options{KeepGoing: true, JemallocUnbias: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "cannot tell how it was written") })
			if p.Encoding != tt.enc || p.Source.Detail != tt.detail || warned != tt.warned || len(p.recs) != 2 {
				t.Errorf("encoding %v, detail %q, warned %v, %d stacks; want %v, %q, %v, 2", p.Encoding, p.Source.Detail, warned, len(p.recs), tt.enc, tt.detail, tt.warned)
			}
		})
	}
}

// TestOneStackEncoding: a dump of one stack has its header equal to the
// stack in either encoding. Bytes that no sum of size classes makes (not
// a multiple of 8) are prof_unbias's (a real dump after prof.reset: 38 ×
// 1 MiB written as 37: 40185738); bytes that one may stay raw, which of
// one small size class is also what prof_unbias writes. A dump of no
// stacks is said to hold nothing jemalloc would have shown.
func TestOneStackEncoding(t *testing.T) {
	dump := func(objs, bytes int) []byte {
		return []byte(fmt.Sprintf("heap_v2/524288\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n@ 0x401010 0x401210\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n\nMAPPED_LIBRARIES:\n",
			objs, bytes, objs, bytes, objs, bytes, objs, bytes))
	}
	for _, tc := range []struct {
		objs, bytes int
		want        parse.Encoding
	}{
		{37, 40185738, parse.JemallocUnbias},
		{12, 384, parse.Raw},
	} {
		p, err := read("one.heap", dump(tc.objs, tc.bytes), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Encoding != tc.want {
			t.Errorf("%d: %d: encoding %v, want %v (%s)", tc.objs, tc.bytes, p.Encoding, tc.want, p.Source.Detail)
		}
	}
	p, err := read("empty.heap", []byte("heap_v2/524288\n  t*: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "the dump has no stacks: profiling was inactive") {
		t.Errorf("warnings %q: an empty dump is not said to be", p.Warnings)
	}
}
