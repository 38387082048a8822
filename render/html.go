package render

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// The page's template, style and script are written here, plain HTML, CSS
// and JavaScript with no library, and embedded: the page is one file that
// makes no request.
//
//go:embed html/page.tmpl html/page.css html/page.js
var htmlFiles embed.FS

// pageTemplate is parsed when a page is first written, not at start-up:
// every command would pay for it otherwise.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(htmlFiles, "html/page.tmpl"))
})

// HTMLOptions shape the page of --format html (and of heapest web).
type HTMLOptions struct {
	Chart ChartOptions
	// By lists the groupings a switcher offers (heapest web, where the
	// page is asked for again with ?by=); none: no switcher.
	By []string
	// Links are other views, by relative address (pprof's, under heapest
	// web); none in a file.
	Links []Link
}

// Link is a relative link the page shows.
type Link struct{ Text, Href string }

// WriteHTML writes one self-contained page: the rows as a sortable,
// filterable table with each interval drawn as a bar, the interval chart
// (inline SVG) and f as a flame graph whose frames carry their estimate
// and interval and are shaded by how far they can be trusted. Nothing in
// it is fetched: the style and script are inline, and no element names a
// URL.
func WriteHTML(w io.Writer, r *report.Report, f *report.Flame, opt HTMLOptions) error {
	page, err := newHTMLPage(r, f, opt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, page); err != nil {
		return fmt.Errorf("html output: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// htmlPage is what the template fills in.
type htmlPage struct {
	Title   string
	Header  []string
	By      []htmlChoice
	Links   []Link
	Chart   template.HTML
	Columns []htmlColumn
	Rows    [][]htmlCell
	Total   []htmlCell
	Omitted string
	Notes   []string
	Flame   template.HTML
	Legend  []htmlSwatch
	Pruned  string
	CSS     template.CSS
	JS      template.JS
}

type htmlChoice struct {
	Name     string
	Selected bool
}

// htmlColumn is a table column: its header and whether it sorts by
// number.
type htmlColumn struct {
	Head, Class string
	Numeric     bool
}

// htmlCell is one cell: its text, its unrounded number for sorting (V),
// and for the interval column the bar.
type htmlCell struct {
	Class, Text, V string
	// Title is a key's whole text where the table cuts it (keyTitle).
	Title string
	Bar   template.HTML
}

// keyTitle is how long a key is before its cell's text is cut (at 40em,
// page.css) and it gets a tooltip with all of it.
const keyTitle = 60

type htmlSwatch struct {
	Fill  template.CSS
	Label string
}

func newHTMLPage(r *report.Report, f *report.Flame, opt HTMLOptions) (*htmlPage, error) {
	css, err := htmlFiles.ReadFile("html/page.css")
	if err != nil {
		return nil, err
	}
	js, err := htmlFiles.ReadFile("html/page.js")
	if err != nil {
		return nil, err
	}
	p := &htmlPage{Title: "heapest: " + chartTitle(r, opt.Chart), Links: opt.Links,
		CSS: template.CSS(css), JS: template.JS(js)}
	var head strings.Builder
	writeHeader(&head, r)
	p.Header = strings.Split(strings.TrimSpace(head.String()), "\n")
	for _, by := range opt.By {
		p.By = append(p.By, htmlChoice{by, by == r.By.String()})
	}
	var chart strings.Builder
	writeChart(&chart, r, opt.Chart, false)
	p.Chart = template.HTML(chart.String())
	p.fillTable(r, opt.Chart)
	if f != nil {
		var fl strings.Builder
		writeFlame(&fl, f)
		p.Flame = template.HTML(fl.String())
		if f.Pruned > 0 {
			p.Pruned = fmt.Sprintf("%d frames narrower than 0.1%% of the total are left out.", f.Pruned)
		}
	}
	for _, d := range []float64{0, 0.25, 0.5, 0.75, 1} {
		label := fmt.Sprintf("±%.0f%%", 100*d)
		if d == 1 {
			label = "±100% or more, or no interval"
		}
		p.Legend = append(p.Legend, htmlSwatch{template.CSS(shade(25, d)), label})
	}
	return p, nil
}

// fillTable makes the table's columns and cells from the report's
// layout: the same numbers the text table and JSON show.
func (p *htmlPage) fillTable(r *report.Report, opt ChartOptions) {
	bytes := r.Value.IsSpace()
	cum := r.By.String() == "func"
	p.Columns = []htmlColumn{{strings.ToUpper(r.By.String()), "key", false}, {"ESTIMATE", "estimate", true},
		{fmt.Sprintf("%g%% CI", 100*r.Confidence), "bar", true}, {"LO", "lo", true}, {"HI", "hi", true},
		{"±", "pm", true}, {"SAMPLES", "samples", true}, {"METHOD", "method", false}}
	if cum {
		p.Columns = append(p.Columns, htmlColumn{"CUM", "cum", true}, htmlColumn{"CUM LO", "cumlo", true}, htmlColumn{"CUM HI", "cumhi", true})
	}
	ax := chartAxis(r, opt)
	ax.x0, ax.x1 = 6, 154
	notes := &footnotes{}
	for i := range r.Rows {
		p.Rows = append(p.Rows, htmlCells(&r.Rows[i], keyText(r.Rows[i], r.By), false, bytes, cum, ax, notes))
	}
	total := r.Total
	p.Total = htmlCells(&total, "total", true, bytes, false, ax, notes)
	if r.Omitted > 0 {
		p.Omitted = fmt.Sprintf("%d more %s; --top 0 shows all.", r.Omitted, rowsWord(r.Omitted))
	}
	for i, t := range notes.texts {
		mark := fmt.Sprintf("[%d]", i+1)
		if i < len(superscripts) {
			mark = superscripts[i]
		}
		p.Notes = append(p.Notes, mark+" "+t)
	}
	p.Notes = append(p.Notes, r.Notes...)
}

// htmlCells is one row's cells, key the text of its first; the total's
// interval gets no bar (it would not fit the rows' axis). The total is
// told by isTotal, not by its text: a function may be named "total".
func htmlCells(row *report.Row, key string, isTotal, bytes, cum bool, ax axis, notes *footnotes) []htmlCell {
	res := row.Flat
	cells := []htmlCell{{Class: "key", Text: Printable(key)},
		{Class: "estimate", Text: human(res.Estimate, bytes), V: num(res.Estimate)},
		{Class: "bar", V: num(res.Estimate)},
		bound("lo", res.Lo, res, bytes), bound("hi", res.Hi, res, bytes),
		{Class: "pm", Text: halfWidthPct(res), V: pmValue(res)},
		{Class: "samples", Text: human(res.Samples, false), V: num(res.Samples)},
		{Class: "method", Text: res.Method + notes.marks(res.Notes)}}
	if row.Stats.SamplesBound {
		cells[6].Text = "≤" + cells[6].Text
	}
	if utf8.RuneCountInString(cells[0].Text) > keyTitle {
		cells[0].Title = cells[0].Text
	}
	if !isTotal {
		cells[2].Bar = template.HTML(intervalBar(res, ax))
	}
	if cum && row.Cum != nil {
		c := *row.Cum
		cells = append(cells, htmlCell{Class: "cum", Text: human(c.Estimate, bytes), V: num(c.Estimate)},
			bound("cumlo", c.Lo, c, bytes), bound("cumhi", c.Hi, c, bytes))
	}
	return cells
}

// bound is a cell of an interval's end, "-" where there is none.
func bound(class string, x float64, res ci.Result, bytes bool) htmlCell {
	if !hasInterval(res) {
		return htmlCell{Class: class, Text: "-"}
	}
	return htmlCell{Class: class, Text: human(x, bytes), V: num(x)}
}

// pmValue is the half width's number for sorting ("" where there is none).
func pmValue(res ci.Result) string {
	if res.Estimate == 0 || !hasInterval(res) {
		return ""
	}
	return num((res.Hi - res.Lo) / 2 / res.Estimate)
}

// intervalBar is a row's interval drawn small, on the rows' common axis:
// whiskers, and the estimate as a dot shaded as the chart's.
func intervalBar(res ci.Result, ax axis) string {
	var b strings.Builder
	b.WriteString(`<svg class="ibar" width="160" height="14" viewBox="0 0 160 14">`)
	fmt.Fprintf(&b, `<line x1="%s" y1="7" x2="%s" y2="7" stroke="#cccccc"/>`, px(ax.x0), px(ax.x1))
	if hasInterval(res) {
		lo, hi := px(ax.pos(res.Lo)), px(ax.pos(res.Hi))
		fmt.Fprintf(&b, `<line class="whisker" x1="%s" y1="7" x2="%s" y2="7" stroke="#333333" stroke-width="1.5"/>`, lo, hi)
		fmt.Fprintf(&b, `<line x1="%s" y1="3" x2="%s" y2="11" stroke="#333333"/><line x1="%s" y1="3" x2="%s" y2="11" stroke="#333333"/>`, lo, lo, hi, hi)
	}
	if res.Method != "-" {
		fmt.Fprintf(&b, `<circle class="estimate" cx="%s" cy="7" r="3.5" fill="%s" stroke="#222222"/>`, px(ax.pos(res.Estimate)), shade(210, distrust(res)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
