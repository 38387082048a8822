package render

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/report"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Table Format = "table"
	CSV   Format = "csv"
	JSON  Format = "json"
	Pprof Format = "pprof"
	// Parquet is heapest's statistics as rows for SQL engines (package
	// engine); cmd writes it input by input.
	Parquet Format = "parquet"
	// JUnit and Markdown are for heapest ci's gates: JUnit XML for CI
	// systems, a summary for a pull request.
	JUnit    Format = "junit"
	Markdown Format = "markdown"
	// SVG is the interval chart (WriteSVG); HTML one self-contained page
	// with the table, the chart and a flame graph (WriteHTML).
	SVG  Format = "svg"
	HTML Format = "html"
)

// String is the format's command-line name.
func (f Format) String() string { return string(f) }

// Write renders r in format f. Pprof is written by WritePprof.
func Write(w io.Writer, r *report.Report, f Format) error {
	switch f {
	case Table:
		return writeTable(w, r)
	case CSV:
		return writeCSV(w, r)
	case JSON:
		return writeJSON(w, r)
	case SVG:
		return WriteSVG(w, r, ChartOptions{})
	case Pprof:
		return fmt.Errorf("pprof output is per stack: write it with WritePprof from report.Builder.Stacks")
	case HTML:
		return fmt.Errorf("html output has a flame graph: write it with WriteHTML and report.Builder.Flame")
	}
	return fmt.Errorf("unknown format %q", f)
}

// num formats a number unrounded for machine-readable output: in plain
// decimals, but a tiny one (a p-value of 1e-220) in exponent form, which
// spreadsheets and SQL engines read alike, not as 220 zeros.
func num(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	if x != 0 && math.Abs(x) < 1e-6 {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// halfWidthPct is the interval's half width as a percentage of the estimate.
func halfWidthPct(r ci.Result) string {
	if r.Estimate == 0 || !hasInterval(r) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*(r.Hi-r.Lo)/2/r.Estimate)
}

// human formats x in binary units for bytes, SI suffixes for counts.
func human(x float64, bytes bool) string { return units.Format(x, bytes) }
