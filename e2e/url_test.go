package e2e

// URL inputs against a real server: a Go program serving net/http/pprof
// (testdata/pprofserver), read by heapest as pprof users read it.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startPprofServer builds and starts testdata/pprofserver and returns its
// base URL; the process is killed when the test ends.
func startPprofServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pprofserver")
	build := exec.Command("go", "build", "-o", bin, "./e2e/testdata/pprofserver")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build pprofserver: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("pprofserver printed no port: %v", err)
	}
	return "http://127.0.0.1:" + strings.TrimSpace(port)
}

func TestURLInputGoServer(t *testing.T) {
	needTool(t, "go")
	heapest := heapestBinary(t)
	base := startPprofServer(t)

	url := base + "/debug/pprof/heap?gc=1"
	out, errOut, err := runErr(nil, heapest, "report", "--format", "json", "--top", "0",
		"--confidence", "0.9999", url)
	if err != nil {
		t.Fatalf("heapest report %s: %v\n%s", url, err, errOut)
	}
	var r Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("heapest JSON output: %v\n%s", err, out)
	}
	if len(r.Sources) != 1 || r.Sources[0].Path != url || r.Sources[0].Rate != 64<<10 {
		t.Errorf("sources = %+v, want the URL itself, sampled at 64 KiB", r.Sources)
	}
	row, ok := rowsByKey(r)["main.holdBuffers"]
	if !ok {
		t.Fatalf("no main.holdBuffers row in the report of %s:\n%s", url, out)
	}
	// 16 MiB of buffers, plus kept's last backing array (4096 slice
	// headers, 96 KiB): the 99.99% interval holds it. This checks that a
	// URL reads as its file does; the coverage of intervals has tests of
	// its own. At 99.9% one CI run in a few thousand fails by chance
	// (one did: 303 samples where 248 are expected).
	const lo, hi = 16 << 20, 16<<20 + 128<<10
	if row.Lo > hi || row.Hi < lo {
		t.Errorf("main.holdBuffers: %v [%v, %v] misses the %v to %v bytes it holds", row.Estimate, row.Lo, row.Hi, lo, hi)
	}
	t.Logf("main.holdBuffers: %.0f bytes [%.0f, %.0f], %v samples", row.Estimate, row.Lo, row.Hi, row.Samples)
	checkAdviseURL(t, heapest, url)

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown profile: 404 with the server's words", []string{base + "/debug/pprof/nope"},
			[]string{"heapest: " + base + "/debug/pprof/nope: HTTP 404 Not Found", "Unknown profile"}},
		{"the index page is HTML", []string{base + "/debug/pprof/"},
			[]string{"heapest: " + base + "/debug/pprof/: ", "the server sent Content-Type text/html", "not a profile"}},
		{"a delta profile slower than --timeout", []string{"--timeout", "500ms", base + "/debug/pprof/heap?seconds=5"},
			[]string{"heapest: " + base + "/debug/pprof/heap?seconds=5: no complete answer within 500ms (--timeout raises it)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"report"}, tc.args...)
			_, errOut, err := runErr(nil, heapest, args...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("heapest %v: %v, want exit status 2\n%s", args, err, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(errOut), w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// checkAdviseURL runs heapest advise on the server's heap profile: 16 MiB
// of 4 KiB buffers need about 420 samples for ±10% in 95% of dumps, so
// a period near 40 KiB, and at the current 64 KiB two dumps.
func checkAdviseURL(t *testing.T, heapest, url string) {
	t.Helper()
	out, errOut, err := runErr(nil, heapest, "advise", "--format", "json", "--rows", "^main\\.holdBuffers$", url)
	if err != nil {
		t.Fatalf("heapest advise %s: %v\n%s", url, err, errOut)
	}
	var a struct {
		CurrentRate float64 `json:"current_rate"`
		Rate        float64 `json:"rate"`
		Dumps       int     `json:"dumps_at_current_rate"`
		Rows        []struct {
			Key string `json:"key"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("heapest advise JSON: %v\n%s", err, out)
	}
	if len(a.Rows) != 1 || a.Rows[0].Key != "main.holdBuffers" || a.CurrentRate != 64<<10 {
		t.Fatalf("advise rows %+v at %v, want main.holdBuffers at 64 KiB", a.Rows, a.CurrentRate)
	}
	if a.Rate < 25<<10 || a.Rate > 60<<10 || a.Dumps < 2 || a.Dumps > 3 {
		t.Errorf("advise: R = %.0f, %d dumps at 64 KiB; want about 40 KiB and 2", a.Rate, a.Dumps)
	}
	t.Logf("advise: R = %.0f B, %d dumps at the current 64 KiB", a.Rate, a.Dumps)
}
