package render

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/heapest/heapest/report"
)

// The flame graph's geometry, in the pixels of its viewBox (the page
// scales it to its width).
const (
	flameWidth  = 1200
	flameFrameH = 18
	// flameCharW is about what one character of the 11px labels takes.
	flameCharW = 6.6
)

// writeFlame writes f as an icicle: the total on top, each function's
// callees below it, every frame as wide as its estimate and shaded by its
// interval's relative width (distrust), its <title> the tooltip. Each
// frame's group carries its place as fractions of the total (data-x,
// data-w) and its depth, for the page's zoom.
func writeFlame(b *strings.Builder, f *report.Flame) {
	depth := flameDepth(f.Root)
	height := depth * flameFrameH
	fmt.Fprintf(b, "<svg class=\"flame\" width=\"100%%\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\"flame graph\">\n",
		flameWidth, height)
	total := f.Root.Stats.Estimate
	writeFrame(b, f, f.Root, 0, 0, total)
	b.WriteString("</svg>\n")
}

// flameDepth is the number of levels under and including n.
func flameDepth(n *report.FlameNode) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, flameDepth(c))
	}
	return d + 1
}

// writeFrame draws n at depth d starting at x (a fraction of the total),
// then its children left to right.
func writeFrame(b *strings.Builder, f *report.Flame, n *report.FlameNode, d int, x, total float64) {
	w := 1.0
	if total > 0 {
		w = n.Stats.Estimate / total
	}
	bytes := f.Value.IsSpace()
	dis := distrust(n.Result)
	px0, pw := x*flameWidth, w*flameWidth
	y := d * flameFrameH
	fmt.Fprintf(b, "<g class=\"frame\" data-x=\"%s\" data-w=\"%s\" data-d=\"%d\" data-distrust=\"%s\">",
		frac(x), frac(w), d, strconv.FormatFloat(dis, 'f', 3, 64))
	fmt.Fprintf(b, "<title>%s\n%s\n%s samples, %s</title>", esc(n.Name), esc(resultNumbers(n.Result, bytes)),
		esc(SamplesText(n.Result.Samples, n.Stats.SamplesBound)), esc(n.Result.Method))
	stroke := "#ffffff"
	dash := ""
	if !hasInterval(n.Result) {
		stroke, dash = "#888888", " stroke-dasharray=\"3 2\""
	}
	fmt.Fprintf(b, "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"0.5\"%s/>",
		px(px0), y, px(pw), flameFrameH-1, shade(nameHue(n.Name), dis), stroke, dash)
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\">%s</text></g>\n", px(px0+3), y+13, esc(frameLabel(n.Name, pw)))
	for _, c := range n.Children {
		writeFrame(b, f, c, d+1, x, total)
		if total > 0 {
			x += c.Stats.Estimate / total
		}
	}
}

// frameLabel is as much of name as fits in a frame w pixels wide.
func frameLabel(name string, w float64) string {
	n := int((w - 6) / flameCharW)
	if n < 3 {
		return ""
	}
	return cut(name, n)
}

// nameHue is a warm hue (red to yellow) from a function's name, so that
// neighbouring frames differ and a function keeps its colour.
func nameHue(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % 50)
}

// frac writes a fraction of the total with fixed precision.
func frac(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
