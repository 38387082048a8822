package e2e

// docs/ci.md's recipe, run as written: the shell lines between its
// <!-- recipe --> markers are the lines its GitHub Actions and GitLab CI
// jobs run (checked here), and they run here on a copy of docs/ci-example
// with the heapest this test run built. The example passes its gates as it
// is and fails them when built with the doc's "try it" tag. The doc's
// "$ heapest" transcripts are run on the example's committed profiles and
// must print what the doc shows.

import (
	"bytes"
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ciDoc is the guide whose recipe this file runs.
const ciDoc = "docs/ci.md"

func TestCIRecipe(t *testing.T) {
	needTool(t, "go")
	heapest := heapestBinary(t)
	doc := readCIDoc(t)

	recipe := shellLines(t, markedSection(t, doc, "recipe"))
	refresh := shellLines(t, markedSection(t, doc, "refresh-baseline"))
	if len(recipe) < 2 {
		t.Fatalf("%s: recipe has %d lines, want the profile and the gate: %q", ciDoc, len(recipe), recipe)
	}
	// The CI jobs must run the recipe's very lines, in order and together.
	gh := yamlRunLines(markedSection(t, doc, "github-actions"))
	if !containsRun(gh, recipe) {
		t.Errorf("%s: the GitHub Actions run: lines do not contain the recipe\nrun lines: %q\nrecipe: %q", ciDoc, gh, recipe)
	}
	gl := yamlScriptLines(markedSection(t, doc, "gitlab-ci"))
	if !containsRun(gl, recipe) {
		t.Errorf("%s: the GitLab CI script: lines do not contain the recipe\nscript lines: %q\nrecipe: %q", ciDoc, gl, recipe)
	}
	tryTag := regexp.MustCompile("GOFLAGS=-tags=bloat").FindString(doc)
	if tryTag == "" {
		t.Fatalf("%s: the try-it section does not mention GOFLAGS=-tags=bloat", ciDoc)
	}

	// "main": the example as it is, its baseline refreshed the way the doc
	// says, so the committed baseline's Go version does not matter here.
	main := copyExample(t)
	env := recipeEnv(heapest, "")
	if _, code := runLines(t, main, env, refresh); code != 0 {
		t.Fatalf("refreshing the baseline: exit %d", code)
	}
	baseline, err := os.ReadFile(filepath.Join(main, "memory-baseline.pprof"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("pass", func(t *testing.T) {
		dir := copyExample(t)
		writeFile(t, filepath.Join(dir, "memory-baseline.pprof"), baseline)
		out, code := runLines(t, dir, env, recipe)
		if code != 0 {
			t.Fatalf("the recipe on the example as it is: exit %d, want 0\n%s", code, out)
		}
		checkJUnit(t, filepath.Join(dir, "heapest.xml"), false)
		checkSummary(t, filepath.Join(dir, "heapest.md"))
	})

	t.Run("bloat", func(t *testing.T) {
		dir := copyExample(t)
		writeFile(t, filepath.Join(dir, "memory-baseline.pprof"), baseline)
		out, code := runLines(t, dir, recipeEnv(heapest, "-tags=bloat"), recipe)
		if code != 1 {
			t.Fatalf("the recipe with %s: exit %d, want 1 (a gate failed)\n%s", tryTag, code, out)
		}
		checkJUnit(t, filepath.Join(dir, "heapest.xml"), true)
		checkSummary(t, filepath.Join(dir, "heapest.md"))
	})

	t.Run("transcripts", func(t *testing.T) {
		runTranscripts(t, doc, heapest)
	})
}

func readCIDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ciDoc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markedSection is the text between <!-- name --> and <!-- /name -->.
func markedSection(t *testing.T, doc, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- "+name+" -->")
	if !ok {
		t.Fatalf("%s: no <!-- %s --> marker", ciDoc, name)
	}
	sec, _, ok := strings.Cut(rest, "<!-- /"+name+" -->")
	if !ok {
		t.Fatalf("%s: no <!-- /%s --> marker", ciDoc, name)
	}
	return sec
}

// shellLines are the non-blank, non-comment lines of the ```sh blocks of a
// section.
func shellLines(t *testing.T, sec string) []string {
	t.Helper()
	var lines []string
	for _, block := range fencedBlocks(sec, "sh") {
		for _, l := range strings.Split(block, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s: no ```sh lines in the section", ciDoc)
	}
	return lines
}

// fencedBlocks returns the bodies of the ```lang blocks of text.
func fencedBlocks(text, lang string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(text, "```"+lang+"\n")
		if !ok {
			return blocks
		}
		body, after, _ := strings.Cut(rest, "```")
		blocks = append(blocks, body)
		text = after
	}
}

// indentOf counts a line's leading spaces.
func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// yamlRunLines are the command lines of the run: keys of a GitHub Actions
// workflow: a one-line run: value, or the lines of a run: | block. Only as
// much YAML as a workflow's steps use; there is no YAML parser in the module.
func yamlRunLines(sec string) []string {
	var out []string
	lines := strings.Split(strings.Join(fencedBlocks(sec, "yaml"), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		key := strings.TrimPrefix(strings.TrimSpace(l), "- ")
		v, ok := strings.CutPrefix(key, "run:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if v != "|" {
			out = append(out, v)
			continue
		}
		ind := indentOf(l)
		for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indentOf(lines[i+1]) > ind) {
			i++
			if s := strings.TrimSpace(lines[i]); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// yamlScriptLines are the items of the script: lists of a GitLab CI file,
// each a plain scalar.
func yamlScriptLines(sec string) []string {
	var out []string
	lines := strings.Split(strings.Join(fencedBlocks(sec, "yaml"), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "script:" {
			continue
		}
		ind := indentOf(lines[i])
		for i+1 < len(lines) && indentOf(lines[i+1]) >= ind && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
			i++
			out = append(out, strings.TrimPrefix(strings.TrimSpace(lines[i]), "- "))
		}
	}
	return out
}

// containsRun reports whether want appears in lines as a contiguous run.
func containsRun(lines, want []string) bool {
	for i := 0; i+len(want) <= len(lines); i++ {
		match := true
		for j := range want {
			if lines[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// copyExample copies docs/ci-example to a temporary directory, as a
// repository's checkout would have it.
func copyExample(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "docs", "ci-example")
	dst := t.TempDir()
	ignored := readGitignore(src)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		// Outputs of someone trying the recipe in the source tree are not
		// part of the example.
		if strings.Contains(ignored, "\n"+rel+"\n") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// readGitignore returns the example's .gitignore (its lines are plain file
// names) with a newline either side.
func readGitignore(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	return "\n" + string(b) + "\n"
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recipeEnv puts the heapest under test first on PATH and sets GOFLAGS,
// the doc's way of building the regression without editing the recipe.
func recipeEnv(heapest, goflags string) []string {
	return []string{
		"PATH=" + filepath.Dir(heapest) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOFLAGS=" + goflags,
		// A go.work above the temporary directory must not capture the example.
		"GOWORK=off",
	}
}

// runLines runs each line with sh -c in dir, as a CI job runs its steps'
// lines, and stops at the first that fails. It returns the combined output
// and the exit status of the last line run; a line other than the last
// failing is an error, whatever its status.
func runLines(t *testing.T, dir string, env, lines []string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	for i, l := range lines {
		out.WriteString("$ " + l + "\n")
		cmd := exec.Command("sh", "-c", l)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%s: %v", l, err)
			}
			if i < len(lines)-1 {
				t.Fatalf("line %d of %d failed (exit %d), so the last never ran:\n%s", i+1, len(lines), ee.ExitCode(), out.String())
			}
			return out.String(), ee.ExitCode()
		}
	}
	return out.String(), 0
}

// junitSuites accepts both a <testsuites> root and a single <testsuite>.
type junitSuites struct {
	XMLName xml.Name
	Suites  []junitSuite `xml:"testsuite"`
	junitSuite
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
}

// checkJUnit parses the gate's JUnit file and checks that it has test cases
// and a <failure> exactly when a gate failed.
func checkJUnit(t *testing.T, path string, wantFailure bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root junitSuites
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	suites := root.Suites
	if root.XMLName.Local == "testsuite" {
		suites = []junitSuite{root.junitSuite}
	}
	cases, failures := 0, 0
	for _, s := range suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				failures++
			}
		}
	}
	if cases == 0 {
		t.Errorf("%s: no <testsuite> with a <testcase>\n%s", path, b)
	}
	if (failures > 0) != wantFailure {
		t.Errorf("%s: %d <failure> elements, want failures: %v\n%s", path, failures, wantFailure, b)
	}
}

// checkSummary checks that the markdown summary was written and is a table.
func checkSummary(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("|")) {
		t.Errorf("%s: no markdown table\n%s", path, b)
	}
}

// runTranscripts runs the doc's ```console blocks in a copy of the example:
// each "$ " line is a command, the other lines are what the commands print
// (standard output and standard error, as a terminal shows them). The
// commands of a block run in one shell, so "$ echo $?" shows an exit status.
func runTranscripts(t *testing.T, doc, heapest string) {
	blocks := fencedBlocks(doc, "console")
	if len(blocks) < 3 {
		t.Fatalf("%s: %d ```console transcripts, want at least 3", ciDoc, len(blocks))
	}
	env := recipeEnv(heapest, "")
	for _, block := range blocks {
		var script, want strings.Builder
		for _, l := range strings.SplitAfter(block, "\n") {
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				script.WriteString(c)
			} else {
				want.WriteString(l)
			}
		}
		dir := copyExample(t)
		cmd := exec.Command("sh", "-c", script.String())
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(out.String(), dir+"/", ""); got != want.String() {
			t.Errorf("%s: transcript\n%s\nprints:\n%s\nthe doc shows:\n%s", ciDoc, script.String(), got, want.String())
		}
	}
}
