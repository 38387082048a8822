package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The fleet merge against real programs: testdata/merge/fleet.c (jemalloc)
// and testdata/merge/gofleet (the Go runtime) write dumps with a known
// truth, and heapest's merged view of them is checked against it.

// siteTruth is what the programs print per dump: live bytes per site.
type siteTruth struct {
	Dump  string `json:"dump"`
	Sites map[string]struct {
		LiveBytes   float64 `json:"live_bytes"`
		LiveObjects float64 `json:"live_objects"`
	} `json:"sites"`
}

func readTruths(out []byte) ([]siteTruth, error) {
	var ts []siteTruth
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var t siteTruth
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("program output %q: %v", sc.Text(), err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// buildFleetProg compiles fleet.c as SPEC §8 describes.
func buildFleetProg(t *testing.T, gcc, dir string) string {
	t.Helper()
	return buildC(t, gcc, dir, "e2e/testdata/merge/fleet.c", "-ljemalloc")
}

// parallel runs f(i) for i < n on all CPUs and returns the first error.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// mergedReport runs heapest report on inputs with JSON output, every row.
func mergedReport(heapest string, extra []string, inputs ...string) (Report, error) {
	args := append([]string{"report", "--format", "json", "--top", "0"}, extra...)
	out, errOut, err := runErr(nil, heapest, append(args, inputs...)...)
	var r Report
	if err != nil {
		return r, fmt.Errorf("heapest %v: %v\n%s", args, err, errOut)
	}
	return r, json.Unmarshal(out, &r)
}

// leafRow is the row of a --by func report for function fn, or of a
// --by stack report whose stack has fn as its leaf (one must exist).
func leafRow(r Report, fn string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Key == fn || len(row.Stack) > 0 && row.Stack[0] == fn {
			return row, true
		}
	}
	return Row{}, false
}

var headerTotals = regexp.MustCompile(`(?m)^heap_v2/(\d+)\n  t\*: (\d+): (\d+) `)

// TestMergeJemallocFleetExample is the jemalloc notes' example as a real
// fleet: 50 processes, each with 1,000,000 live 8-byte objects at site_a
// and one 8 MiB buffer at site_b, sampled at lg_prof_sample 20. Merged
// with heapest (each line unbiased, then summed), site_a's estimate lies
// within its interval of the truth. Summed first and unbiased after, with
// the average size of everything sampled (what jemalloc's leak summary
// does, and any merge that adds raw counts), site_a shrinks by orders of
// magnitude.
//
// One real run per CI job: the check uses a 99.9% interval, so sampling
// noise fails it once in a thousand runs, not once in twenty (the coverage
// studies measure the 95% interval over many runs).
func TestMergeJemallocFleetExample(t *testing.T) {
	gcc, _ := needJemalloc(t)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	prog := buildFleetProg(t, gcc, dir)
	dumps := filepath.Join(dir, "dumps")
	if err := os.Mkdir(dumps, 0o755); err != nil {
		t.Fatal(err)
	}
	const procs = 50
	truths := make([]siteTruth, procs)
	err := parallel(procs, func(i int) error {
		dump := filepath.Join(dumps, fmt.Sprintf("jeprof.%d.0.f.heap", 1000+i))
		out, errOut, err := runErr([]string{"MALLOC_CONF=prof:true,lg_prof_sample:20,prof_unbias:false"}, prog, "example", dump)
		if err != nil {
			return fmt.Errorf("fleet example: %v\n%s", err, errOut)
		}
		ts, err := readTruths(out)
		if err == nil && len(ts) == 1 {
			truths[i] = ts[0]
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var truthA, rawObjs, rawBytes float64
	rate := 0.0
	for _, tr := range truths {
		truthA += tr.Sites["site_a"].LiveBytes
		data, err := os.ReadFile(tr.Dump)
		if err != nil {
			t.Fatal(err)
		}
		m := headerTotals.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no heap_v2 header", tr.Dump)
		}
		rate, _ = strconv.ParseFloat(string(m[1]), 64)
		n, _ := strconv.ParseFloat(string(m[2]), 64)
		b, _ := strconv.ParseFloat(string(m[3]), 64)
		rawObjs += n
		rawBytes += b
	}
	// The directory is the fleet: no same-process flag is needed, as every
	// process maps its libraries elsewhere.
	for _, by := range []string{"func", "stack"} {
		r, err := mergedReport(heapest, []string{"--by", by, "--confidence", "0.999"}, dumps)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := leafRow(r, "site_a")
		if !ok {
			t.Fatalf("--by %s: no site_a row", by)
		}
		t.Logf("--by %s: site_a %.4g [%.4g, %.4g] from %g samples; truth %g", by, a.Estimate, a.Lo, a.Hi, a.Samples, truthA)
		if a.Lo > truthA || truthA > a.Hi {
			t.Errorf("--by %s: site_a interval [%g, %g] misses the truth %g", by, a.Lo, a.Hi, truthA)
		}
		if by == "func" {
			// Sum, then unbias with the average size of all sampled bytes:
			// site_a's raw sampled bytes (8 per sample) scaled by 1/π(avg).
			avg := rawBytes / rawObjs
			sumThenUnbias := 8 * a.Samples / -math.Expm1(-avg/rate)
			t.Logf("sum-then-unbias: average sampled size %.0f B, site_a %.4g (truth %g: %.0fx too low)", avg, sumThenUnbias, truthA, truthA/sumThenUnbias)
			if truthA/sumThenUnbias < 1000 {
				t.Errorf("sum-then-unbias gave %g for a truth of %g: expected orders of magnitude too low", sumThenUnbias, truthA)
			}
		}
	}
}

// fleetMerge is one merge of the coverage studies: its dumps' directory
// and the truth per site, summed over the dumps.
type fleetMerge struct {
	dir   string
	truth map[string]float64
}

func sumTruths(dir string, ts []siteTruth) fleetMerge {
	m := fleetMerge{dir: dir, truth: map[string]float64{}}
	for _, tr := range ts {
		for s, v := range tr.Sites {
			m.truth[s] += v.LiveBytes
		}
	}
	return m
}

// mergeStudySize is the number of merges and of dumps per merge (fewer
// with -short).
func mergeStudySize() (merges, dumps int) {
	if testing.Short() {
		return 30, 20
	}
	return 100, 20
}

// runMerges makes nm merges of nd dumps each, on all CPUs: gen(i, d)
// runs a program that writes merge i's dumps into directory d and prints
// their truths.
func runMerges(t *testing.T, dir string, nm, nd int, gen func(i int, d string) (stdout, stderr []byte, err error)) []fleetMerge {
	t.Helper()
	merges := make([]fleetMerge, nm)
	err := parallel(nm, func(i int) error {
		d := filepath.Join(dir, fmt.Sprintf("merge-%03d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		out, errOut, err := gen(i, d)
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", d, err, errOut)
		}
		ts, err := readTruths(out)
		if err != nil || len(ts) != nd {
			return fmt.Errorf("%s: %d truths, %v", d, len(ts), err)
		}
		merges[i] = sumTruths(d, ts)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return merges
}

// checkMergeCoverage merges each set of dumps with heapest, by func and by
// stack, and counts how often each site's interval holds its true live
// bytes: at least 93% over every (merge, site) pair of each grouping.
func checkMergeCoverage(t *testing.T, heapest string, merges []fleetMerge, sites []string) {
	for _, by := range []string{"func", "stack"} {
		perSite := map[string]*coverage{}
		var all coverage
		var mu sync.Mutex
		err := parallel(len(merges), func(i int) error {
			m := merges[i]
			// One process wrote every dump of a merge, resetting its
			// profile in between: independent samples, so
			// --allow-duplicates.
			r, err := mergedReport(heapest, []string{"--by", by, "--allow-duplicates"}, m.dir)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range sites {
				row, ok := leafRow(r, s)
				if !ok {
					return fmt.Errorf("%s --by %s: no row for %s", m.dir, by, s)
				}
				if perSite[s] == nil {
					perSite[s] = &coverage{}
				}
				perSite[s].add(row.Lo, m.truth[s], row.Hi)
				if os.Getenv("HEAPEST_E2E_MISSES") != "" && (row.Lo > m.truth[s] || m.truth[s] > row.Hi) {
					t.Logf("miss: %s --by %s %s: %.6g [%.6g, %.6g] %s from %g samples, truth %g", m.dir, by, s, row.Estimate, row.Lo, row.Hi, row.Method, row.Samples, m.truth[s])
				}
				all.add(row.Lo, m.truth[s], row.Hi)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(perSite))
		for s := range perSite {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			t.Logf("--by %s %-16s %d/%d = %.1f%%", by, s, perSite[s].hit, perSite[s].n, 100*perSite[s].rate())
		}
		t.Logf("--by %s: the 95%% interval holds the merged truth in %d of %d (merge, site) pairs = %.1f%%", by, all.hit, all.n, 100*all.rate())
		if all.rate() < 0.93 {
			t.Errorf("--by %s: coverage %.1f%% < 93%%", by, 100*all.rate())
		}
	}
}

// TestMergeCoverageJemalloc: merges of 20 real jemalloc dumps each, every
// dump at its own lg_prof_sample (14 to 19, prof_unbias on and off).
func TestMergeCoverageJemalloc(t *testing.T) {
	gcc, _ := needJemalloc(t)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	prog := buildFleetProg(t, gcc, dir)
	nm, nd := mergeStudySize()
	merges := runMerges(t, dir, nm, nd, func(i int, d string) ([]byte, []byte, error) {
		rng := rand.New(rand.NewPCG(uint64(i), 12))
		args := []string{"phases", d, strconv.Itoa(nd), strconv.Itoa(i + 1)}
		for range nd {
			args = append(args, strconv.Itoa(14+rng.IntN(6)))
		}
		conf := "MALLOC_CONF=prof:true"
		if i%2 == 1 {
			conf += ",prof_unbias:false"
		}
		return runErr([]string{conf}, prog, args...)
	})
	checkMergeCoverage(t, heapest, merges, []string{"site_small", "site_mid", "site_large", "site_mixed"})
}

// TestMergeCoverageGo: merges of 20 real Go heap profiles each, every one
// at its own runtime.MemProfileRate (64 KiB to 512 KiB).
func TestMergeCoverageGo(t *testing.T) {
	goTool := needTool(t, "go")
	heapest := heapestBinary(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "gofleet")
	cmd := []string{"build", "-o", prog, "."}
	if _, errOut, err := runErrDir(filepath.Join(repoRoot(t), "e2e", "testdata", "merge", "gofleet"), nil, goTool, cmd...); err != nil {
		t.Fatalf("go build gofleet: %v\n%s", err, errOut)
	}
	rates := []string{"65536", "131072", "262144", "524288"}
	nm, nd := mergeStudySize()
	merges := runMerges(t, dir, nm, nd, func(i int, d string) ([]byte, []byte, error) {
		rng := rand.New(rand.NewPCG(uint64(i), 34))
		args := []string{d, strconv.Itoa(nd), strconv.Itoa(i + 1)}
		for range nd {
			args = append(args, rates[rng.IntN(len(rates))])
		}
		return runErr([]string{"GOMAXPROCS=1"}, prog, args...)
	})
	checkMergeCoverage(t, heapest, merges, []string{"main.siteSmall", "main.siteMid", "main.siteLarge", "main.siteMixed"})
}

// TestLatestPerProcessByTime: successive heap profiles of one real Go
// process, whose names say nothing of it, are known as one process by
// their mappings only once read; --latest-per-process then keeps the one
// taken last (time_nanos), whatever their order on the command line, and
// the report and the merge are those of that profile alone. Without the
// flag they are refused, with a hint that names it.
func TestLatestPerProcessByTime(t *testing.T) {
	goTool := needTool(t, "go")
	heapest := heapestBinary(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "gosnap")
	if _, errOut, err := runErrDir(filepath.Join(repoRoot(t), "e2e", "testdata", "merge", "gosnap"), nil, goTool, "build", "-o", prog, "."); err != nil {
		t.Fatalf("go build gosnap: %v\n%s", err, errOut)
	}
	run(t, nil, prog, dir, "3")
	snap := func(i int) string { return filepath.Join(dir, fmt.Sprintf("snap-%d.pb.gz", i)) }
	shuffled := []string{snap(3), snap(1), snap(2)}

	_, errOut, err := runErr(nil, heapest, append([]string{"report"}, shuffled...)...)
	if err == nil || !strings.Contains(string(errOut), "3 inputs are successive dumps of one process") ||
		!strings.Contains(string(errOut), "use --latest-per-process to keep the newest dump of each (by the time each says it was taken)") {
		t.Fatalf("three snapshots of one process: err %v, stderr:\n%s", err, errOut)
	}
	alone := run(t, nil, heapest, "report", "--top", "0", snap(3))
	latest, errOut, err := runErr(nil, heapest, append([]string{"report", "--top", "0", "--latest-per-process"}, shuffled...)...)
	if err != nil {
		t.Fatalf("--latest-per-process: %v\n%s", err, errOut)
	}
	if string(latest) != string(alone) {
		t.Errorf("--latest-per-process of the three:\n%s\nwant the last snapshot's report:\n%s", latest, alone)
	}
	if want := "left out 2 older dump(s) of the same processes or recordings (by their contents)"; !strings.Contains(string(errOut), want) {
		t.Errorf("stderr %q lacks %q", errOut, want)
	}

	// Standard input cannot be read again: refused, with what to do.
	cmd := exec.Command(heapest, "report", "--latest-per-process", snap(1), "-")
	f, err := os.Open(snap(2))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "<stdin> cannot be: save it to a file first") {
		t.Errorf("--latest-per-process of a file and standard input: err %v, output:\n%s", err, out)
	}

	// A merge keeps the same one: its output reads as the last snapshot's
	// merge of one.
	one, all := filepath.Join(dir, "one.pb.gz"), filepath.Join(dir, "all.pb.gz")
	run(t, nil, heapest, "merge", "-o", one, snap(3))
	run(t, nil, heapest, append([]string{"merge", "-q", "--latest-per-process", "-o", all}, shuffled...)...)
	want := run(t, nil, heapest, "report", "--top", "0", "--by", "stack", one)
	got := run(t, nil, heapest, "report", "--top", "0", "--by", "stack", all)
	if g, w := strings.ReplaceAll(string(got), all, one), string(want); g != w {
		t.Errorf("merge --latest-per-process, reported:\n%s\nwant the last snapshot's merge of one:\n%s", g, w)
	}

	// Each snapshot converted alone (a fleet pipeline's step) keeps when
	// it was taken: the conversions are chosen among as the snapshots.
	var convs []string
	for i := 1; i <= 3; i++ {
		c := filepath.Join(dir, fmt.Sprintf("conv-%d.pb.gz", i))
		run(t, nil, heapest, "merge", "-q", "-o", c, snap(i))
		convs = append(convs, c)
	}
	want = run(t, nil, heapest, "report", "--top", "0", convs[2])
	got, errOut, err = runErr(nil, heapest, "report", "--top", "0", "--latest-per-process", convs[1], convs[2], convs[0])
	if err != nil || string(got) != string(want) {
		t.Errorf("--latest-per-process of the conversions: %v\n%s\n%s\nwant the last one's report:\n%s", err, got, errOut, want)
	}
}

// TestMergeForkedWorkers merges the dumps of a pre-fork server's workers:
// forked without exec, they keep their parent's libraries at the very
// same addresses, and only the pids in jemalloc's file names tell them
// apart. They are distinct processes, merged as such. Their samples are
// not independent, though: every worker's sampler goes on from the
// parent's random state, so the workers sample the same points of their
// allocations. Intervals that take them for independent covered what
// they allocated in 64% of runs at 95%; allowing for the correlation,
// the estimate covers it in all but a few of 30 runs (each run a new
// parent, at a new random address) at 99%.
func TestMergeForkedWorkers(t *testing.T) {
	gcc, _ := needJemalloc(t)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	prog := buildC(t, gcc, dir, "e2e/testdata/merge/prefork.c", "-ljemalloc")
	const workers, runs, atLeast = 6, 30, 28 // at most 3 misses of 30 at 99%: 0.3% of the time
	covered := 0
	for i := range runs {
		row, notes := mergeForked(t, heapest, prog, filepath.Join(dir, strconv.Itoa(i)), workers)
		if row.Lo <= row.truth && row.truth <= row.Hi {
			covered++
		}
		if i == 0 && (len(notes) == 0 || !strings.HasPrefix(notes[0], "6 inputs share one process's identity")) {
			t.Errorf("notes %q: want the workers' correlation said", notes)
		}
	}
	if covered < atLeast {
		t.Errorf("work_site's 99%% interval covered what the workers allocated in %d of %d runs, want at least %d", covered, runs, atLeast)
	}
}

// forkedRow is work_site's row of a merge of one run's workers, and what
// they said they allocated there.
type forkedRow struct {
	Row
	truth float64
}

// mergeForked runs prog with workers workers, writing their dumps into
// dir, and merges them at 99%.
func mergeForked(t *testing.T, heapest, prog, dir string, workers int) (forkedRow, []string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := run(t, []string{"MALLOC_CONF=prof:true,lg_prof_sample:12,prof_prefix:" + filepath.Join(dir, "jeprof")}, prog, strconv.Itoa(workers))
	truth := 0.0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var pid int
		var bytes float64
		if _, err := fmt.Sscan(line, &pid, &bytes); err != nil {
			t.Fatalf("prefork printed %q: %v", line, err)
		}
		truth += bytes
	}
	dumps, err := filepath.Glob(filepath.Join(dir, "jeprof.*.heap"))
	if err != nil || len(dumps) != workers {
		t.Fatalf("%d dumps (%v), want %d", len(dumps), err, workers)
	}
	stdout, stderr, err := runErr(nil, heapest, append([]string{"merge", "--format", "json", "--confidence", "0.99"}, dumps...)...)
	if err != nil {
		t.Fatalf("heapest merge of forked workers' dumps: %v\n%s", err, stderr)
	}
	var r struct {
		Report
		Notes  []string `json:"notes"`
		Merged struct {
			Processes int `json:"processes"`
		} `json:"merged"`
	}
	if err := json.Unmarshal(stdout, &r); err != nil {
		t.Fatal(err)
	}
	if r.Merged.Processes != workers {
		t.Errorf("merged %d processes, want %d", r.Merged.Processes, workers)
	}
	row, ok := leafRow(r.Report, "work_site")
	if !ok {
		t.Fatalf("no work_site row in %s", stdout)
	}
	return forkedRow{row, truth}, r.Notes
}
