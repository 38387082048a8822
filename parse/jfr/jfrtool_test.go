package jfr

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"

	"github.com/heapest/heapest/internal/testfile"
)

// jfrTool returns the JDK's jfr program, or skips the test (fails it under
// CI=true, where a JDK is installed) when there is none.
func jfrTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("jfr"); err == nil {
		return p
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "jfr")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true and the JDK's jfr tool is missing (neither in PATH nor in $JAVA_HOME/bin)")
	}
	t.Skip("skipping: the JDK's jfr tool is not installed (neither in PATH nor in $JAVA_HOME/bin); install a JDK (17 or later) to compare with it")
	return ""
}

// jfrEvent is what the comparison reads of `jfr print --json`.
type jfrEvent struct {
	Type   string `json:"type"`
	Values struct {
		Weight      int64    `json:"weight"`
		ObjectClass jfrClass `json:"objectClass"`
		Object      struct {
			Type jfrClass `json:"type"`
		} `json:"object"`
		ObjectSize int64 `json:"objectSize"`
		StackTrace *struct {
			Truncated bool `json:"truncated"`
			Frames    []struct {
				Method struct {
					Type jfrClass `json:"type"`
					Name string   `json:"name"`
				} `json:"method"`
			} `json:"frames"`
		} `json:"stackTrace"`
	} `json:"values"`
}

type jfrClass struct {
	Name string `json:"name"`
}

// toolName is the Java name of a class as the jfr tool's JSON gives it
// (the JVM's internal form), for comparing with heapest's names: written
// here independently of javaName.
func toolName(internal string) string {
	prims := map[byte]string{'Z': "boolean", 'B': "byte", 'C': "char", 'S': "short", 'I': "int", 'J': "long", 'F': "float", 'D': "double"}
	n := strings.Count(internal, "[")
	elem := strings.TrimLeft(internal, "[")
	if n > 0 {
		if p, ok := prims[elem[0]]; ok && len(elem) == 1 {
			elem = p
		} else {
			elem = strings.TrimSuffix(strings.TrimPrefix(elem, "L"), ";")
		}
	}
	if i := strings.Index(elem, "+0x"); i >= 0 {
		elem = elem[:i]
	}
	return strings.ReplaceAll(elem, "/", ".") + strings.Repeat("[]", n)
}

// toolSums are per-class and per-stack sums from one side of the
// comparison.
type toolSums struct {
	weightByClass, weightByStack map[string]int64
	samples                      int
	oldByClass                   map[string]int
	oldSize                      int64
}

func newToolSums() *toolSums {
	return &toolSums{weightByClass: map[string]int64{}, weightByStack: map[string]int64{}, oldByClass: map[string]int{}}
}

// TestAgainstJFRTool is issue 14's acceptance test: per class and per stack,
// the sums of jdk.ObjectAllocationSample weights heapest reads equal those
// of the JDK's own `jfr print --json`, exactly; and the old object samples
// are the same objects of the same classes.
func TestAgainstJFRTool(t *testing.T) {
	tool := jfrTool(t)
	files := []string{"testdata/jdk17-2chunks.jfr.gz", "testdata/jdk25.jfr.gz", "testdata/first-sample-jdk17.jfr.gz"}
	dir := filepath.Join("..", "..", "..", "shared", "samples", "jfr")
	if _, err := os.Stat(dir); err == nil {
		files = append(files, filepath.Join(dir, "cpool-uint64-constant-index.jfr.gz"), filepath.Join(dir, "uint64-ref-id.jfr.gz"))
		if !testing.Short() {
			// 10,694 events: jfr prints 410 MB of JSON for them.
			files = append(files, filepath.Join(dir, "object-allocation-sample.jfr.gz"))
		}
	} else {
		t.Logf("shared samples not found at %s: comparing the testdata recordings only", dir)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data := testfile.Gunzip(t, file)
			raw := filepath.Join(t.TempDir(), "r.jfr")
			if err := os.WriteFile(raw, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := toolSumsOf(t, tool, raw)
			got := heapestSums(t, data)
			if got.samples != want.samples || got.samples == 0 {
				t.Fatalf("heapest read %d ObjectAllocationSample events, jfr %d", got.samples, want.samples)
			}
			compareSums(t, "class", got.weightByClass, want.weightByClass)
			compareSums(t, "stack", got.weightByStack, want.weightByStack)
			if len(got.oldByClass) != len(want.oldByClass) || got.oldSize != want.oldSize {
				t.Errorf("old objects: heapest %v (size %d), jfr %v (size %d)", got.oldByClass, got.oldSize, want.oldByClass, want.oldSize)
			}
			for k, n := range want.oldByClass {
				if got.oldByClass[k] != n {
					t.Errorf("old objects of %s: heapest %d, jfr %d", k, got.oldByClass[k], n)
				}
			}
			t.Logf("%d samples, %d classes, %d stacks, %d old object classes: equal", got.samples, len(got.weightByClass), len(got.weightByStack), len(want.oldByClass))
		})
	}
}

func compareSums(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d %ss from heapest, %d from jfr", len(got), what, len(want))
	}
	bad := 0
	for k, w := range want {
		if got[k] != w {
			if bad++; bad <= 5 {
				t.Errorf("%s %q: heapest sums %d, jfr %d", what, k, got[k], w)
			}
		}
	}
}

// toolSumsOf runs `jfr print --json` on a recording and sums its events.
func toolSumsOf(t *testing.T, tool, file string) *toolSums {
	t.Helper()
	cmd := exec.Command(tool, "print", "--json", "--stack-depth", "4096",
		"--events", "jdk.ObjectAllocationSample,jdk.OldObjectSample", file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Recording struct {
			Events []jfrEvent `json:"events"`
		} `json:"recording"`
	}
	decErr := json.NewDecoder(out).Decode(&doc)
	if err := cmd.Wait(); err != nil || decErr != nil {
		t.Fatalf("jfr print --json %s: %v, %v\n%s", file, err, decErr, stderr.String())
	}
	s := newToolSums()
	for _, e := range doc.Recording.Events {
		switch e.Type {
		case "jdk.ObjectAllocationSample":
			s.samples++
			s.weightByClass[toolName(e.Values.ObjectClass.Name)] += e.Values.Weight
			var frames []string
			if st := e.Values.StackTrace; st != nil {
				for _, f := range st.Frames {
					frames = append(frames, toolName(f.Method.Type.Name)+"."+f.Method.Name)
				}
			}
			s.weightByStack[strings.Join(frames, " < ")] += e.Values.Weight
		case "jdk.OldObjectSample":
			s.oldByClass[toolName(e.Values.Object.Type.Name)]++
			s.oldSize += e.Values.ObjectSize
		}
	}
	return s
}

// heapestSums sums heapest's records the same way.
func heapestSums(t *testing.T, data []byte) *toolSums {
	t.Helper()
	recs, _, err := collect(t, "r.jfr", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newToolSums()
	for _, r := range recs {
		switch r.scheme {
		case parse.Weighted:
			s.samples++
			w := int64(r.alloc.Bytes)
			s.weightByClass[r.typ] += w
			s.weightByStack[strings.Join(r.stack, " < ")] += w
		case parse.Unknown:
			s.oldByClass[r.typ]++
			s.oldSize += int64(r.inUse.Bytes)
		}
	}
	return s
}
