package report

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/heapest/heapest/ci"
)

func TestRoutines(t *testing.T) {
	row := func(key string, flat float64) Row { return Row{Key: key, Flat: ci.Result{Estimate: flat}} }
	r := &Report{Rows: []Row{
		row("main.a /src/a.go:12", 5),
		row("main.b /src/b.go:3", 40),
		row("main.a /src/a.go:9", 30),
		row("main.a /src/gen.go:7", 1), // the same function in another file: a routine of its own
		row("main.c", 9),               // no line
		row("other :4", 100),           // not matched
		row("main.a /src/a.go:0", 2),   // no line either
	}}
	got, unlined := Routines(r, regexp.MustCompile(`^main\.`))
	want := []string{"main.b /src/b.go [3] 40", "main.a /src/a.go [9 12] 35", "main.a /src/gen.go [7] 1"}
	if len(got) != len(want) {
		t.Fatalf("%d routines, want %d: %+v", len(got), len(want), got)
	}
	for i, rt := range got {
		if s := fmt.Sprintf("%s %s %v %g", rt.Func, rt.File, rt.Lines, rt.Flat); s != want[i] {
			t.Errorf("routine %d: %s, want %s", i, s, want[i])
		}
		for j, l := range rt.Lines {
			if k := fmt.Sprintf("%s %s:%d", rt.Func, rt.File, l); rt.Rows[j].Key != k {
				t.Errorf("routine %d line %d: row %q", i, l, rt.Rows[j].Key)
			}
		}
	}
	if fmt.Sprint(unlined) != "[main.a /src/a.go:0 main.c]" {
		t.Errorf("unlined %q", unlined)
	}
}
