package render

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/heapest/heapest/ci"
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
	case Pprof:
		return fmt.Errorf("pprof output is per stack: write it with WritePprof from report.Builder.Stacks")
	}
	return fmt.Errorf("unknown format %q", f)
}

// num formats a number unrounded for machine-readable output.
func num(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// halfWidthPct is the interval's half width as a percentage of the estimate.
func halfWidthPct(r ci.Result) string {
	if r.Estimate == 0 || r.Method == "-" || r.Method == "none" {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*(r.Hi-r.Lo)/2/r.Estimate)
}

// human formats x in binary units for bytes, SI suffixes for counts.
func human(x float64, bytes bool) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	if bytes {
		units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
		i := 0
		for math.Abs(x) >= 1024 && i < len(units)-1 {
			x /= 1024
			i++
		}
		if i == 0 {
			return fmt.Sprintf("%.0f%s", x, units[0])
		}
		return sig3(x) + units[i]
	}
	units := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for math.Abs(x) >= 1000 && i < len(units)-1 {
		x /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f", x)
	}
	return sig3(x) + units[i]
}

// sig3 prints x with three significant digits.
func sig3(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}
