package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	nt "github.com/heapest/heapest/internal/nettracetest"
	"github.com/heapest/heapest/internal/testfile"
)

// mergeInputs are real profiles of several formats, rates and programs
// that all have inuse_space.
var mergeInputs = []string{
	"../../testdata/jemalloc/je530_mixed_unbias-off.heap",
	"../../testdata/jemalloc/je530_threads_unbias-on.heap",
	"../../testdata/jemalloc/mixed_symbolized.heap",
	"../../parse/pprof/testdata/go-heap.pb.gz",
	"../../parse/pprof/testdata/go-debug1.heap",
	"../../parse/pprof/testdata/gperftools-heap_v2.heap",
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("heapest %v: exit %d\n%s", args, code, stderr)
	}
	return stdout
}

// TestMergeOrderIndependent: the same inputs in any order give the same
// bytes.
func TestMergeOrderIndependent(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "b.pb.gz")
	mustRun(t, append([]string{"merge", "-o", a}, mergeInputs...)...)
	rev := slices.Clone(mergeInputs)
	slices.Reverse(rev)
	mustRun(t, append([]string{"merge", "--jobs", "1", "-o", b}, rev...)...)
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Errorf("merging the same inputs in another order gave other bytes (%d and %d bytes)", len(x), len(y))
	}
}

// TestMergeAssociative: merging merges gives the rows and intervals of
// merging everything at once, and of report on every input, for every
// value and grouping.
func TestMergeAssociative(t *testing.T) {
	dir := t.TempDir()
	left, right := filepath.Join(dir, "left.pb.gz"), filepath.Join(dir, "right.pb.gz")
	all, nested := filepath.Join(dir, "all.pb.gz"), filepath.Join(dir, "nested.pb.gz")
	mustRun(t, append([]string{"merge", "-o", left}, mergeInputs[:2]...)...)
	mustRun(t, append([]string{"merge", "-o", right}, mergeInputs[2:]...)...)
	mustRun(t, "merge", "-o", nested, left, right)
	mustRun(t, append([]string{"merge", "-o", all}, mergeInputs...)...)
	for _, value := range []string{"inuse_space", "inuse_objects"} {
		for _, by := range []string{"stack", "func"} {
			args := []string{"report", "--format", "json", "--top", "0", "--value", value, "--by", by}
			direct := reportRows(t, mustRun(t, append(args, mergeInputs...)...))
			fromAll := reportRows(t, mustRun(t, append(args, all)...))
			fromNested := reportRows(t, mustRun(t, append(args, nested)...))
			if len(direct) < 10 {
				t.Fatalf("%s by %s: only %d rows", value, by, len(direct))
			}
			sameRows(t, value+" by "+by+": merge of all vs report", fromAll, direct)
			sameRows(t, value+" by "+by+": merge of merges vs merge of all", fromNested, fromAll)
		}
	}
}

type jsonRow struct {
	Key              string
	Estimate, Lo, Hi float64
	Samples          float64
	Method           string
	Cum              *struct{ Estimate, Lo, Hi float64 }
}

func reportRows(t *testing.T, out string) map[string]jsonRow {
	t.Helper()
	return reportRowsN(t, out, len(mergeInputs))
}

// reportRowsN indexes a JSON report's rows (and total) by key, checking
// that it says it merged inputs inputs.
func reportRowsN(t *testing.T, out string, inputs int) map[string]jsonRow {
	t.Helper()
	var r struct {
		Total  jsonRow
		Rows   []jsonRow
		Merged struct{ Inputs int }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Merged.Inputs != inputs {
		t.Errorf("merged.inputs = %d, want %d", r.Merged.Inputs, inputs)
	}
	rows := map[string]jsonRow{"total": r.Total}
	for _, row := range r.Rows {
		rows[row.Key] = row
	}
	return rows
}

func sameRows(t *testing.T, what string, got, want map[string]jsonRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: row %q missing", what, k)
			continue
		}
		if g.Method != w.Method || g.Samples != w.Samples {
			t.Errorf("%s: %q: method %s samples %g, want %s %g", what, k, g.Method, g.Samples, w.Method, w.Samples)
		}
		for _, p := range [][2]float64{{g.Estimate, w.Estimate}, {g.Lo, w.Lo}, {g.Hi, w.Hi}} {
			if !near(p[0], p[1]) {
				t.Errorf("%s: %q: %+v, want %+v", what, k, g, w)
				break
			}
		}
		if (g.Cum == nil) != (w.Cum == nil) || g.Cum != nil && (!near(g.Cum.Lo, w.Cum.Lo) || !near(g.Cum.Hi, w.Cum.Hi)) {
			t.Errorf("%s: %q: cum %+v, want %+v", what, k, g.Cum, w.Cum)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestMergeFailureLeavesNothing: a merge that stops at a bad input writes
// no output file, not even a temporary one.
func TestMergeFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.heap")
	if err := os.WriteFile(bad, []byte("heap_v2/524288\n  t*: 1: 2 [0: 0]\n@ 0x1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "merge", "-o", filepath.Join(outDir, "m.pb.gz"), mergeInputs[0], bad)
	if code != 2 || !bytes.Contains([]byte(stderr), []byte(bad)) {
		t.Errorf("exit %d, stderr %q: want 2 and the bad input named", code, stderr)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("a failed merge left %v behind", left)
	}
}

// fleetDump is a small whole jemalloc dump of one process of a fleet: its
// own counts, and libc at its own address.
func fleetDump(i int) string {
	small, big := 5+i%17, 1+i%3
	libc := 0x7f0000000000 + uint64(i)<<24
	return fmt.Sprintf(`--- symbol
binary=/usr/local/bin/server
0x401010 alloc_small
0x401110 alloc_big
0x401210 main
---
--- heap
heap_v2/524288
  t*: %[1]d: %[2]d [0: 0]
  t0: %[1]d: %[2]d [0: 0]
@ 0x401010 0x401210
  t*: %[3]d: %[4]d [0: 0]
  t0: %[3]d: %[4]d [0: 0]
@ 0x401110 0x401210
  t*: %[5]d: %[6]d [0: 0]
  t0: %[5]d: %[6]d [0: 0]

MAPPED_LIBRARIES:
00400000-00402000 r-xp 00000000 08:01 1234 /usr/local/bin/server
%[7]x-%[8]x r-xp 00026000 08:01 5678 /usr/lib/x86_64-linux-gnu/libc.so.6
`, small+big, small*32+big<<20, small, small*32, big, big<<20, libc, libc+0x1a000)
}

// TestMergeBadInputsAmongMany: among 1,000 inputs, a truncated, a
// random-bytes, an empty and an unreadable one (a link to nothing: root
// reads any file) are each named; without --keep-going the first stops
// the merge and nothing is written, with it the others merge and the
// four are listed.
func TestMergeBadInputsAmongMany(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "fleet")
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(in, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 996 {
		write(fmt.Sprintf("jeprof.%d.0.f.heap", 10000+i), []byte(fleetDump(i)))
	}
	whole := fleetDump(996)
	write("jeprof.20001.0.f.heap", []byte(whole[:strings.Index(whole, "@ 0x401110")])) // truncated
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	write("jeprof.20002.0.f.heap", random)
	write("jeprof.20003.0.f.heap", nil)
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(in, "jeprof.20004.0.f.heap")); err != nil {
		t.Fatal(err)
	}
	bad := []string{"jeprof.20001.0.f.heap", "jeprof.20002.0.f.heap", "jeprof.20003.0.f.heap", "jeprof.20004.0.f.heap"}

	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(outDir, "fleet.pb.gz")
	_, stderr, code := runCLI(t, "merge", "-o", out, in)
	if code != 2 || !strings.Contains(stderr, bad[0]) {
		t.Errorf("without --keep-going: exit %d, stderr %q; want 2 naming %s", code, stderr, bad[0])
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("a failed merge left %v behind", left)
	}

	_, stderr, code = runCLI(t, "merge", "--keep-going", "-o", out, in)
	if code != 0 || !strings.Contains(stderr, "merged 996 of 1000 inputs; skipped:") {
		t.Fatalf("--keep-going: exit %d, stderr %q", code, stderr)
	}
	for _, b := range bad {
		if !strings.Contains(stderr, b) {
			t.Errorf("--keep-going: %s not named in %q", b, stderr)
		}
	}
	// The merged profile names what it left out, and so does a merge of
	// it with another.
	again := filepath.Join(outDir, "again.pb.gz")
	mustRun(t, "merge", "-o", again, out, "../../testdata/fleet/host1/jeprof.101.0.f.heap")
	for _, tc := range []struct {
		file   string
		inputs int
	}{{out, 996}, {again, 997}} {
		report := mustRun(t, "report", "--format", "json", tc.file)
		var r struct {
			Merged struct {
				Inputs, Skipped int
				SkippedBelow    []string `json:"skipped_below"`
			}
		}
		if err := json.Unmarshal([]byte(report), &r); err != nil {
			t.Fatal(err)
		}
		if r.Merged.Inputs != tc.inputs || r.Merged.Skipped != 4 || len(r.Merged.SkippedBelow) != 4 {
			t.Errorf("%s records %d inputs, %d skipped (%q), want %d and 4 named", tc.file, r.Merged.Inputs, r.Merged.Skipped, r.Merged.SkippedBelow, tc.inputs)
		}
		for i, b := range bad {
			if i < len(r.Merged.SkippedBelow) && !strings.Contains(strings.Join(r.Merged.SkippedBelow, "\n"), b) {
				t.Errorf("%s: %s not named among the skipped: %q", tc.file, b, r.Merged.SkippedBelow)
			}
		}
	}
}

// TestMergeAssociativeByType: inputs with types (traces, JFR recordings)
// keep them through a merged profile, so --by type of a merge of merges
// gives the rows of one merge.
func TestMergeAssociativeByType(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for seed := range 3 {
		w := nt.Workload{Seed: uint64(seed + 1), Threads: 2, Types: []nt.TypeSpec{
			{Name: "System.String", Size: 48, Objects: 20000 + 5000*seed},
			{Name: "System.Byte[]", Size: 4000, Objects: 500},
		}}
		data, _ := nt.Simulate(w, nt.Options{Version: nt.V6, PID: 100 + seed})
		path := filepath.Join(dir, fmt.Sprintf("trace%d.nettrace", seed))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, path)
	}
	inputs = append(inputs, "../../parse/jfr/testdata/jdk17-2chunks.jfr.gz", "../../parse/jfr/testdata/jdk25.jfr.gz")
	left, right, nested := filepath.Join(dir, "l.pb.gz"), filepath.Join(dir, "r.pb.gz"), filepath.Join(dir, "n.pb.gz")
	mustRun(t, append([]string{"merge", "--value", "alloc_space", "-o", left}, inputs[:2]...)...)
	mustRun(t, append([]string{"merge", "--value", "alloc_space", "-o", right}, inputs[2:]...)...)
	mustRun(t, "merge", "--value", "alloc_space", "-o", nested, left, right)
	for _, by := range []string{"type", "stack", "func"} {
		args := []string{"report", "--format", "json", "--top", "0", "--value", "alloc_space", "--by", by}
		direct := reportRowsN(t, mustRun(t, append(args, inputs...)...), len(inputs))
		fromNested := reportRowsN(t, mustRun(t, append(args, nested)...), len(inputs))
		if by == "type" && (len(direct) < 5 || direct["System.String"].Estimate == 0) {
			t.Fatalf("--by type: %d rows, System.String %+v", len(direct), direct["System.String"])
		}
		sameRows(t, "alloc_space by "+by+": merge of merges vs report", fromNested, direct)
	}
}

// TestMergeOfMergesFindsFamilies: forked workers' dumps (one mapping,
// pids apart) split between two merges are one family again in the merge
// of those merges, whose intervals are then those of merging every dump
// at once (each half alone allows for its own share only).
func TestMergeOfMergesFindsFamilies(t *testing.T) {
	data, err := os.ReadFile("../../testdata/jemalloc/je530_threads_unbias-on.heap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var dumps []string
	for pid := 101; pid <= 106; pid++ {
		p := filepath.Join(dir, fmt.Sprintf("jeprof.%d.0.m0.heap", pid))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, p)
	}
	left, right, nested := filepath.Join(dir, "left.pb.gz"), filepath.Join(dir, "right.pb.gz"), filepath.Join(dir, "nested.pb.gz")
	mustRun(t, append([]string{"merge", "-o", left}, dumps[:2]...)...)
	mustRun(t, append([]string{"merge", "-o", right}, dumps[2:]...)...)
	mustRun(t, "merge", "-o", nested, left, right)
	for _, by := range []string{"func", "stack"} {
		args := []string{"report", "--format", "json", "--top", "0", "--by", by}
		direct := reportRowsN(t, mustRun(t, append(args, dumps...)...), len(dumps))
		sameRows(t, "by "+by+": the merge of the two merges vs the six dumps", reportRowsN(t, mustRun(t, append(args, nested)...), len(dumps)), direct)
		sameRows(t, "by "+by+": the two merges read at once vs the six dumps", reportRowsN(t, mustRun(t, append(args, left, right)...), len(dumps)), direct)
		// Not vacuous: six copies of one dump are one sample counted six
		// times, and the gamma interval of all six (directly or through
		// the merges) is six times the dump's own; taken for independent,
		// it was √6 times narrower.
		gamma := append(slices.Clone(args), "--method", "gamma")
		one := reportRowsN(t, mustRun(t, append(gamma, dumps[0])...), 0)["total"] // one input: no merged section
		for name, in := range map[string][]string{"the six dumps": dumps, "the merge of the two merges": {nested}} {
			six := reportRowsN(t, mustRun(t, append(gamma, in...)...), len(dumps))["total"]
			if !near(six.Lo, 6*one.Lo) || !near(six.Hi, 6*one.Hi) {
				t.Errorf("by %s: %s: total %v – %v, want six times one dump's %v – %v", by, name, six.Lo, six.Hi, one.Lo, one.Hi)
			}
		}
	}
}

// A merge of one input is that input again to the guard against summing
// dumps of one process or recording: its comment carries the input's
// identities (parse.Merged.Keys), which a JFR recording's or a trace's
// contents have no mappings to give. A converted recording beside the
// recording itself is one recording twice; converted recordings of one
// JVM are one JVM's for their live objects, and sum for their
// allocations; a conversion of a conversion is still the recording.
func TestMergeOfOneKeepsIdentity(t *testing.T) {
	const jfr = "../../parse/jfr/testdata/"
	r0, r1 := jfr+"jdk17-one-jvm-0.jfr.gz", jfr+"jdk17-one-jvm-1.jfr.gz"
	dir := t.TempDir()
	m0, m1, mm0 := filepath.Join(dir, "m0.pb.gz"), filepath.Join(dir, "m1.pb.gz"), filepath.Join(dir, "mm0.pb.gz")
	mustRun(t, "merge", "-q", "-o", m0, r0)
	mustRun(t, "merge", "-q", "-o", m1, r1)
	mustRun(t, "merge", "-q", "-o", mm0, m0)
	for _, tc := range []struct {
		args []string
		say  string // in the refusal; "" for none
	}{
		{[]string{"--value", "alloc_space", m0, r0}, "2 inputs are dumps of one recording"},
		{[]string{"--value", "alloc_space", mm0, r0}, "2 inputs are dumps of one recording"},
		{[]string{"--value", "inuse_objects", m0, m1}, "2 inputs are recordings of one JVM"},
		{[]string{"--value", "inuse_objects", m0, r1}, "2 inputs are recordings of one JVM"},
		{[]string{"--value", "alloc_space", m0, m1}, ""},
	} {
		_, stderr, code := runCLI(t, append([]string{"report", "-q"}, tc.args...)...)
		switch {
		case tc.say == "" && code != 0:
			t.Errorf("%v: exit %d, want the inputs summed\n%s", tc.args, code, stderr)
		case tc.say != "" && (code != 2 || !strings.Contains(stderr, tc.say)):
			t.Errorf("%v: exit %d, stderr %q: want %q", tc.args, code, stderr, tc.say)
		}
	}
}

// Forked workers' dumps, each converted alone: their merges' comments
// carry each worker's identity (its pid's), so they are summed like the
// dumps, not refused as one process by their mappings, and the family
// they share is widened for as the dumps' is.
func TestMergesOfOneForkedWorker(t *testing.T) {
	data, err := os.ReadFile("../../testdata/jemalloc/je530_threads_unbias-on.heap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var dumps, merges []string
	for pid := 101; pid <= 104; pid++ {
		p := filepath.Join(dir, fmt.Sprintf("jeprof.%d.0.m0.heap", pid))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m := filepath.Join(dir, fmt.Sprintf("w%d.pb.gz", pid))
		mustRun(t, "merge", "-q", "-o", m, p)
		dumps, merges = append(dumps, p), append(merges, m)
	}
	args := []string{"report", "--format", "json", "--top", "0"}
	sameRows(t, "the four conversions vs the four dumps", reportRowsN(t, mustRun(t, append(args, merges...)...), len(dumps)),
		reportRowsN(t, mustRun(t, append(args, dumps...)...), len(dumps)))
}

// Two dumps of one JFR recording (jcmd JFR.dump, twice: the second holds
// the first's chunk and one more): --latest-per-process keeps the one
// that holds every chunk, whatever the order given, and says so; what it
// prints then is what a report of that dump alone prints, warnings
// included (the first reading's are not told twice). Without the flag
// the refusal names it. A merge of one holds the chunks of its recording:
// of the two, the last by path stays (heapest reads its inputs sorted).
func TestLatestPerProcessJFRDumps(t *testing.T) {
	both := testfile.Gunzip(t, "../../parse/jfr/testdata/jdk17-2chunks.jfr.gz")
	size := binary.BigEndian.Uint64(both[8:16]) // the first chunk's size, in its header
	dir := t.TempDir()
	d1, d2 := filepath.Join(dir, "d1.jfr"), filepath.Join(dir, "d2.jfr")
	if err := os.WriteFile(d1, both[:size], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d2, both, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "report", d1, d2)
	if code != 2 || !strings.Contains(stderr, "use --latest-per-process to keep the last dump of each recording") {
		t.Errorf("two dumps of one recording: exit %d, stderr %q", code, stderr)
	}
	wantOut, wantErr, code := runCLI(t, "report", "--top", "0", d2)
	if code != 0 {
		t.Fatalf("report d2: exit %d\n%s", code, wantErr)
	}
	for _, order := range [][]string{{d1, d2}, {d2, d1}} {
		out, stderr, code := runCLI(t, append([]string{"report", "--top", "0", "--latest-per-process"}, order...)...)
		note := "heapest: --latest-per-process: left out 1 older dump(s) of the same processes or recordings (by their contents)\n"
		if code != 0 || out != wantOut || stderr != note+wantErr {
			t.Errorf("--latest-per-process %v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant the report of d2 alone:\n%s\n%s", order, code, out, stderr, wantOut, note+wantErr)
		}
	}
	// d2 and its conversion hold the same chunks: the last by path stays.
	m := filepath.Join(dir, "m.pb.gz")
	mustRun(t, "merge", "-q", "-o", m, d2)
	wantM, _, _ := runCLI(t, "report", "--top", "0", m)
	if out, stderr, code := runCLI(t, "report", "--top", "0", "--latest-per-process", d2, m); code != 0 || out != wantM {
		t.Errorf("--latest-per-process of d2 and its merge of one: exit %d\n%s\n%s\nwant the report of the merge:\n%s", code, out, stderr, wantM)
	}
}

// TestMergeBesideWhatItHolds: a merge read again beside one of its own
// inputs, or beside another merge of one of them, is refused, not summed
// (it counted host1's dump twice); a merge beside other processes' dumps
// sums.
func TestMergeBesideWhatItHolds(t *testing.T) {
	const fleet = "../../testdata/fleet/"
	h1, h2, h3 := fleet+"host1/jeprof.101.0.f.heap", fleet+"host2/jeprof.101.0.f.heap", fleet+"host3/jeprof.202.0.f.heap"
	dir := t.TempDir()
	all, some := filepath.Join(dir, "all.pb.gz"), filepath.Join(dir, "some.pb.gz")
	mustRun(t, "merge", "-q", "-o", all, h1, h2, h3)
	mustRun(t, "merge", "-q", "-o", some, h1, h2)
	for _, tc := range []struct {
		args   []string
		refuse string // the group the refusal names; "" for none
	}{
		// heapest reads its inputs sorted by path.
		{[]string{all, h1}, h1 + ", " + all},
		{[]string{some, all}, all + ", " + some},
		{[]string{some, h3}, ""},
		{[]string{"--allow-duplicates", all, h1}, ""},
	} {
		_, stderr, code := runCLI(t, append([]string{"report", "-q"}, tc.args...)...)
		switch {
		case tc.refuse == "" && code != 0:
			t.Errorf("%v: exit %d, want the inputs summed\n%s", tc.args, code, stderr)
		case tc.refuse != "" && (code != 2 || !strings.Contains(stderr, "2 inputs are a merge and inputs it holds already") || !strings.Contains(stderr, "\n  "+tc.refuse+"\n")):
			t.Errorf("%v: exit %d, stderr %q: want the refusal of %s", tc.args, code, stderr, tc.refuse)
		}
	}
}
