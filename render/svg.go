package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// ChartOptions shape the interval chart of --format svg and html.
type ChartOptions struct {
	// Log draws the value axis on a log scale, for rows that differ by
	// orders of magnitude.
	Log bool
}

// WriteSVG writes the interval chart of r as a standalone SVG file: a row
// per report row (the --top cut applies), its estimate a dot shaded by how
// far it can be trusted (see distrust), its interval the whiskers.
func WriteSVG(w io.Writer, r *report.Report, opt ChartOptions) error {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	writeChart(&b, r, opt, true)
	_, err := io.WriteString(w, b.String())
	return err
}

// The chart's geometry, in pixels. Labels are monospace, so that how many
// characters fit is known without measuring text.
const (
	chartWidth   = 960
	chartLabelW  = 300 // the key column
	chartTextW   = 330 // the numbers column, right of the plot
	chartTop     = 50  // title and caption
	chartRowH    = 22
	chartAxisH   = 36
	chartLabelCh = 41 // characters of a key that fit in the key column
)

// writeChart writes the chart's <svg> element. A standalone file names the
// SVG namespace; an SVG inline in HTML needs none (and so the page holds no
// URL).
func writeChart(b *strings.Builder, r *report.Report, opt ChartOptions, standalone bool) {
	rows := max(len(r.Rows), 1)
	height := chartTop + rows*chartRowH + chartAxisH
	if r.Omitted > 0 {
		height += 18
	}
	ns := ""
	if standalone {
		ns = ` xmlns="http://www.w3.org/2000/svg"`
	}
	title := chartTitle(r, opt)
	fmt.Fprintf(b, "<svg%s class=\"interval-chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n",
		ns, chartWidth, height, chartWidth, height)
	fmt.Fprintf(b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", chartWidth, height)
	fmt.Fprintf(b, "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title))
	fmt.Fprintf(b, "<text x=\"10\" y=\"36\" fill=\"#444444\">%s</text>\n", esc(chartCaption(r)))
	ax := chartAxis(r, opt)
	writeTicks(b, ax, chartTop, chartTop+rows*chartRowH)
	for i := range r.Rows {
		writeChartRow(b, r, i, ax)
	}
	if len(r.Rows) == 0 {
		fmt.Fprintf(b, "<text x=\"10\" y=\"%d\" fill=\"#666666\">no rows</text>\n", chartTop+15)
	}
	if r.Omitted > 0 {
		fmt.Fprintf(b, "<text x=\"10\" y=\"%d\" fill=\"#666666\">(%d more %s; --top 0 shows all)</text>\n",
			height-6, r.Omitted, rowsWord(r.Omitted))
	}
	b.WriteString("</svg>\n")
}

// chartTitle says what the chart shows.
func chartTitle(r *report.Report, opt ChartOptions) string {
	scale := ""
	if opt.Log {
		scale = ", log scale"
	}
	return fmt.Sprintf("%s by %s: estimates with %g%% confidence intervals%s", r.Value, byText(r), 100*r.Confidence, scale)
}

// chartCaption is the total and the inputs.
func chartCaption(r *report.Report) string {
	bytes := r.Value.IsSpace()
	s := "total " + human(r.Total.Flat.Estimate, bytes)
	if hasInterval(r.Total.Flat) {
		s += fmt.Sprintf(" (%s)", interval(r.Total.Flat, bytes))
	}
	switch n := len(r.Sources); {
	case n == 1:
		s += "; " + r.Sources[0].Path + " (" + r.Sources[0].Format + ")"
	case n > 1:
		s += fmt.Sprintf("; %d inputs merged", n)
	}
	return s
}

// chartAxis is the value axis that holds every row's estimate and
// interval (an unbounded upper end is drawn as an arrow, not held).
func chartAxis(r *report.Report, opt ChartOptions) axis {
	hi, minPos := 0.0, math.Inf(1)
	for _, row := range r.Rows {
		res := row.Flat
		hi = math.Max(hi, res.Estimate)
		if res.Estimate > 0 {
			minPos = math.Min(minPos, res.Estimate)
		}
		if !hasInterval(res) {
			continue
		}
		if !math.IsInf(res.Hi, 1) {
			hi = math.Max(hi, res.Hi)
		}
		if res.Lo > 0 {
			minPos = math.Min(minPos, res.Lo)
		}
	}
	return newAxis(minPos, hi, opt.Log, r.Value.IsSpace(), chartLabelW, chartWidth-chartTextW)
}

// writeTicks draws a vertical line and a label at each tick.
func writeTicks(b *strings.Builder, ax axis, top, bottom int) {
	b.WriteString("<g class=\"axis\" fill=\"#555555\" text-anchor=\"middle\">\n")
	for _, t := range ax.ticks {
		x := px(ax.pos(t.v))
		stroke := t.stroke
		if stroke == "" {
			stroke = "#dddddd"
		}
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"%s\"/>\n", x, top, x, bottom+4, stroke)
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\">%s</text>\n", x, bottom+18, esc(t.label))
	}
	b.WriteString("</g>\n")
}

// writeChartRow draws row i: a stripe, its key, the whiskers, the dot and
// the numbers; its <title> is the tooltip with the whole key.
func writeChartRow(b *strings.Builder, r *report.Report, i int, ax axis) {
	row := &r.Rows[i]
	res := row.Flat
	bytes := r.Value.IsSpace()
	top := chartTop + i*chartRowH
	y := px(float64(top) + chartRowH/2)
	key := keyText(*row, r.By)
	b.WriteString("<g class=\"bar\">\n")
	numbers := rowNumbers(row, bytes)
	fmt.Fprintf(b, "<title>%s: %s</title>\n", esc(key), esc(numbers))
	if i%2 == 1 {
		fmt.Fprintf(b, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n", top, chartWidth, chartRowH)
	}
	fmt.Fprintf(b, "<text class=\"key\" x=\"10\" y=\"%s\" dy=\"4\" font-family=\"monospace\">%s</text>\n", y, esc(cut(key, chartLabelCh)))
	if hasInterval(res) {
		writeWhiskers(b, ax, res.Lo, res.Hi, y, "#333333", "1.5")
	}
	if res.Estimate > 0 || !ax.log && res.Method != "-" {
		fmt.Fprintf(b, "<circle class=\"estimate\" cx=\"%s\" cy=\"%s\" r=\"4.5\" fill=\"%s\" stroke=\"#222222\"/>\n",
			px(ax.pos(res.Estimate)), y, shade(210, distrust(res)))
	}
	fmt.Fprintf(b, "<text class=\"numbers\" x=\"%d\" y=\"%s\" dy=\"4\">%s</text>\n", chartWidth-chartTextW+12, y, esc(numbers))
	b.WriteString("</g>\n")
}

// writeWhiskers draws the interval [lo, hi] at height y, in colour and
// stroke width: a line with a cap at each end on the axis, an arrowhead at
// an end past it (an open upper end, a lower end of 0 on a log scale; a
// diff's new and gone rows).
func writeWhiskers(b *strings.Builder, ax axis, lo, hi float64, y, colour, width string) {
	xlo, xhi := ax.pos(lo), ax.pos(hi)
	yf, _ := strconv.ParseFloat(y, 64)
	fmt.Fprintf(b, "<line class=\"whisker\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>\n", px(xlo), y, px(xhi), y, colour, width)
	for _, end := range []struct {
		x      float64
		in     bool
		toward float64
	}{{xlo, ax.inside(lo), -1}, {xhi, ax.inside(hi), 1}} {
		if end.in {
			fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>\n", px(end.x), px(yf-5), px(end.x), px(yf+5), colour, width)
			continue
		}
		tip := end.x + 2*end.toward
		fmt.Fprintf(b, "<path d=\"M%s %sL%s %sL%s %sZ\" fill=\"%s\"/>\n",
			px(tip), y, px(tip-6*end.toward), px(yf-4), px(tip-6*end.toward), px(yf+4), colour)
	}
}

// rowNumbers is the estimate, the interval and its half width; for a
// function only ever a caller, its cum instead.
func rowNumbers(row *report.Row, bytes bool) string {
	res := row.Flat
	switch {
	case res.Method == "-" && row.Cum != nil && row.Cum.Method != "-":
		return "no flat; cum " + resultNumbers(*row.Cum, bytes)
	case res.Method == "-":
		return human(res.Estimate, bytes) + " (nothing sampled)"
	}
	return resultNumbers(res, bytes)
}

// resultNumbers is "estimate (lo – hi, ±pct)".
func resultNumbers(res ci.Result, bytes bool) string {
	if !hasInterval(res) {
		return human(res.Estimate, bytes) + " (no interval)"
	}
	return fmt.Sprintf("%s (%s, ±%s)", human(res.Estimate, bytes), interval(res, bytes), halfWidthPct(res))
}

// distrust is how little a result can be trusted, from 0 to 1: its
// interval's width relative to its estimate, (hi−lo)/(2·estimate), capped at
// 1 (the interval is ± the estimate or wider); 1 where there is no
// interval.
func distrust(res ci.Result) float64 {
	if !hasInterval(res) || !(res.Estimate > 0) || math.IsInf(res.Hi, 1) {
		return 1
	}
	return math.Min(1, math.Max(0, (res.Hi-res.Lo)/(2*res.Estimate)))
}

// shade is the fill of something distrust d: a strong colour of the hue
// at 0, fading to a pale grey at 1.
func shade(hue int, d float64) string {
	sat := 80 - 72*d
	light := 45 + 45*d
	return fmt.Sprintf("hsl(%d,%s%%,%s%%)", hue, strconv.FormatFloat(sat, 'f', 1, 64), strconv.FormatFloat(light, 'f', 1, 64))
}

// cut shortens s to n characters, its end marked.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// esc escapes text for XML and HTML, in content and attributes alike,
// with what XML cannot hold written as escapes (Printable).
func esc(s string) string { return xmlReplacer.Replace(Printable(s)) }

var xmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&#39;")
