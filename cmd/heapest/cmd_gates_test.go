package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

const mixedDump = "../../testdata/jemalloc/mixed_symbolized.heap"

// TestCIJUnitStructure parses ci's JUnit output as a CI system does and
// checks the structure those systems need: testsuites > testsuite >
// testcase, counts that match, a failure element on the failed gate and
// none on the others.
func TestCIJUnitStructure(t *testing.T) {
	out, errOut, code := runCLI(t, "ci", "--format", "junit",
		"--budget", "total<=60MiB", "--budget", "func=^alloc_b$<=30MiB", "--budget", "total<=1GiB", mixedDump)
	if code != exitGateFailed {
		t.Fatalf("exit %d, want %d: %s", code, exitGateFailed, errOut)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Classname string `xml:"classname,attr"`
				Name      string `xml:"name,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, out)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests != 3 || len(s.Cases) != 3 || doc.Tests != 3 || s.Failures != 1 || doc.Failures != 1 {
		t.Errorf("tests %d/%d (%d cases), failures %d/%d; want 3 and 1", s.Tests, doc.Tests, len(s.Cases), s.Failures, doc.Failures)
	}
	for _, c := range s.Cases {
		failed := c.Name == "func=^alloc_b$<=30MiB"
		if (c.Failure != nil) != failed {
			t.Errorf("testcase %q: failure %v, want %v", c.Name, c.Failure != nil, failed)
		}
		if c.Classname != "heapest.budget" {
			t.Errorf("testcase %q: classname %q", c.Name, c.Classname)
		}
		if failed && !strings.Contains(c.Failure.Message, "30.0MiB") {
			t.Errorf("failure message %q does not give the limit", c.Failure.Message)
		}
	}
}

// TestDiffPprofIsADiff reads the pprof diff back with google/pprof: NEW's
// samples are positive and add up to NEW's total, BASE's are negative,
// tagged pprof::base, and add up to minus BASE's total.
func TestDiffPprofIsADiff(t *testing.T) {
	base, new := "testdata/je530_threads_foreign.heap", "testdata/je530_mixed_foreign.heap"
	out := filepath.Join(t.TempDir(), "diff.pb.gz")
	if _, errOut, code := runCLI(t, "diff", "--format", "pprof", "-o", out, base, new); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var pos, neg float64
	for _, s := range p.Sample {
		isBase := len(s.Label["pprof::base"]) == 1 && s.Label["pprof::base"][0] == "true"
		switch v := float64(s.Value[0]); {
		case isBase && v <= 0:
			neg += v
		case !isBase && v >= 0:
			pos += v
		default:
			t.Errorf("sample %v with base tag %v", v, isBase)
		}
	}
	totals := map[string]float64{}
	for _, in := range []string{base, new} {
		out, errOut, code := runCLI(t, "report", "--format", "json", "--by", "stack", in)
		if code != 0 {
			t.Fatalf("report %s: exit %d: %s", in, code, errOut)
		}
		totals[in] = reportRowsN(t, out, 0)["total"].Estimate
	}
	// Each stack's estimate is truncated to whole bytes.
	if d := pos - totals[new]; d > 0 || d < -float64(len(p.Sample)) {
		t.Errorf("NEW's samples sum to %v, its total is %v", pos, totals[new])
	}
	if d := -neg - totals[base]; d > 0 || d < -float64(len(p.Sample)) {
		t.Errorf("BASE's samples sum to %v, its total is %v", neg, totals[base])
	}
}

// TestCISideOutputs checks that --junit and --markdown write what
// --format junit and --format markdown print, in the same run as the
// table on standard output, with the same exit status.
func TestCISideOutputs(t *testing.T) {
	dir := t.TempDir()
	junit, md := filepath.Join(dir, "gates.xml"), filepath.Join(dir, "gates.md")
	gates := []string{"--budget", "total<=60MiB", "--budget", "func=^alloc_b$<=30MiB", mixedDump}
	table, _, code := runCLI(t, append([]string{"ci", "--junit", junit, "--markdown", md}, gates...)...)
	if code != exitGateFailed {
		t.Fatalf("exit %d, want %d", code, exitGateFailed)
	}
	wantTable, _, _ := runCLI(t, append([]string{"ci"}, gates...)...)
	if table != wantTable {
		t.Errorf("standard output with side files:\n%s\nwithout:\n%s", table, wantTable)
	}
	for path, format := range map[string]string{junit: "junit", md: "markdown"} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := runCLI(t, append([]string{"ci", "--format", format}, gates...)...)
		if string(got) != want {
			t.Errorf("--%s file:\n%s\n--format %s:\n%s", format, got, format, want)
		}
	}
}

// TestCISideOutputsOnError: a run with gates that fails before its
// verdicts (exit status 2) replaces the --junit and --markdown files of
// an earlier run with its error, which a CI system then shows; a path
// that cannot be written is left alone, and so is a report without
// gates, whose --junit is the error itself.
func TestCISideOutputsOnError(t *testing.T) {
	missing := filepath.Join("testdata", "no-such.heap")
	for _, c := range []struct {
		name      string
		args      []string
		junit, md string // the files' contents after the run
	}{{
		name: "unreadable input",
		args: []string{"--budget", "total<=1MiB", missing},
		junit: `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="heapest ci" tests="1" failures="0" errors="1">
  <testsuite name="heapest ci" tests="1" failures="0" errors="1" skipped="0">
    <properties></properties>
    <testcase classname="heapest.error" name="heapest ci">
      <error message="open testdata/no-such.heap: no such file or directory" type="error"></error>
    </testcase>
  </testsuite>
</testsuites>
`,
		md: "### ❌ heapest ci — error: no gate was judged\n\n    open testdata/no-such.heap: no such file or directory\n",
	}, {
		name:  "no gates: --junit refused, the files kept",
		args:  []string{mixedDump},
		junit: "stale\n",
		md:    "stale\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			junit, md := filepath.Join(dir, "gates.xml"), filepath.Join(dir, "gates.md")
			for _, p := range []string{junit, md} {
				if err := os.WriteFile(p, []byte("stale\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, errOut, code := runCLI(t, append([]string{"ci", "--junit", junit, "--markdown", md}, c.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want an error's: %s", code, errOut)
			}
			for path, want := range map[string]string{junit: c.junit, md: c.md} {
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != want {
					t.Errorf("%s:\n%s\nwant:\n%s", filepath.Base(path), got, want)
				}
			}
		})
	}
}
