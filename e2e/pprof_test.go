package e2e

// Real Go heap profiles with a known truth (testdata/realdata/go): raw sample
// counts recovered exactly, estimates equal to go tool pprof's, intervals
// that cover the true live bytes. Shares heapestReport and coverage with
// jemalloc_test.go.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/heapest/heapest/parse"
)

// goTruth is what testdata/realdata/go prints.
type goTruth struct {
	Rate  int `json:"rate"`
	Sites []struct {
		Func         string  `json:"func"`
		LiveObjects  float64 `json:"live_objects"`
		LiveBytes    float64 `json:"live_bytes"`
		AllocObjects float64 `json:"alloc_objects"`
		AllocBytes   float64 `json:"alloc_bytes"`
	} `json:"sites"`
	Records []struct {
		Funcs        []string `json:"funcs"`
		AllocObjects int64    `json:"alloc_objects"`
		AllocBytes   int64    `json:"alloc_bytes"`
		InUseObjects int64    `json:"inuse_objects"`
		InUseBytes   int64    `json:"inuse_bytes"`
	} `json:"records"`
}

// goRun is one execution of the Go test program.
type goRun struct {
	rate   int
	seed   int
	debug  int  // 0: proto, 1: legacy text
	pprof  bool // compare with go tool pprof
	file   string
	truth  goTruth
	space  Report
	pprofs map[string]float64
	// reportErr is heapest's failure, kept apart so that the parser-level
	// checks still run and report.
	reportErr error
}

func (r *goRun) name() string {
	return fmt.Sprintf("rate=%d seed=%d debug=%d", r.rate, r.seed, r.debug)
}

// goRates spans runtime.MemProfileRate from 4 KiB to 512 KiB.
var goRates = []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10}

// buildGoProg builds testdata/realdata/go into dir.
func buildGoProg(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "go-heap")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/realdata/go")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/realdata/go: %v\n%s", err, out)
	}
	return bin
}

func TestGoRealHeapProfiles(t *testing.T) {
	goTool := needTool(t, "go")
	dir := t.TempDir()
	prog := buildGoProg(t, dir)
	heapest := heapestBinary(t)
	// 8 rates × 25 runs × 5 call sites = 1000 pairs (240 with -short):
	// at the measured ~95.5% the 93% floor is then > 3 standard errors
	// away, so the runtime's unseeded sampling cannot make CI flaky.
	perRate := 25
	if testing.Short() {
		perRate = 6
	}
	var runs []*goRun
	for _, rate := range goRates {
		for seed := 1; seed <= perRate; seed++ {
			r := &goRun{rate: rate, seed: seed, pprof: seed == 1}
			if seed == 2 {
				r.debug = 1
			}
			r.file = filepath.Join(dir, fmt.Sprintf("heap-%d-%d.out", rate, seed))
			runs = append(runs, r)
		}
	}
	errs := pprofParallel(runs, func(r *goRun) error { return execGoRun(r, prog, heapest, goTool) })
	for i, r := range runs {
		if errs[i] != nil {
			t.Fatalf("%s: %v", r.name(), errs[i])
		}
	}
	checkGoRawCounts(t, runs)
	for _, r := range runs {
		if r.reportErr != nil {
			t.Fatalf("%s: %v", r.name(), r.reportErr)
		}
	}
	checkGoAgainstPprof(t, runs)
	checkGoCoverage(t, runs)
}

// pprofParallel runs f over items on all CPUs and returns each item's error.
func pprofParallel[T any](items []T, f func(T) error) []error {
	errs := make([]error, len(items))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for i := 0; i < runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				errs[k] = f(items[k])
			}
		}()
	}
	for k := range items {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	return errs
}

func execGoRun(r *goRun, prog, heapest, goTool string) error {
	out, errOut, err := runErr(nil, prog, "-rate", strconv.Itoa(r.rate), "-seed", strconv.Itoa(r.seed),
		"-debug", strconv.Itoa(r.debug), "-o", r.file)
	if err != nil {
		return fmt.Errorf("go-heap: %v\n%s", err, errOut)
	}
	if err := json.Unmarshal(out, &r.truth); err != nil {
		return fmt.Errorf("go-heap output: %v", err)
	}
	r.reportErr = heapestReport(heapest, r.file, "inuse_space", &r.space)
	if r.pprof {
		r.pprofs, err = pprofFlat(goTool, r.file, "inuse_space")
	}
	return err
}

// pprofTopLine is a row of `go tool pprof -top -unit=byte`.
var pprofTopLine = regexp.MustCompile(`^\s*(-?\d+)\S*\s+[-\d.]+%\s+[-\d.]+%\s+(-?\d+)\S*\s+[-\d.]+%\s+(.+?)\s*$`)

// pprofFlat returns go tool pprof's flat value per function, exact to the
// unit (-unit=byte), with no node dropped.
func pprofFlat(goTool, file, index string) (map[string]float64, error) {
	out, errOut, err := runErr(nil, goTool, "tool", "pprof", "-top", "-unit=byte", "-nodecount=1000000",
		"-nodefraction=0", "-sample_index="+index, file)
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %s: %v\n%s", file, err, errOut)
	}
	flat := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		m := pprofTopLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		name := strings.TrimSuffix(m[3], " (inline)")
		flat[name] += v
	}
	return flat, nil
}

// checkGoRawCounts: the raw sample counts heapest recovers from the profile
// equal the runtime's own (runtime.MemProfile), per (stack, size) and in
// total, for the proto and the legacy text alike.
func checkGoRawCounts(t *testing.T, runs []*goRun) {
	var checked, rawTotal int64
	for _, r := range runs {
		_, recs, err := readRecords(r.file)
		if err != nil {
			t.Fatalf("%s: %v", r.name(), err)
		}
		got := map[string][2]float64{}
		for _, rec := range recs {
			size := rec.Alloc.Size
			if rec.Alloc.Samples == 0 {
				continue
			}
			if rec.Alloc.Approx || rec.InUse.Approx {
				t.Errorf("%s: a sample did not invert exactly: %+v", r.name(), rec.Alloc)
			}
			k := goKey(frameFuncs(rec.Stack), size)
			if size == 0 {
				t.Errorf("%s: %s: no allocation size", r.name(), k)
			}
			g := got[k]
			got[k] = [2]float64{g[0] + rec.Alloc.Samples, g[1] + rec.InUse.Samples}
		}
		want := map[string][2]float64{}
		for _, rec := range r.truth.Records {
			if rec.AllocObjects == 0 {
				continue
			}
			k := goKey(rec.Funcs, float64(rec.AllocBytes/rec.AllocObjects))
			w := want[k]
			want[k] = [2]float64{w[0] + float64(rec.AllocObjects), w[1] + float64(rec.InUseObjects)}
			rawTotal += rec.AllocObjects
		}
		// The program's own allocations are compared exactly. Others (the
		// runtime's, the profile writer's) can be sampled between the
		// heap profile's write and the runtime.MemProfile snapshot that
		// follows it: seen once, a sync.Map node of the writer's.
		for _, m := range []map[string][2]float64{want, got} {
			for k := range m {
				if !strings.HasPrefix(k, "main.") {
					delete(m, k)
				}
			}
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s: recovered raw (alloc, inuse) samples %v, runtime.MemProfile says %v", r.name(), k, got[k], w)
			}
			checked++
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d (stack, size) groups recovered, runtime.MemProfile has %d", r.name(), len(got), len(want))
		}
	}
	t.Logf("raw counts: %d (site, size) groups of the program's own over %d runs equal runtime.MemProfile's (%d raw alloc samples)",
		checked, len(runs), rawTotal)
}

// frameFuncs lists a stack's function names, leaf first.
func frameFuncs(st []parse.Frame) []string {
	var f []string
	for _, fr := range st {
		f = append(f, fr.Func)
	}
	return f
}

// goKey names a (call site, size) group: the first function that is not the
// runtime's. Whole stacks are not compared because the writers differ in
// which runtime frames they hide (debug=1 text drops runtime.goexit).
func goKey(funcs []string, size float64) string {
	site := "?"
	for _, f := range funcs {
		if !strings.HasPrefix(f, "runtime.") && !strings.HasPrefix(f, "internal/runtime/") {
			site = f
			break
		}
	}
	return fmt.Sprintf("%s size=%g", site, size)
}

// checkGoAgainstPprof: heapest's per-function estimates equal go tool
// pprof's flat inuse_space within 0.5%.
func checkGoAgainstPprof(t *testing.T, runs []*goRun) {
	n, worst := 0, 0.0
	for _, r := range runs {
		if !r.pprof {
			continue
		}
		rows := rowsByKey(r.space)
		for fn, want := range r.pprofs {
			if want == 0 {
				continue
			}
			got := rows[fn].Estimate
			rel := math.Abs(got-want) / want
			worst = math.Max(worst, rel)
			n++
			if rel > 0.005 {
				t.Errorf("%s: %s: heapest %.0f, go tool pprof %.0f (%.2f%% apart)", r.name(), fn, got, want, 100*rel)
			}
		}
	}
	t.Logf("go tool pprof: %d function rows compared, largest relative difference %.4f%%", n, 100*worst)
	if n == 0 {
		t.Error("no function compared with go tool pprof")
	}
}

// checkGoCoverage: the 95% intervals of the call sites with live data
// contain the true live bytes in at least 93% of (call site, run) pairs.
func checkGoCoverage(t *testing.T, runs []*goRun) {
	var all coverage
	perSite := map[string]*coverage{}
	for _, r := range runs {
		rows := rowsByKey(r.space)
		for _, s := range r.truth.Sites {
			if s.LiveBytes == 0 {
				continue
			}
			row := rows[s.Func]
			all.add(row.Lo, s.LiveBytes, row.Hi)
			if perSite[s.Func] == nil {
				perSite[s.Func] = &coverage{}
			}
			perSite[s.Func].add(row.Lo, s.LiveBytes, row.Hi)
		}
	}
	checkSiteCoverage(t, "Go", perSite, all)
}

// TestPprofBadInputExitStatus: broken pprof-family inputs make heapest exit
// with status 2 and an error naming the file, never a panic.
func TestPprofBadInputExitStatus(t *testing.T) {
	heapest := heapestBinary(t)
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(samplesDir(t), "pprof", "parca_alloc_objects.pb.gz"))
	if err != nil {
		missing(t, "%v", err)
	}
	inputs := map[string][]byte{
		"truncated.pb.gz": good[:len(good)/3],
		"garbage.pb":      append([]byte{0x0a, 0xff, 0xff, 0x7f}, bytes.Repeat([]byte{0x12, 0x81}, 64)...),
		"legacy.heap":     []byte("heap profile: 1: 2 [1: 2] @ heap_v2/4096\n1: 2 [1: 2] @ 0xnothex\n"),
	}
	for name, data := range inputs {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, err := runErr(nil, heapest, "report", path)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !bytes.Contains(errOut, []byte(path)) || bytes.Contains(errOut, []byte("panic")) {
			t.Errorf("%s: exit %v, stderr %q; want status 2 and an error naming the file", name, err, errOut)
		}
	}
}

// TestPprofOutputRoundTripCLI: `report --format pprof -o out.pb.gz` then
// `report out.pb.gz` gives the same rows and intervals as the original, and
// go tool pprof opens the file with the estimate as its default type.
func TestPprofOutputRoundTripCLI(t *testing.T) {
	heapest := heapestBinary(t)
	goTool := needTool(t, "go")
	in := filepath.Join(samplesDir(t), "pprof", "parca_alloc_objects.pb.gz")
	needFile(t, in)
	out := filepath.Join(t.TempDir(), "out.pb.gz")
	if _, errOut, err := runErr(nil, heapest, "report", "--format", "pprof", "-o", out, in); err != nil {
		if bytes.Contains(errOut, []byte("needs per-stack statistics")) {
			t.Fatalf("report --format pprof must write per-stack reports of every value (report.Builder.PerStack, "+
				"render.WritePprof): %s", errOut)
		}
		t.Fatalf("heapest report --format pprof: %v\n%s", err, errOut)
	}
	for _, value := range []string{"inuse_space", "alloc_space", "alloc_objects"} {
		var a, b Report
		if err := heapestReport(heapest, in, value, &a); err != nil {
			t.Fatal(err)
		}
		if err := heapestReport(heapest, out, value, &b); err != nil {
			t.Fatal(err)
		}
		if len(a.Rows) != len(b.Rows) || !sameRowNums(a.Total, b.Total) {
			t.Fatalf("%s: %d rows (total %+v), read back %d (total %+v)", value, len(a.Rows), a.Total, len(b.Rows), b.Total)
		}
		rb := rowsByKey(b)
		for _, r := range a.Rows {
			if !sameRowNums(r, rb[r.Key]) {
				t.Errorf("%s: %s: %+v, read back %+v", value, r.Key, r, rb[r.Key])
			}
		}
	}
	// The input is a Go allocs profile (default_sample_type alloc_space):
	// heapest's report and its pprof output show what go tool pprof shows
	// of the input itself.
	want := run(t, nil, goTool, "tool", "pprof", "-top", in)
	top := run(t, nil, goTool, "tool", "pprof", "-top", out)
	typeLine := func(b []byte) string {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Type: ") {
				return l
			}
		}
		return ""
	}
	if w, g := typeLine(want), typeLine(top); w == "" || g != w {
		t.Errorf("go tool pprof -top shows %q of heapest's output, %q of its input:\n%s", g, w, top)
	}
}

// sameRowNums compares two rows' numbers to 1e-9 relative (sums taken in
// another order may differ in the last bits).
func sameRowNums(a, b Row) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)) }
	return a.Method == b.Method && near(a.Estimate, b.Estimate) && near(a.Lo, b.Lo) && near(a.Hi, b.Hi) && near(a.Samples, b.Samples)
}
