package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJemallocInlined runs a program built with -O2 whose allocating
// functions the compiler inlined (testdata/realdata/jemalloc/inlined.c),
// dumped with every allocation sampled (lg_prof_sample:0, so the numbers
// are exact), and checks heapest's rows against jeprof's, which names the
// inlined calls through addr2line -i: every function of the program has
// jeprof's flat and cum bytes, its inlined ones ("grow (inline)") included;
// a stack lists the inlined calls innermost first; --lines puts each at
// its call; --no-inlines gives their bytes to the function they were
// inlined into.
func TestJemallocInlined(t *testing.T) {
	gcc, jeprof := needJemalloc(t)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "realdata", "jemalloc", "inlined.c")
	prog := filepath.Join(dir, "inlined")
	run(t, nil, gcc, "-O2", "-g", "-fno-omit-frame-pointer", "-o", prog, src, "-ljemalloc")
	dump := filepath.Join(dir, "inlined.heap")
	run(t, []string{"MALLOC_CONF=prof:true,lg_prof_sample:0"}, prog, dump)

	jep := jeprofFlatCum(t, jeprof, prog, dump)
	rows := map[string]Row{}
	for _, r := range parseReport(t, run(t, nil, heapest, "report", "--format", "json", "--top", "0", dump)).Rows {
		rows[r.Key] = r
	}
	const mib = 1 << 20
	for fn, want := range map[string][2]float64{ // flat, cum
		"grow": {16 * mib, 16 * mib}, "fill_inner": {0, 16 * mib}, "fill_outer": {0, 16 * mib},
		"keep_direct": {4 * mib, 4 * mib}, "main": {0, 20 * mib},
	} {
		r, ok := rows[fn]
		if !ok || r.Cum == nil {
			t.Errorf("%s: no row with a cum", fn)
			continue
		}
		if r.Estimate != want[0] || r.Cum.Estimate != want[1] {
			t.Errorf("%s: flat %.0f, cum %.0f; want %.0f, %.0f (the program's)", fn, r.Estimate, r.Cum.Estimate, want[0], want[1])
		}
		j, ok := jep[fn]
		if !ok {
			t.Errorf("%s: no jeprof row (jeprof: %v)", fn, jep)
			continue
		}
		if r.Estimate != j[0] || r.Cum.Estimate != j[1] {
			t.Errorf("%s: heapest flat %.0f, cum %.0f; jeprof %.0f, %.0f", fn, r.Estimate, r.Cum.Estimate, j[0], j[1])
		}
	}

	stacks := parseReport(t, run(t, nil, heapest, "report", "--by", "stack", "--format", "json", "--top", "0", dump)).Rows
	want := []string{"grow", "fill_inner", "fill_outer", "main"}
	found := false
	for _, r := range stacks {
		if len(r.Stack) >= len(want) && strings.Join(r.Stack[:len(want)], " ") == strings.Join(want, " ") {
			found = r.Estimate == 16*mib
		}
	}
	if !found {
		t.Errorf("no stack %q of 16 MiB, leaf first; stacks %v", want, stacks)
	}

	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := parseReport(t, run(t, nil, heapest, "report", "--lines", "--format", "json", "--top", "0", dump)).Rows
	for _, w := range []struct{ fn, at string }{
		{"grow", "void *p = malloc(n);"}, {"fill_inner", "keep[nkeep++] = grow(64 << 10);"}, {"fill_outer", "\tfill_inner(k);"},
	} {
		key := w.fn + " " + src + ":" + strconv.Itoa(lineOf(t, string(text), w.at))
		var r Row
		for _, row := range lines {
			if row.Key == key {
				r = row
			}
		}
		if r.Cum == nil || r.Cum.Estimate != 16*mib {
			t.Errorf("--lines: no row %q with 16 MiB cum", key)
		}
	}

	plain := map[string]Row{}
	for _, r := range parseReport(t, run(t, nil, heapest, "report", "--no-inlines", "--format", "json", "--top", "0", dump)).Rows {
		plain[r.Key] = r
	}
	if r := plain["fill_outer"]; r.Estimate != 16*mib {
		t.Errorf("--no-inlines: fill_outer flat %.0f, want the 16 MiB of the calls inlined into it", r.Estimate)
	}
	if _, ok := plain["grow"]; ok {
		t.Error("--no-inlines: an inlined function has a row")
	}
}

// TestJemallocInlinedLines: in a C++ program whose allocations are all
// made in code inlined from the standard library's headers
// (testdata/realdata/jemalloc/templates.cc, -O2), every frame of the
// program's own work<N> named by line is at a line of templates.cc, with
// and without --no-inlines: GCC's empty ranges of emptied inlined calls,
// which start where other inlined code does, once put 3 of its 64 frames
// at lines in the headers.
func TestJemallocInlinedLines(t *testing.T) {
	_, _ = needJemalloc(t)
	gxx := needTool(t, "g++")
	heapest := heapestBinary(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "realdata", "jemalloc", "templates.cc")
	prog := filepath.Join(dir, "templates")
	run(t, nil, gxx, "-O2", "-g", "-DNINST=4", "-fno-omit-frame-pointer", "-o", prog, src, "-ljemalloc")
	run(t, []string{"MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:" + filepath.Join(dir, "t")}, prog)
	dumps, err := filepath.Glob(filepath.Join(dir, "t.*.heap"))
	if err != nil || len(dumps) != 1 {
		t.Fatalf("dumps %v, %v: want the one prof_final writes", dumps, err)
	}
	for _, flags := range [][]string{nil, {"--no-inlines"}} {
		args := append([]string{"report", "--lines", "--by", "stack", "--format", "json", "--top", "0"}, flags...)
		n := 0
		for _, r := range parseReport(t, run(t, nil, heapest, append(args, dumps[0])...)).Rows {
			for _, f := range r.Stack {
				if !strings.HasPrefix(f, "work ") {
					continue
				}
				n++
				if !strings.Contains(f, src+":") {
					t.Errorf("%v: frame %q, want a line of %s", flags, f, src)
				}
			}
		}
		if n < 10 { // 64 stacks, 12 without inlined calls (fewer distinct stacks)
			t.Errorf("%v: %d frames of work<N>, want at least 10", flags, n)
		}
	}
}

// jeprofFlatCum is jeprofRows with an inlined call's row ("f (inline)")
// as f's, where f has no row of its own (a function both inlined and
// called is two rows to jeprof).
func jeprofFlatCum(t *testing.T, jeprof, binary, dump string) map[string][2]float64 {
	rows, err := jeprofRows(jeprof, binary, dump)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for name, r := range rows {
		fn, inline := strings.CutSuffix(name, " (inline)")
		if _, own := rows[fn]; !inline || !own {
			out[fn] = r
		}
	}
	return out
}

// lineOf is the line number of the first line of text containing s.
func lineOf(t *testing.T, text, s string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("no line containing %q", s)
	return 0
}
