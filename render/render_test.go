package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
	"github.com/heapest/heapest/unbias"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// buildDump parses and symbolizes a bundled dump and builds a report. The
// symbolized dumps carry their own symbols and no MAPPED_LIBRARIES, so the
// output does not depend on this machine's libraries.
func buildDump(t *testing.T, file string, opt report.Options) *report.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "jemalloc", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	b := report.NewBuilder(opt)
	if _, _, err := b.AddReader(file, f, report.Input{Symbolize: symbolize.Options{DropAllocator: true}}); err != nil {
		t.Fatal(err)
	}
	r, err := b.Report()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./render -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the golden file; got written to %s.got (go test ./render -update accepts it):\n%s", name, path, got)
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		opt    report.Options
		format Format
	}{
		{"func.table", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc}, Table},
		{"func.csv", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc}, CSV},
		{"func.json", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc}, JSON},
		{"stack.table", "mixed_symbolized.heap", report.Options{By: aggregate.ByStack}, Table},
		{"stack.json", "mixed_symbolized.heap", report.Options{By: aggregate.ByStack, Top: 2}, JSON},
		{"focus.table", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc, Focus: regexp.MustCompile("^alloc_[ab]$"), Ignore: regexp.MustCompile("alloc_b")}, Table},
		{"thread.table", "je530_threads_unbias-on.heap", report.Options{By: aggregate.ByThread, Value: unbias.InUseObjects}, Table},
		{"size.csv", "je530_threads_unbias-on.heap", report.Options{By: aggregate.BySize}, CSV},
		{"alloc_objects.table", "mixed_symbolized.heap", report.Options{By: aggregate.ByLeaf, Value: unbias.AllocObjects, Confidence: 0.9, Method: ci.Normal}, Table},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, buildDump(t, tt.file, tt.opt), tt.format); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// Machine-readable output keeps every number unrounded and parses back.
func TestMachineReadable(t *testing.T) {
	r := buildDump(t, "je530_mixed_unbias-off.heap", report.Options{By: aggregate.ByFunc, Top: 0})
	var buf bytes.Buffer
	if err := Write(&buf, r, JSON); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Unit, By string
		Total    struct{ Estimate float64 }
		Rows     []struct{ Key string }
	}
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Total.Estimate != r.Total.Flat.Estimate || len(j.Rows) != len(r.Rows) || j.Unit != "bytes" || j.By != "func" {
		t.Errorf("json round trip: %+v", j.Total)
	}
	buf.Reset()
	if err := Write(&buf, r, CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The total line is told by its part, and has no key: a function
	// may be named "total".
	last := recs[len(recs)-1]
	if last[0] != "total" || last[1] != "" || last[2] != num(r.Total.Flat.Estimate) || len(recs) != len(r.Rows)+2 {
		t.Errorf("csv total row %v", last)
	}
	for _, rec := range recs[1 : len(recs)-1] {
		if rec[0] != "group" {
			t.Errorf("csv row %v: part %q, want group", rec, rec[0])
		}
	}
}

func TestHuman(t *testing.T) {
	for _, tt := range []struct {
		x     float64
		bytes bool
		want  string
	}{
		{0, true, "0B"}, {1023, true, "1023B"}, {1024, true, "1.00KiB"}, {1536, true, "1.50KiB"},
		{40.5 * (1 << 20), true, "40.5MiB"}, {182546748483, true, "170GiB"},
		{999, false, "999"}, {12526533, false, "12.5M"}, {218463, false, "218k"},
	} {
		if got := human(tt.x, tt.bytes); got != tt.want {
			t.Errorf("human(%v, %v) = %q, want %q", tt.x, tt.bytes, got, tt.want)
		}
	}
	if !strings.HasPrefix(halfWidthPct(ci.Result{Estimate: 100, Lo: 90, Hi: 110, Method: "exact"}), "10.0%") {
		t.Error("halfWidthPct")
	}
}

// Which columns a report has depends on what a row is, never on how many
// rows matched: a --by func report whose filter matched nothing still has
// the cum columns, in the table and in CSV alike.
func TestColumnsDoNotDependOnRows(t *testing.T) {
	r := buildDump(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc, Focus: regexp.MustCompile("^no such function$")})
	if len(r.Rows) != 0 {
		t.Fatalf("%d rows, want none", len(r.Rows))
	}
	var table, csvOut bytes.Buffer
	if err := Write(&table, r, Table); err != nil {
		t.Fatal(err)
	}
	if err := Write(&csvOut, r, CSV); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(csvOut.String(), "\n")
	if head != "part,key,estimate,lo,hi,samples,samples_bound,method,cum_estimate,cum_lo,cum_hi,cum_method,notes" {
		t.Errorf("CSV header %q", head)
	}
	if !strings.Contains(table.String(), " CUM ") {
		t.Errorf("table has no CUM column:\n%s", table.String())
	}
}

// TestTableFits checks the table on a terminal: at 80 and 100 columns the
// least needed columns go (the cum interval first) until every line fits,
// and a locale that is not UTF-8 gets ASCII, still aligned.
func TestTableFits(t *testing.T) {
	r := buildDump(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc})
	for _, tt := range []struct {
		name string
		opt  TableOptions
	}{
		{"func.table80", TableOptions{Width: 80}},
		{"func.table100", TableOptions{Width: 100}},
		{"func.ascii", TableOptions{ASCII: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTable(&buf, r, tt.opt); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
			lines := strings.Split(buf.String(), "\n")
			for _, l := range lines[2:] { // the header names the inputs, at any width
				if tt.opt.Width > 0 && utf8.RuneCountInString(l) > tt.opt.Width && !strings.HasPrefix(l, "¹") && !strings.HasPrefix(l, "²") {
					t.Errorf("line of %d characters at width %d: %q", utf8.RuneCountInString(l), tt.opt.Width, l)
				}
				if tt.opt.ASCII {
					for _, c := range l {
						if c > 127 {
							t.Errorf("non-ASCII %q in %q", c, l)
							break
						}
					}
				}
			}
		})
	}
}
