package render

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// TestWriteListFits: on a terminal of a given width a listing drops the
// table's columns, in the table's order, until its lines fit (a source
// line longer than the width is left to wrap), and says so.
func TestWriteListFits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "parse", "pprof", "testdata", "go-heap.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	b := report.NewBuilder(report.Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95, Method: ci.Auto, Lines: true})
	if _, _, err := b.AddReader("go-heap.pb.gz", bytes.NewReader(data), report.Input{Parse: parse.Options{Lines: true}}); err != nil {
		t.Fatal(err)
	}
	r, err := b.Report()
	if err != nil {
		t.Fatal(err)
	}
	routines, _ := report.Routines(r, regexp.MustCompile(`^main\.alloc(Huge|ate)$`))
	src := func(string) []string { return []string{"short", "line"} } // lines past its end have no text
	for _, tt := range []struct {
		width int
		left  string // the note on columns left out; "" for none
	}{
		{0, ""},
		{200, ""},
		{100, "(1 column left out to fit 100; --wide shows all)"},
		{60, "(5 columns left out to fit 60; --wide shows all)"},
	} {
		var out bytes.Buffer
		if err := WriteList(&out, r, routines, 0, src, TableOptions{Width: tt.width}); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if got := strings.Contains(text, "left out to fit"); got != (tt.left != "") || tt.left != "" && !strings.Contains(text, tt.left) {
			t.Errorf("width %d: want %q in\n%s", tt.width, tt.left, text)
		}
		if tt.width == 0 {
			continue
		}
		fits := tt.width
		if tt.width < 70 {
			fits = 70 // the columns that stay are wider than that
		}
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, " ") && utf8.RuneCountInString(strings.TrimRight(l, " ")) > fits {
				t.Errorf("width %d: line of %d: %q", tt.width, utf8.RuneCountInString(l), l)
			}
		}
	}
}
