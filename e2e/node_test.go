package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Node.js heap profiles of a real program (testdata/node/keep.js), read
// in both forms heapest takes: V8's .heapprofile JSON (node --heap-prof)
// and @datadog/pprof's pprof. The program's true bytes are not known
// exactly (V8 lays out objects its own way), so each form is checked
// against the mean of its own runs (the intervals must be as wide as the
// runs' spread), and the two forms' means against each other (one reader
// biased would part them).

// nodeRate is the interval both forms sample at: about 250 samples of
// siteA's 32 MB.
const nodeRate = 131072

// nodeRuns is the runs of each form; HEAPEST_E2E_NODE_RUNS for more.
func nodeRuns(t *testing.T) int {
	def := 30
	if testing.Short() {
		def = 10
	}
	return envInt(t, "HEAPEST_E2E_NODE_RUNS", def)
}

// nodeRow is one run's estimate of a row, with its interval.
type nodeRow struct{ est, lo, hi float64 }

// nodeStudy runs keep.js runs times, each through write (which returns
// the profile it wrote), and reads each with heapest: the rows of keys
// (and "total") per run, and the interval each source line gave.
func nodeStudy(t *testing.T, runs int, keys []string, write func(dir string) (string, error)) (map[string][]nodeRow, []float64) {
	heapest := heapestBinary(t)
	rows := map[string][]nodeRow{}
	rates := make([]float64, runs)
	per := make([]map[string]nodeRow, runs)
	err := parallel(runs, func(i int) error {
		dir := filepath.Join(t.TempDir(), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		prof, err := write(dir)
		if err != nil {
			return err
		}
		out, errOut, err := runErr(nil, heapest, "report", "--format", "json", "--top", "0", prof)
		if err != nil {
			return fmt.Errorf("heapest report %s: %v\n%s", prof, err, errOut)
		}
		var r Report
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("heapest report JSON: %v", err)
		}
		per[i] = map[string]nodeRow{"total": {r.Total.Estimate, r.Total.Lo, r.Total.Hi}}
		for _, row := range r.Rows {
			per[i][row.Key] = nodeRow{row.Estimate, row.Lo, row.Hi}
		}
		rates[i] = r.Sources[0].Rate
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range per {
		for _, k := range append(keys, "total") {
			rows[k] = append(rows[k], p[k])
		}
	}
	return rows, rates
}

// nodeCoverage checks that each run's 95% interval holds the runs' mean as
// often as a 95% interval should, and returns the mean and its standard
// error.
func nodeCoverage(t *testing.T, what, key string, rs []nodeRow) (mean, se float64) {
	t.Helper()
	for _, r := range rs {
		mean += r.est
	}
	mean /= float64(len(rs))
	var ss float64
	var c coverage
	for _, r := range rs {
		ss += (r.est - mean) * (r.est - mean)
		c.add(r.lo, mean, r.hi)
	}
	se = math.Sqrt(ss/float64(len(rs)-1)) / math.Sqrt(float64(len(rs)))
	t.Logf("%s %s: %d runs, mean %.0f bytes (± %.2f%%), each run's interval holds it in %d", what, key, len(rs), mean, 100*se/mean, c.hit)
	if least := binomLower(len(rs), 0.95, studyAlpha); c.hit < least {
		t.Errorf("%s %s: intervals held the runs' mean in %d of %d: fewer than %d, the least 95%% intervals give (p < %g)", what, key, c.hit, len(rs), least, studyAlpha)
	}
	return mean, se
}

// TestNodeHeapProfiles: both forms of a real Node.js program's heap
// profile, each run read with its interval found (the .heapprofile does
// not carry it), intervals as wide as the runs' spread, and the two
// forms agreeing.
func TestNodeHeapProfiles(t *testing.T) {
	node := needTool(t, "node")
	modules := filepath.Join(os.Getenv("HOME"), ".cache", "heapest", "node")
	if m := os.Getenv("HEAPEST_NODE_MODULES"); m != "" {
		modules = m
	}
	needFile(t, filepath.Join(modules, "node_modules", "@datadog", "pprof"))
	script := filepath.Join(repoRoot(t), "e2e", "testdata", "node", "keep.js")
	runs := nodeRuns(t)
	keys := []string{"siteA", "siteB"}
	rate := strconv.Itoa(nodeRate)

	heapprof, heapprofRates := nodeStudy(t, runs, keys, func(dir string) (string, error) {
		if _, errOut, err := runErrDir(dir, nil, node, "--expose-gc", "--heap-prof", "--heap-prof-interval="+rate, "--heap-prof-dir="+dir, script); err != nil {
			return "", fmt.Errorf("node --heap-prof: %v\n%s", err, errOut)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.heapprofile"))
		if len(files) != 1 {
			return "", fmt.Errorf("node --heap-prof wrote %d profiles", len(files))
		}
		return files[0], nil
	})
	pprof, _ := nodeStudy(t, runs, append(keys, "(external)"), func(dir string) (string, error) {
		out := filepath.Join(dir, "heap.pb.gz")
		env := []string{"NODE_PATH=" + filepath.Join(modules, "node_modules"), "INTERVAL=" + rate}
		if _, errOut, err := runErr(env, node, "--expose-gc", script, out); err != nil {
			return "", fmt.Errorf("node keep.js (@datadog/pprof): %v\n%s", err, errOut)
		}
		return out, nil
	})
	for i, r := range heapprofRates {
		if r != nodeRate {
			t.Errorf(".heapprofile run %d: interval %v found, %d given", i, r, nodeRate)
		}
	}
	for _, k := range append(keys, "total") {
		m1, se1 := nodeCoverage(t, ".heapprofile", k, heapprof[k])
		m2, se2 := nodeCoverage(t, "pprof", k, pprof[k])
		if k == "total" {
			// @datadog/pprof's "(external)" row, the external memory it
			// measured, is in its total only.
			for _, r := range pprof["(external)"] {
				m2 -= r.est / float64(len(pprof["(external)"]))
			}
		}
		t.Logf("%s: .heapprofile %.0f ± %.0f, pprof %.0f ± %.0f: %.1f standard errors apart", k, m1, se1, m2, se2, math.Abs(m1-m2)/math.Hypot(se1, se2))
		if d := math.Abs(m1 - m2); d > 4*math.Hypot(se1, se2) {
			t.Errorf("%s: the forms' means differ by %.0f bytes, %.1f standard errors", k, d, d/math.Hypot(se1, se2))
		}
		if k == "siteA" {
			// 4,000 arrays of 8,048 or 8,064 bytes (V8 allocates each with
			// its elements, and with or without a memento), and keepA's
			// own store.
			lo, hi := 4000*8048.0, 4000*8064.0+64<<10
			for _, m := range []struct {
				what     string
				mean, se float64
			}{{".heapprofile", m1, se1}, {"pprof", m2, se2}} {
				if m.mean < lo-4*m.se || m.mean > hi+4*m.se {
					t.Errorf("%s siteA: mean %.0f bytes (± %.0f), not near the %.0f to %.0f its arrays hold", m.what, m.mean, m.se, lo, hi)
				}
			}
		}
	}
}
