// Package e2e holds end-to-end tests: they build the heapest binary once per
// test run and check its output against real data and external reference
// tools (jeprof, go tool pprof).
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/formats"
)

// buildDir holds the heapest binary for the whole test run; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "heapest-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// buildC compiles the C program src (a path in the repository) into dir as
// SPEC §8 describes (debug information, frame pointers, no inlining),
// linked with libs, and returns the program's path: dir/src's base name.
func buildC(t *testing.T, gcc, dir, src string, libs ...string) string {
	t.Helper()
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	args := []string{"-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", bin, filepath.Join(repoRoot(t), src)}
	run(t, nil, gcc, append(args, libs...)...)
	return bin
}

// heapestBinary builds cmd/heapest once per test run and returns its path.
func heapestBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		out := filepath.Join(buildDir, "heapest")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/heapest")
		cmd.Dir = repoRoot(t)
		// Built as go test builds (README.md builds it static, which
		// starts 4 ms sooner): a static build shares no compiled package
		// that imports net with the tests', and costs a cold CI cache
		// 26 s more than those 4 ms save over the runs the tests make.
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/heapest: %v\n%s", err, msg)
			return
		}
		buildPath = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// repoRoot is the module root: the directory above this test's package.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Dir(filepath.Dir(file))
}

// samplesDir is ../shared/samples beside the repository.
func samplesDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "..", "shared", "samples")
}

// inCI reports whether missing external tools must fail the test rather than
// skip it.
func inCI() bool { return os.Getenv("CI") == "true" }

// needTool returns the path of an external program, or skips the test (fails
// it under CI=true) when it is missing.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not found in PATH (scripts/install-deps.sh installs it)", name)
	}
	return p
}

// needFile skips (fails under CI=true) when a file the test reads is absent.
func needFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, "%v", err)
	}
}

// missing skips with a reason, or fails under CI=true.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true and a prerequisite is missing: "+format, args...)
	}
	t.Skipf("skipping: "+format, args...)
}

// run executes a program and returns its stdout; a failure reports stderr.
func run(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	out, errOut, err := runErr(env, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, errOut)
	}
	return out
}

// runErr executes a program with extra environment variables and returns
// stdout, stderr and the error, for callers that run in goroutines.
func runErr(env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	return runErrDir("", env, name, args...)
}

// runErrDir is runErr in directory dir ("": the current one).
func runErrDir(dir string, env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// Report is the JSON rendering of `heapest report --format json` (SPEC §6).
type Report struct {
	Confidence float64  `json:"confidence"`
	Value      string   `json:"value"`
	Unit       string   `json:"unit"`
	By         string   `json:"by"`
	Sources    []Source `json:"sources"`
	Total      Row      `json:"total"`
	Rows       []Row    `json:"rows"`
}

// Source is one input file of a report.
type Source struct {
	Path    string  `json:"path"`
	Format  string  `json:"format"`
	Rate    float64 `json:"rate"`
	Samples float64 `json:"samples"`
	Detail  string  `json:"detail"`
}

// Row is one group of a report, or its total.
type Row struct {
	Key      string   `json:"key"`
	Stack    []string `json:"stack"`
	Estimate float64  `json:"estimate"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
	Samples  float64  `json:"samples"`
	Method   string   `json:"method"`
	// Cum is a --by func row's cum.
	Cum *Row `json:"cum"`
}

// parseReport decodes heapest's JSON output.
func parseReport(t *testing.T, out []byte) Report {
	t.Helper()
	var r Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("heapest JSON output: %v\n%s", err, out)
	}
	return r
}

// rowsByKey indexes a report's rows by key.
func rowsByKey(r Report) map[string]Row {
	m := make(map[string]Row, len(r.Rows))
	for _, row := range r.Rows {
		m[row.Key] = row
	}
	return m
}

// heapestReport runs `heapest report --by func` with JSON output.
func heapestReport(heapest, dump, value string, dst *Report) error {
	return heapestReportBy(heapest, dump, value, "func", dst)
}

// heapestReportBy runs `heapest report --by BY` with JSON output.
func heapestReportBy(heapest, dump, value, by string, dst *Report) error {
	out, errOut, err := runErr(nil, heapest, "report", "--by", by, "--format", "json",
		"--top", "0", "--value", value, dump)
	if err != nil {
		return fmt.Errorf("heapest report --value %s %s: %v\n%s", value, dump, err, errOut)
	}
	if err := json.Unmarshal(out, dst); err != nil {
		return fmt.Errorf("heapest JSON output: %v\n%s", err, out)
	}
	return nil
}

// coverage counts how often an interval contains the truth.
type coverage struct{ hit, n int }

func (c *coverage) add(lo, truth, hi float64) {
	c.n++
	if lo <= truth && truth <= hi {
		c.hit++
	}
}

func (c coverage) rate() float64 { return float64(c.hit) / float64(c.n) }

// checkSiteCoverage logs the per-call-site coverage of inuse_space intervals
// and requires at least 200 (call site, run) pairs covered 93% of the time.
func checkSiteCoverage(t *testing.T, what string, perSite map[string]*coverage, all coverage) {
	t.Helper()
	names := make([]string, 0, len(perSite))
	for fn := range perSite {
		names = append(names, fn)
	}
	sort.Strings(names)
	for _, fn := range names {
		c := perSite[fn]
		t.Logf("inuse_space coverage %-18s %d/%d = %.1f%%", fn, c.hit, c.n, 100*c.rate())
	}
	t.Logf("%s inuse_space: 95%% interval contains the true live bytes in %d of %d (call site, run) pairs = %.1f%%",
		what, all.hit, all.n, 100*all.rate())
	if all.n < 200 {
		t.Errorf("only %d pairs, want at least 200", all.n)
	}
	if all.rate() < 0.93 {
		t.Errorf("coverage %.1f%% < 93%%", 100*all.rate())
	}
}

// readRecords parses file and returns its profile and every record the
// parser streamed (copies: a parser reuses its records).
func readRecords(file string) (*parse.Profile, []parse.Record, error) {
	var recs []parse.Record
	p, err := formats.ReadFile(file, parse.Options{}, parse.SinkFunc(func(r *parse.Record) {
		c := *r
		c.Stack = append([]parse.Frame(nil), r.Stack...)
		recs = append(recs, c)
	}))
	return p, recs, err
}
