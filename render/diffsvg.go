package render

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/report"
)

// The ratios a diff chart's axis may be labelled at, as changes, in the
// order they are tried: halvings and doublings, then finer steps where
// the axis has room for them.
var ratioTicks = []float64{1.0 / 2, 2, 1.0 / 4, 4, 1.0 / 8, 8, 1.0 / 16, 16, 2.0 / 3, 1.5, 0.8, 1.25, 0.9, 1.1}

// The widest an axis goes: a change past it is drawn as an arrow.
const maxRatio = 16

// WriteDiffSVG writes heapest diff's rows as a standalone SVG chart: a row
// per row of the table (the --top cut applies), its change NEW/BASE a dot
// on a log scale of ratios with its interval as whiskers, red where it
// grew significantly, green where it shrank, grey otherwise; new and gone
// rows point off the axis.
func WriteDiffSVG(w io.Writer, d *compare.Diff) error {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	rows := max(len(d.Rows), 1)
	height := chartTop + rows*chartRowH + chartAxisH
	if d.Omitted > 0 {
		height += 18
	}
	title := fmt.Sprintf("%s by %s: change from base to new, with %s%% confidence intervals", d.New.Value, d.New.By, level(d.Level))
	if compare.PerProcess(d.Base, d.New) {
		title += ", per process (each side the mean of its processes)"
	}
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"diff-chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", chartWidth, height)
	fmt.Fprintf(&b, "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title))
	fmt.Fprintf(&b, "<text x=\"10\" y=\"36\" fill=\"#444444\">%s</text>\n", esc(diffCaption(d)))
	ax := ratioAxis(d.Rows)
	writeTicks(&b, ax, chartTop, chartTop+rows*chartRowH)
	for i := range d.Rows {
		writeDiffRow(&b, d, i, ax)
	}
	if len(d.Rows) == 0 {
		fmt.Fprintf(&b, "<text x=\"10\" y=\"%d\" fill=\"#666666\">no rows</text>\n", chartTop+15)
	}
	if d.Omitted > 0 {
		fmt.Fprintf(&b, "<text x=\"10\" y=\"%d\" fill=\"#666666\">(%d more %s; --top 0 shows all)</text>\n",
			height-6, d.Omitted, rowsWord(d.Omitted))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// diffCaption is the summary line of the table, and the totals.
func diffCaption(d *compare.Diff) string {
	bytes := d.New.Value.IsSpace()
	return fmt.Sprintf("%s; total %s → %s (%s)", diffSummary(d), human(d.Total.Base.Estimate, bytes), human(d.Total.New.Estimate, bytes), changeText(&d.Total))
}

// ratioAxis is the log scale of ratios that holds 1 and every row's
// finite change and interval ends, up to maxRatio either way.
func ratioAxis(rows []compare.Row) axis {
	lo, hi := 1.0, 1.0
	for _, r := range rows {
		for _, v := range []float64{r.Ratio, r.Lo, r.Hi} {
			if v > 0 && !math.IsInf(v, 1) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	lo, hi = math.Max(lo/1.1, 1.0/maxRatio), math.Min(hi*1.1, maxRatio)
	a := axis{lo: lo, hi: hi, x0: chartLabelW, x1: chartWidth - chartTextW, log: true}
	// No change, then each ratio on the axis at least minTickGap pixels
	// from every tick before it: labels that do not overlap.
	const minTickGap = 48
	a.ticks = []tick{{v: 1, label: "0%", stroke: "#888888"}} // no change, darker
	for _, t := range ratioTicks {
		if t < lo || t > hi || slices.ContainsFunc(a.ticks, func(k tick) bool { return math.Abs(a.pos(k.v)-a.pos(t)) < minTickGap }) {
			continue
		}
		a.ticks = append(a.ticks, tick{v: t, label: strings.Replace(fmt.Sprintf("%+.0f%%", 100*(t-1)), "-", "−", 1)})
	}
	slices.SortFunc(a.ticks, func(x, y tick) int { return cmp.Compare(x.v, y.v) })
	return a
}

// writeDiffRow draws row i: its key, its change's interval and dot, and the
// table's change and interval as text.
func writeDiffRow(b *strings.Builder, d *compare.Diff, i int, ax axis) {
	r := &d.Rows[i]
	top := chartTop + i*chartRowH
	y := px(float64(top) + chartRowH/2)
	key := keyText(report.Row{Key: r.Key, Stack: r.Stack}, d.New.By)
	ci := "no interval"
	if r.Tested {
		ci = change(r.Lo) + " – " + change(r.Hi)
	}
	numbers := fmt.Sprintf("%s (%s), %s", changeText(r), ci, deltaText(r.Diff, d.New.Value.IsSpace()))
	b.WriteString("<g class=\"bar\">\n")
	fmt.Fprintf(b, "<title>%s: %s</title>\n", esc(key), esc(numbers))
	if i%2 == 1 {
		fmt.Fprintf(b, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n", top, chartWidth, chartRowH)
	}
	fmt.Fprintf(b, "<text class=\"key\" x=\"10\" y=\"%s\" dy=\"4\" font-family=\"monospace\">%s</text>\n", y, esc(cut(key, chartLabelCh)))
	colour := "#999999"
	switch {
	case r.Significant && r.Ratio > 1:
		colour = "hsl(0,70%,45%)"
	case r.Significant:
		colour = "hsl(140,60%,35%)"
	}
	if r.Tested {
		writeWhiskers(b, ax, r.Lo, r.Hi, y, colour, "2")
	}
	if r.Ratio > 0 && !math.IsInf(r.Ratio, 1) {
		fmt.Fprintf(b, "<circle class=\"change\" cx=\"%s\" cy=\"%s\" r=\"4.5\" fill=\"%s\" stroke=\"#222222\"/>\n", px(ax.pos(r.Ratio)), y, colour)
	}
	fmt.Fprintf(b, "<text class=\"numbers\" x=\"%d\" y=\"%s\" dy=\"4\">%s</text>\n", chartWidth-chartTextW+12, y, esc(numbers))
	b.WriteString("</g>\n")
}
