package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The JFR lab: a Java program (testdata/jfr/Lab.java) allocates known bytes
// from known methods, on several threads and in two phases, under a real
// JFR recording; heapest's estimate and interval for each method are
// checked against what the program allocated. See docs/jfr.md for the
// study this test runs at scale.

// labSites are the program's allocating methods, in its output's names.
var labSites = []string{"Lab.warm", "Lab.small", "Lab.mid", "Lab.big", "Lab.phase1", "Lab.phase2", "Lab.twin", "Lab.cool"}

// mayBeUnsampled are the sites a run may have no sample of: mid's 4 KiB
// arrays fit in a TLAB and seldom take the slow path that emits an event,
// so JFR credits a sixth of its bytes (docs/jfr.md) and, under the default
// settings' throttle, now and then none. Its row is checked when present.
var mayBeUnsampled = map[string]bool{"Lab.mid": true}

// labTruth is what Lab prints: per site and thread the bytes it allocated,
// and per thread what ThreadMXBean counted against what the sites add up to.
type labTruth struct {
	Sites []struct {
		Func   string  `json:"func"`
		Thread string  `json:"thread"`
		Bytes  float64 `json:"bytes"`
	} `json:"sites"`
	Threads []struct {
		Thread    string  `json:"thread"`
		Allocated float64 `json:"allocated"`
		Expected  float64 `json:"expected"`
	} `json:"threads"`
}

// labRun is one execution of the program and heapest's report on it.
type labRun struct {
	// settings are the JFR settings: the JDK's profile (300 samples a
	// second) or default (150), or tlab (testdata/jfr/tlab.jfc: the TLAB
	// events of older JDKs instead of ObjectAllocationSample).
	settings string
	tlabJFC  string
	jfr      string
	truth    labTruth
	report   Report
	err      error
}

// jfrRuns is the number of program executions: HEAPEST_E2E_JFR_RUNS=N for
// the study (docs/jfr.md used 200), else 4 (2 with -short), which checks
// the pipeline and prints the coverage of those few runs. The runs cycle
// through the settings HEAPEST_E2E_JFR_SETTINGS lists (default
// "profile,default,tlab"). The recordings are removed, unless
// HEAPEST_E2E_JFR_KEEP names a directory to keep them in.
func jfrRuns(t *testing.T) int {
	n := 4
	if testing.Short() {
		n = 2
	}
	if v := os.Getenv("HEAPEST_E2E_JFR_RUNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("HEAPEST_E2E_JFR_RUNS=%q: want a count ≥ 1", v)
		}
	}
	return n
}

func TestJFRLab(t *testing.T) {
	java, javac := needTool(t, "java"), needTool(t, "javac")
	heapest := heapestBinary(t)
	dir := t.TempDir()
	run(t, nil, javac, "-d", dir, filepath.Join(repoRoot(t), "e2e", "testdata", "jfr", "Lab.java"))
	n := jfrRuns(t)
	settings := strings.Split("profile,default,tlab", ",")
	if v := os.Getenv("HEAPEST_E2E_JFR_SETTINGS"); v != "" {
		settings = strings.Split(v, ",")
	}
	runs := make([]*labRun, n)
	for i := range runs {
		r := &labRun{settings: settings[i%len(settings)], jfr: filepath.Join(dir, fmt.Sprintf("run%d.jfr", i)),
			tlabJFC: filepath.Join(repoRoot(t), "e2e", "testdata", "jfr", "tlab.jfc")}
		runs[i] = r
		if keep := os.Getenv("HEAPEST_E2E_JFR_KEEP"); keep != "" {
			r.jfr = filepath.Join(keep, filepath.Base(r.jfr))
		}
		r.err = execLab(r, java, dir, heapest)
		if r.err != nil {
			t.Fatalf("run %d: %v", i, r.err)
		}
		if os.Getenv("HEAPEST_E2E_JFR_KEEP") == "" {
			os.Remove(r.jfr)
		}
	}
	t.Run("truth", func(t *testing.T) { checkLabTruth(t, runs) })
	t.Run("sites", func(t *testing.T) { checkLabSites(t, runs) })
	t.Run("coverage", func(t *testing.T) { labCoverage(t, runs) })
}

// execLab runs the program under a recording, then heapest on it.
func execLab(r *labRun, java, classes, heapest string) error {
	settings := r.settings
	if settings == "tlab" {
		settings = r.tlabJFC
	}
	out, errOut, err := runErr(nil, java, "-Xmx1g", "-cp", classes,
		"-XX:StartFlightRecording=settings="+settings+",filename="+r.jfr, "Lab", "1.0")
	if err != nil {
		return fmt.Errorf("java Lab: %v\n%s", err, errOut)
	}
	// The JVM logs the recording's start to stdout too: the truth is the
	// last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r.truth); err != nil {
		return fmt.Errorf("Lab output: %v\n%s", err, out)
	}
	return heapestReportBy(heapest, r.jfr, "alloc_space", "func", &r.report)
}

// checkLabTruth checks the program's truth against the JVM's own count of
// each worker thread's allocated bytes: the sites are all a worker
// allocates, give or take the thread's start (a few KB).
func checkLabTruth(t *testing.T, runs []*labRun) {
	for i, r := range runs {
		for _, th := range r.truth.Threads {
			if d := th.Allocated - th.Expected; d < 0 || d > 1<<20 {
				t.Errorf("run %d, thread %s: the JVM counted %.0f bytes, the sites %.0f", i, th.Thread, th.Allocated, th.Expected)
			}
		}
	}
}

// checkLabSites checks that every site is a row of every report (but the
// ones JFR may leave unsampled: mayBeUnsampled), that the rows carry the
// model's footnote, and that the total covers the program's bytes (JFR
// weights do not invent bytes: the sum of a thread's weights is at most
// what it allocated, so the report's total is at most the program's plus
// what the JVM allocated besides).
func checkLabSites(t *testing.T, runs []*labRun) {
	for i, r := range runs {
		rows := rowsByKey(r.report)
		var truth float64
		for _, s := range r.truth.Sites {
			truth += s.Bytes
		}
		for _, f := range labSites {
			row, ok := rows[f]
			if !ok {
				if !mayBeUnsampled[f] {
					t.Errorf("run %d (%s): no row for %s", i, r.settings, f)
				}
				continue
			}
			// Allocations outside TLABs are recorded exactly.
			if row.Method != "gamma" && (r.settings != "tlab" || row.Method != "exact") || !(row.Lo <= row.Estimate && row.Estimate <= row.Hi) {
				t.Errorf("run %d: %s: %+v", i, f, row)
			}
		}
		if r.report.Sources[0].Format != "jfr" || r.report.Total.Estimate > 2*truth {
			t.Errorf("run %d: source %+v, total %.0f for %.0f allocated by the sites", i, r.report.Sources[0], r.report.Total.Estimate, truth)
		}
	}
}

// labCoverage reports, per site and over all sites, how often the interval
// contains the truth and how far the estimate is from it (the median and
// the 10% and 90% quantiles of estimate/truth). It asserts nothing about
// the level: the study's numbers are in docs/jfr.md; with
// HEAPEST_E2E_JFR_OUT=FILE it writes every (run, site) pair as CSV.
func labCoverage(t *testing.T, runs []*labRun) {
	type siteStats struct {
		cov    coverage
		ratios []float64
	}
	by := map[string]*siteStats{}
	var csv strings.Builder
	csv.WriteString("run,settings,site,truth,estimate,lo,hi,samples\n")
	for i, r := range runs {
		truth := map[string]float64{}
		for _, s := range r.truth.Sites {
			truth[s.Func] += s.Bytes
		}
		rows := rowsByKey(r.report)
		for _, f := range labSites {
			row := rows[f]
			for _, key := range []string{f, "all"} {
				s := by[key]
				if s == nil {
					s = &siteStats{}
					by[key] = s
				}
				s.cov.n++
				if row.Lo <= truth[f] && truth[f] <= row.Hi {
					s.cov.hit++
				}
				s.ratios = append(s.ratios, row.Estimate/truth[f])
			}
			fmt.Fprintf(&csv, "%d,%s,%s,%.0f,%.0f,%.0f,%.0f,%.0f\n", i, r.settings, f, truth[f], row.Estimate, row.Lo, row.Hi, row.Samples)
		}
	}
	for _, key := range append(labSites, "all") {
		s := by[key]
		sort.Float64s(s.ratios)
		q := func(p float64) float64 { return s.ratios[int(math.Round(p*float64(len(s.ratios)-1)))] }
		t.Logf("%-11s coverage %3d/%3d = %5.1f%%   estimate/truth: median %.2f, 10%% %.2f, 90%% %.2f",
			key, s.cov.hit, s.cov.n, 100*float64(s.cov.hit)/float64(s.cov.n), q(0.5), q(0.1), q(0.9))
	}
	if out := os.Getenv("HEAPEST_E2E_JFR_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
