package main

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heapest/heapest/sim"
)

// writePlot draws each method's coverage per scenario and dump encoding,
// with the nominal 95% and the 94.5% requirement as lines.
func writePlot(path string, results []sim.StudyResult) error {
	p := plot.New()
	p.Title.Text = "Coverage of 95% intervals, per scenario (r = raw dump, u = prof_unbias dump)"
	p.Y.Label.Text = "coverage"
	p.Y.Min, p.Y.Max = 0.8, 1.0
	var ticks []plot.Tick
	for i, r := range results {
		label := r.Scenario + " r"
		if r.Encoding == sim.Unbias {
			label = r.Scenario + " u"
		}
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Rotation = 1.2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(results))-0.5

	for _, level := range []float64{0.95, 0.945} {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: level}, {X: float64(len(results)) - 0.5, Y: level}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 150}
		if level == 0.945 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
	}
	colors := []color.Color{
		color.RGBA{R: 200, A: 255}, color.RGBA{B: 200, A: 255}, color.RGBA{G: 150, B: 150, A: 255},
		color.RGBA{G: 140, A: 255}, color.RGBA{R: 230, G: 140, A: 255},
	}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}
	for mi, m := range sim.Methods {
		var pts plotter.XYs
		for i, r := range results {
			t := r.Tallies[mi]
			if t.Rows == 0 {
				continue
			}
			y := t.Coverage()
			if y < p.Y.Min {
				y = p.Y.Min // clipped; the table has the value
			}
			pts = append(pts, plotter.XY{X: float64(i) + 0.12*float64(mi-2), Y: y})
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = colors[mi]
		sc.GlyphStyle.Shape = shapes[mi]
		sc.GlyphStyle.Radius = vg.Points(3)
		if m.String() == "auto" {
			sc.GlyphStyle.Radius = vg.Points(4)
		}
		p.Add(sc)
		p.Legend.Add(m.String(), sc)
	}
	p.Legend.Top = false
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p.Save(11*vg.Inch, 5.5*vg.Inch, path)
}
