package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/report"
)

// WriteDiff renders heapest diff's table as a table, CSV, JSON or an SVG
// chart.
func WriteDiff(w io.Writer, d *compare.Diff, f Format) error {
	switch f {
	case Table:
		return writeDiffTable(w, d)
	case CSV:
		return writeDiffCSV(w, d)
	case JSON:
		return writeDiffJSON(w, d)
	case SVG:
		return WriteDiffSVG(w, d)
	}
	return fmt.Errorf("a diff cannot be written as %s", f)
}

// changeText is a row's change for people: "~" where it is not
// significant (benchstat's mark), "new" and "gone" for rows on one side.
func changeText(r *compare.Row) string {
	switch {
	case !r.Tested:
		return "-"
	case !r.Significant:
		return "~"
	case r.Base.N == 0:
		return "new"
	case r.New.N == 0:
		return "gone"
	}
	return change(r.Ratio)
}

// deltaText is NEW − BASE with its sign; one that rounds to zero (the
// float error of two means) is +0, not −0.
func deltaText(x float64, bytes bool) string {
	h := human(math.Abs(x), bytes)
	if x >= 0 || h == human(0, bytes) {
		return "+" + h
	}
	return "−" + h
}

// diffSummary says how many rows changed and how the listing was
// corrected.
func diffSummary(d *compare.Diff) string {
	return fmt.Sprintf("%d of %d rows changed (Benjamini–Hochberg, false discovery rate %s%%); row intervals at %s%% (false-coverage-rate adjusted)",
		d.Discoveries, d.Tests, level(1-d.Confidence), level(d.Level))
}

// DiffGate is heapest diff --fail-on's verdict: whether a row changed in
// direction dir, of how many tested, and how they were judged.
func DiffGate(d *compare.Diff, dir compare.Direction) string {
	past := map[compare.Direction]string{compare.Increase: "increased", compare.Decrease: "decreased", compare.Change: "changed"}[dir]
	how := fmt.Sprintf("(Benjamini–Hochberg, false discovery rate %s%%)", level(1-d.Confidence))
	if n := d.Changed(dir); n > 0 {
		return fmt.Sprintf("FAIL: %d of %d rows %s significantly %s", n, d.Tests, past, how)
	}
	return fmt.Sprintf("PASS: none of %d rows %s significantly %s", d.Tests, past, how)
}

// level writes a confidence level as a percentage with the digits it needs.
func level(l float64) string {
	if l > 0.9 && l < 1 {
		// A level near 1 is said by what it leaves out, to two digits
		// rounded up, so that it is never overstated: an adjusted
		// 0.9976190 is 99.76%, 0.9875 is 98.7%, and 0.999975 stays
		// 99.9975%.
		a := 1 - l
		e := math.Pow(10, math.Floor(math.Log10(a))-1)
		l = 1 - math.Ceil(a/e-1e-9)*e
	}
	return strconv.FormatFloat(math.Round(l*1e6)/1e4, 'f', -1, 64)
}

// perProcessLine says, for sides of different numbers of processes,
// that they are compared per process (compare.PerProcess); "" otherwise.
func perProcessLine(base, new *report.Report) string {
	if !compare.PerProcess(base, new) {
		return ""
	}
	return fmt.Sprintf("Per process: BASE holds %s and NEW %s, so each side is the mean of its processes", Plural(base.Processes(), "process"), Plural(new.Processes(), "process"))
}

func writeDiffTable(w io.Writer, d *compare.Diff) error {
	bw := &errWriter{w: w}
	b := d.New.Value.IsSpace()
	writeSideHeader(bw, "Base", d.Base)
	writeSideHeader(bw, "New", d.New)
	fmt.Fprintf(bw, "Value: %s, by %s; %s\n", d.New.Value, d.New.By, diffSummary(d))
	if l := perProcessLine(d.Base, d.New); l != "" {
		fmt.Fprintln(bw, l)
	}
	if d.New.Filters != nil {
		fmt.Fprintf(bw, "Active filters: %s\n", d.New.Filters)
	}
	WriteHidden(bw, d.New)
	fmt.Fprintln(bw)
	head := []string{"BASE", "NEW", "DELTA", "CHANGE", level(d.Level) + "% CI", "P", keyHead(d.New.By)}
	align := []tw.Align{tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	var rows [][]string
	for i, r := range withTotal(d.Rows, &d.Total) {
		ci := "-"
		if r.Tested {
			ci = change(r.Lo) + " – " + change(r.Hi)
		}
		key := "total" // the total's row, last, has no key of its own
		if i < len(d.Rows) {
			key = keyText(report.Row{Key: r.Key, Stack: r.Stack}, d.New.By)
		}
		rows = append(rows, []string{human(r.Base.Estimate, b), human(r.New.Estimate, b), deltaText(r.Diff, b),
			changeText(r), ci, pValue(r.P), key})
	}
	if err := writeGrid(bw, head, rows, align); err != nil {
		return err
	}
	if d.Omitted > 0 {
		fmt.Fprintf(bw, "(%d more %s; --top 0 shows all)\n", d.Omitted, rowsWord(d.Omitted))
	}
	fmt.Fprintf(bw, "\n~ no significant change; CI is the change's interval; the total's is at %g%%, and it is not one of the rows tested\n", 100*d.Confidence)
	return bw.err
}

// keyHead is the key column's header.
func keyHead(by aggregate.By) string {
	switch by {
	case aggregate.ByFunc, aggregate.ByLeaf:
		return "FUNC"
	}
	return strings.ToUpper(by.String())
}

// writeSideHeader names one side's inputs.
func writeSideHeader(w io.Writer, side string, r *report.Report) {
	if r.IsMerge() {
		fmt.Fprintf(w, "%s: %s\n", side, mergeSummary(r))
		return
	}
	for _, s := range r.Sources {
		fmt.Fprintf(w, "%s: %s (%s", side, s.Path, s.Format)
		if s.Rate > 0 {
			fmt.Fprintf(w, ", sampling period %s", human(s.Rate, true))
		}
		fmt.Fprintln(w, ")")
	}
}

// diffColumns are the machine columns of a row, for CSV and JSON alike.
// CSV starts each line with its part ("group" or "total"), as report's
// CSV does; JSON has the total as an object of its own, with no key.
var diffColumns = []string{"key", "base", "new", "diff", "diff_lo", "diff_hi", "ratio", "lo", "hi", "p", "q", "significant"}

// machine is one row's values for CSV and JSON: nil where no test was
// made; an infinite ratio or end stays infinite (CSV writes inf, JSON the
// largest float64, as report's outputs do), told apart from no test.
// The total is tested alone, not in the Benjamini–Hochberg family, so it
// has no q.
func machine(r *compare.Row, total bool) []any {
	var lo, hi, dlo, dhi, p, q any
	if r.Tested {
		lo, hi, dlo, dhi, p = r.Lo, r.Hi, r.DiffLo, r.DiffHi, r.P
		if !total {
			q = r.Q
		}
	}
	return []any{r.Key, r.Base.Estimate, r.New.Estimate, r.Diff, dlo, dhi, r.Ratio, lo, hi, p, q, r.Significant}
}

func writeDiffCSV(w io.Writer, d *compare.Diff) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"part"}, diffColumns...)); err != nil {
		return err
	}
	for i, r := range withTotal(d.Rows, &d.Total) {
		total := i == len(d.Rows)
		vals := machine(r, total)
		rec := make([]string, 1, 1+len(vals))
		rec[0] = partGroup
		if total {
			rec[0] = partTotal
		}
		for _, v := range vals {
			rec = append(rec, csvValue(v))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		return num(x)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// jsonDiff is heapest diff's JSON shape.
type jsonDiff struct {
	jsonHead
	Discoveries int              `json:"discoveries"`
	Level       float64          `json:"level"`
	Base        []string         `json:"base"`
	New         []string         `json:"new"`
	Rows        []map[string]any `json:"rows"`
	Total       map[string]any   `json:"total"`
	Omitted     int              `json:"omitted,omitempty"`
	Warnings    []string         `json:"warnings,omitempty"`
	// PerProcess marks sides of different numbers of processes, each
	// then the mean of its own (compare.PerProcess).
	PerProcess bool `json:"per_process,omitempty"`
}

func jsonDiffRow(r *compare.Row, total bool) map[string]any {
	m := map[string]any{}
	for i, v := range machine(r, total) {
		if x, ok := v.(float64); ok {
			v = nullable(x)
		}
		m[diffColumns[i]] = v
	}
	if total {
		delete(m, "key") // the total is an object of its own
	}
	if len(r.Stack) > 0 {
		m["stack"] = r.Stack
	}
	return m
}

func writeDiffJSON(w io.Writer, d *compare.Diff) error {
	out := jsonDiff{jsonHead: newJSONHead(d.New, "benjamini-hochberg", d.Tests), Discoveries: d.Discoveries, Level: d.Level,
		Base: sourcePaths(d.Base), New: sourcePaths(d.New), Rows: []map[string]any{}, Total: jsonDiffRow(&d.Total, true), Omitted: d.Omitted,
		Warnings: warningsOf(d.New, d.Base), PerProcess: compare.PerProcess(d.Base, d.New)}
	for i := range d.Rows {
		out.Rows = append(out.Rows, jsonDiffRow(&d.Rows[i], false))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
