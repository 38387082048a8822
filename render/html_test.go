package render

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
	"github.com/heapest/heapest/unbias"
)

// buildPage reads a bundled dump into a report and its flame graph, as
// heapest report --format html does.
func buildPage(t *testing.T, file string, opt report.Options) (*report.Report, *report.Flame) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "jemalloc", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.Confidence, opt.Flame = 0.95, true
	b := report.NewBuilder(opt)
	if _, _, err := b.AddReader(file, f, report.Input{Symbolize: symbolize.Options{DropAllocator: true}}); err != nil {
		t.Fatal(err)
	}
	r, err := b.Report()
	if err != nil {
		t.Fatal(err)
	}
	fl, err := b.Flame(0.001)
	if err != nil {
		t.Fatal(err)
	}
	return r, fl
}

func TestHTMLGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string
		opt  report.Options
		html HTMLOptions
	}{
		{"func.html", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc, Top: 6}, HTMLOptions{}},
		{"thread-web.html", "je530_threads_unbias-on.heap", report.Options{By: aggregate.ByThread, Value: unbias.InUseObjects},
			HTMLOptions{Chart: ChartOptions{Log: true}, By: []string{"func", "stack", "thread"}, Links: []Link{{"pprof", "ui/"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, fl := buildPage(t, tt.file, tt.opt)
			var buf bytes.Buffer
			if err := WriteHTML(&buf, r, fl, tt.html); err != nil {
				t.Fatal(err)
			}
			checkNoURL(t, buf.String())
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// checkNoURL fails on an http(s) URL anywhere in page but in text: not in
// an attribute, a script or a style, so that opening it fetches nothing.
func checkNoURL(t *testing.T, page string) {
	t.Helper()
	for _, u := range urlsOutsideText(page) {
		t.Errorf("URL outside text: %q", u)
	}
}

// urlsOutsideText lists, with some context, each http(s) URL of page that
// is not in text.
func urlsOutsideText(page string) []string {
	var out []string
	for _, loc := range regexp.MustCompile(`(?i)https?:`).FindAllStringIndex(page, -1) {
		before := page[:loc[0]]
		inTag := strings.LastIndex(before, "<") > strings.LastIndex(before, ">")
		inScript := strings.LastIndex(before, "<script") > strings.LastIndex(before, "</script>")
		inStyle := strings.LastIndex(before, "<style") > strings.LastIndex(before, "</style>")
		if inTag || inScript || inStyle {
			out = append(out, page[max(0, loc[0]-60):min(len(page), loc[1]+40)])
		}
	}
	return out
}

// The check itself: a URL in text passes, one in an attribute, a script or
// a style does not.
func TestCheckNoURL(t *testing.T) {
	ok := `<p>see https://example.org for more</p><svg><title>http://x</title></svg>`
	checkNoURL(t, ok)
	for _, bad := range []string{
		`<img src="http://example.org/x.png">`,
		`<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		`<script>fetch("https://example.org")</script>`,
		`<style>@import url(http://example.org/a.css);</style>`,
	} {
		if len(urlsOutsideText(bad)) != 1 {
			t.Errorf("urlsOutsideText(%q) = %q, want the one URL", bad, urlsOutsideText(bad))
		}
	}
}

// The page holds a row per report row with the report's numbers, the
// chart, and a frame per flame node, each frame's tooltip naming its
// interval; a function name that is a URL stays text.
func TestHTMLContent(t *testing.T) {
	r, fl := buildPage(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc})
	fl.Root.Children[0].Name = "https://example.org/<evil>"
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, fl, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkNoURL(t, page)
	if strings.Contains(page, "ZgotmplZ") {
		t.Error("html/template refused a value the page needs")
	}
	if strings.Contains(page, "<evil>") {
		t.Error("a frame's name is not escaped")
	}
	tbody, _, _ := strings.Cut(page[strings.Index(page, "<tbody>"):], "</tbody>")
	if n := strings.Count(tbody, "<tr><td class=\"key\">"); n != len(r.Rows) {
		t.Errorf("%d body rows, want %d", n, len(r.Rows))
	}
	first := `<tr><td class="key">alloc_b</td><td class="estimate" data-v="` + num(r.Rows[0].Flat.Estimate) + `">` + human(r.Rows[0].Flat.Estimate, true) + `</td>`
	if !strings.Contains(page, first) {
		t.Errorf("no first row %q", first)
	}
	if n, want := strings.Count(page, `<g class="frame"`), countNodes(fl.Root); n != want {
		t.Errorf("%d frames, want %d", n, want)
	}
	a := r.Rows[0].Flat
	tip := fmt.Sprintf("<title>alloc_b\n%s\n%s samples, %s</title>", esc(resultNumbers(a, true)), human(a.Samples, false), a.Method)
	if !strings.Contains(page, tip) {
		t.Error("alloc_b's frame has no tooltip with its interval")
	}
	if !strings.Contains(page, `<svg class="interval-chart"`) || strings.Count(page, `<svg class="ibar"`) != len(r.Rows) {
		t.Error("no chart, or not a bar per row")
	}
}

func countNodes(n *report.FlameNode) int {
	c := 1
	for _, ch := range n.Children {
		c += countNodes(ch)
	}
	return c
}

// A row whose key is "total" (a function may be named so) is a row: it
// gets its interval bar, which only the total goes without.
func TestHTMLRowNamedTotal(t *testing.T) {
	r, _ := buildPage(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc, Top: 3})
	r.Rows[0].Key = "total"
	var p htmlPage
	p.fillTable(r, ChartOptions{})
	if p.Rows[0][0].Text != "total" || p.Rows[0][2].Bar == "" {
		t.Errorf("row named total: key %q, bar %q", p.Rows[0][0].Text, p.Rows[0][2].Bar)
	}
	if p.Total[2].Bar != "" {
		t.Errorf("the total has a bar: %q", p.Total[2].Bar)
	}
}

// A key longer than its cell shows (a stack's) has its whole text as the
// cell's tooltip; a short one has none.
func TestHTMLLongKeyTitle(t *testing.T) {
	r, fl := buildPage(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByStack})
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, fl, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	cells := regexp.MustCompile(`<tr><td class="key"( title="([^"]*)")?>([^<]*)</td>`).FindAllStringSubmatch(buf.String(), -1)
	if len(cells) != len(r.Rows)+1 { // and the total's
		t.Fatalf("%d key cells, want %d", len(cells), len(r.Rows)+1)
	}
	long := 0
	for _, c := range cells {
		text := html.UnescapeString(c[3])
		if want := utf8.RuneCountInString(text) > keyTitle; (c[1] != "") != want || want && c[2] != c[3] {
			t.Errorf("key %q: title %q, want one %v", text, c[2], want)
		}
		if c[1] != "" {
			long++
		}
	}
	if long == 0 {
		t.Error("no key long enough for a tooltip: the case is not tested")
	}
}
