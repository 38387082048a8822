package render

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/gate"
	"github.com/heapest/heapest/report"
)

// Gates is heapest ci's outcome with the reports it rests on: New, the
// inputs gated, and Base, the baseline (nil without one).
type Gates struct {
	New, Base *report.Report
	Result    *gate.Result
}

// WriteGates renders the gates as a table, JSON, JUnit XML or markdown.
func WriteGates(w io.Writer, g *Gates, f Format) error {
	switch f {
	case Table:
		return writeGatesTable(w, g)
	case JSON:
		return writeGatesJSON(w, g)
	case JUnit:
		return writeGatesJUnit(w, g)
	case Markdown:
		return writeGatesMarkdown(w, g)
	}
	return fmt.Errorf("gates cannot be written as %s", f)
}

// WriteGatesError writes, as JUnit XML or markdown, that heapest ci
// could not judge its gates: err says why. A CI system reads the file
// --junit or --markdown names whatever the exit status, so a run that
// fails must not leave the last run's verdicts there.
func WriteGatesError(w io.Writer, f Format, err error) error {
	switch f {
	case JUnit:
		c := junitCase{Classname: "heapest.error", Name: "heapest ci",
			Error: &junitFailure{Message: err.Error(), Type: "error"}}
		suite := junitSuite{Name: "heapest ci", Tests: 1, Errors: 1, Cases: []junitCase{c}}
		return writeJUnit(w, junitSuites{Name: "heapest ci", Tests: 1, Errors: 1, Suites: []junitSuite{suite}})
	case Markdown:
		bw := &errWriter{w: w}
		// An indented code block: no fence the message could close.
		msg := "    " + strings.ReplaceAll(err.Error(), "\n", "\n    ")
		fmt.Fprintf(bw, "### ❌ heapest ci — error: no gate was judged\n\n%s\n", msg)
		return bw.err
	}
	return fmt.Errorf("gate errors cannot be written as %s", f)
}

// gateText is one gate in words, for every text format.
type gateText struct {
	verdict, name, observed, interval, limit, p string
}

func (g *Gates) bytes() bool { return g.New.Value.IsSpace() }

func (g *Gates) texts() []gateText {
	out := make([]gateText, len(g.Result.Gates))
	for i := range g.Result.Gates {
		out[i] = g.text(&g.Result.Gates[i])
	}
	return out
}

func (g *Gates) text(x *gate.Gate) gateText {
	t := gateText{verdict: string(x.Verdict), name: x.Name, p: pValue(x.PAdjusted)}
	r, b := x.Result, g.bytes()
	switch {
	case x.Kind == gate.KindBudget:
		t.observed, t.interval, t.limit = human(r.Estimate, b), interval(r, b), human(x.Limit, b)
		if r.Method == "-" {
			t.interval = "-"
		}
	default:
		t.observed = change(r.Estimate) + " (" + human(x.Base, b) + " → " + human(x.New, b) + ")"
		t.interval = "-"
		if x.Verdict != gate.NoInterval {
			t.interval = change(r.Lo) + " – " + change(r.Hi)
		}
		t.limit = g.changeLimit(x)
	}
	return t
}

// changeLimit is a baseline gate's limit: the threshold, and the minimum
// change when there is one.
func (g *Gates) changeLimit(x *gate.Gate) string {
	s := change(x.Limit)
	if m := g.Result.Options.MinChange; m > 0 {
		s += " and +" + human(m, g.bytes())
	}
	return s
}

// rowsText sums up the baseline's rows in words ("" without a baseline):
// how many grew by more than the limits, of how many tested. It is not a
// gate: the rows that failed are gates of their own.
func (g *Gates) rowsText() string {
	r := g.Result.Rows
	if r == nil {
		return ""
	}
	s := fmt.Sprintf("%d of %s grew significantly by more than %s",
		r.Failed, Plural(r.Tested, "row"), level(g.Result.Options.Threshold)+"%")
	if m := g.Result.Options.MinChange; m > 0 {
		s += " and " + human(m, g.bytes())
	}
	return s
}

// change writes a ratio as a relative change: 2.01 → "+101%".
func change(ratio float64) string {
	switch {
	case math.IsInf(ratio, 1):
		return "+inf"
	case ratio == 0:
		return "−100%"
	}
	c := 100 * (ratio - 1)
	sign := "+"
	if c < 0 {
		sign, c = "−", -c
	}
	switch {
	case c >= 100:
		return fmt.Sprintf("%s%.0f%%", sign, c)
	case c >= 10:
		return fmt.Sprintf("%s%.1f%%", sign, c)
	}
	return fmt.Sprintf("%s%.2f%%", sign, c)
}

// pValue writes a p-value for people: three digits, "<0.001" below.
func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// perProcessLines say what is per process: the baseline comparison of
// sides of different numbers of processes (perProcessLine), and budgets
// on the mean of several; every format says them.
func (g *Gates) perProcessLines() []string {
	var lines []string
	if g.Base != nil {
		if l := perProcessLine(g.Base, g.New); l != "" {
			lines = append(lines, l)
		}
	}
	n, sums := 0, false
	for _, x := range g.Result.Gates {
		n = max(n, x.Processes)
		sums = sums || x.Kind == gate.KindBudget && x.Processes <= 1
	}
	if n > 1 {
		l := fmt.Sprintf("Budgets: per process, on the mean of the %d processes", n)
		if sums {
			l += " (source= budgets: what the inputs they name hold together)"
		}
		lines = append(lines, l)
	}
	return lines
}

// summary is the one-line outcome.
func (g *Gates) summary() string {
	r := g.Result
	n := len(r.Gates)
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s: %d of %s failed", verdict, r.Failed, Plural(n, "gate"))
	if r.Inconclusive > 0 {
		s += fmt.Sprintf(", %d inconclusive", r.Inconclusive)
	}
	if r.Untested > 0 {
		s += fmt.Sprintf(", %d not tested for want of an interval", r.Untested)
	}
	return s
}

// correction says how the tests were corrected.
func (g *Gates) correction() string {
	r := g.Result
	side := (1 - r.Options.Confidence) / 2
	if !r.Options.Holm {
		return fmt.Sprintf("%s, each one-sided at %s%%, no correction", Plural(r.Tests, "test"), level(side))
	}
	return fmt.Sprintf("Holm over %s: the chance of any false failure is at most %s%%", Plural(r.Tests, "test"), level(side))
}

func writeGatesTable(w io.Writer, g *Gates) error {
	bw := &errWriter{w: w}
	writeSources(bw, g.New)
	if g.Base != nil {
		writeBaseline(bw, g.Base)
	}
	writeValueLineBy(bw, g.New, byText(g.New), g.perProcessLines()...)
	conf := fmt.Sprintf("%g%% CI", 100*g.New.Confidence)
	head := []string{"VERDICT", "GATE", "OBSERVED", conf, "LIMIT", "P (ADJ.)"}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	notes := &footnotes{}
	var rows [][]string
	for i, t := range g.texts() {
		v := t.verdict
		if v == string(gate.Fail) {
			v = "FAIL"
		}
		x := g.Result.Gates[i]
		if x.Verdict == gate.Inconclusive || x.Hint != "" && x.Kind == gate.KindBudget {
			v += notes.marks([]string{x.Name + ": " + x.Hint})
		}
		v += notes.marks(x.Result.Notes)
		rows = append(rows, []string{v, t.name, t.observed, t.interval, t.limit, t.p})
	}
	if err := writeGrid(bw, head, rows, align); err != nil {
		return err
	}
	if t := g.rowsText(); t != "" {
		fmt.Fprintf(bw, "\nBaseline rows: %s\n", t)
	}
	notes.write(bw, nil)
	fmt.Fprintf(bw, "\n%s (%s)\n", g.summary(), g.correction())
	return bw.err
}

// writeBaseline names the baseline's inputs under the header.
func writeBaseline(w io.Writer, r *report.Report) {
	if r.IsMerge() {
		fmt.Fprintf(w, "Baseline: %s\n", mergeSummary(r))
		return
	}
	for _, s := range r.Sources {
		fmt.Fprintf(w, "Baseline: %s (%s)\n", s.Path, s.Format)
	}
}

// mergeSummary is a merge's inputs in a few words.
func mergeSummary(r *report.Report) string {
	m := r.Merged
	return fmt.Sprintf("%d inputs (%s)", m.Inputs, formatCounts(m.Formats))
}

// jsonHead is what gates and diffs say first in JSON: what was compared,
// and how many tests were corrected how.
type jsonHead struct {
	Confidence float64 `json:"confidence"`
	Value      string  `json:"value"`
	Unit       string  `json:"unit"`
	By         string  `json:"by"`
	Correction string  `json:"correction"`
	Tests      int     `json:"tests"`
}

func newJSONHead(r *report.Report, correction string, tests int) jsonHead {
	return jsonHead{Confidence: r.Confidence, Value: r.Value.String(), Unit: r.Value.Unit(), By: r.By.String(),
		Correction: correction, Tests: tests}
}

// jsonGates is the JSON shape of heapest ci's gates.
type jsonGates struct {
	jsonHead
	Passed       bool     `json:"passed"`
	Failed       int      `json:"failed"`
	Inconclusive int      `json:"inconclusive"`
	Untested     int      `json:"untested"`
	Sources      []string `json:"sources"`
	Baseline     []string `json:"baseline,omitempty"`
	// PerProcess marks a baseline compared per process (compare.PerProcess).
	PerProcess bool       `json:"per_process,omitempty"`
	Gates      []jsonGate `json:"gates"`
	// BaselineRows sums up the baseline's rows; it is not a gate.
	BaselineRows *jsonRows `json:"baseline_rows,omitempty"`
	Warnings     []string  `json:"warnings,omitempty"`
}

type jsonRows struct {
	Tested int    `json:"tested"`
	Failed int    `json:"failed"`
	Text   string `json:"text"`
}

type jsonGate struct {
	Name  string   `json:"name"`
	Kind  string   `json:"kind"`
	Key   string   `json:"key"`
	Stack []string `json:"stack,omitempty"`
	// Total marks a gate on the whole profile's total: its key is not a
	// row's (empty for the baseline's total).
	Total     bool     `json:"total,omitempty"`
	Limit     *float64 `json:"limit"`
	Estimate  *float64 `json:"estimate"`
	Lo        *float64 `json:"lo"`
	Hi        *float64 `json:"hi"`
	Method    string   `json:"method,omitempty"`
	Base      *float64 `json:"base,omitempty"`
	New       *float64 `json:"new,omitempty"`
	Diff      *float64 `json:"diff,omitempty"`
	DiffLo    *float64 `json:"diff_lo,omitempty"`
	DiffHi    *float64 `json:"diff_hi,omitempty"`
	P         *float64 `json:"p"`
	PAdjusted *float64 `json:"p_adjusted"`
	Verdict   string   `json:"verdict"`
	Hint      string   `json:"hint,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// Processes is how many processes a budget's values are the mean of
	// (absent: one's).
	Processes int `json:"processes,omitempty"`
}

func writeGatesJSON(w io.Writer, g *Gates) error {
	r := g.Result
	corr := "none"
	if r.Options.Holm {
		corr = "holm"
	}
	out := jsonGates{jsonHead: newJSONHead(g.New, corr, r.Tests), Passed: r.Passed(), Failed: r.Failed,
		Inconclusive: r.Inconclusive, Untested: r.Untested, Sources: sourcePaths(g.New), Gates: []jsonGate{},
		Warnings: warningsOf(g.New, g.Base)}
	if g.Base != nil {
		out.Baseline = sourcePaths(g.Base)
		out.PerProcess = compare.PerProcess(g.Base, g.New)
	}
	if r.Rows != nil {
		out.BaselineRows = &jsonRows{Tested: r.Rows.Tested, Failed: r.Rows.Failed, Text: g.rowsText()}
	}
	for _, x := range r.Gates {
		j := jsonGate{Name: x.Name, Kind: string(x.Kind), Key: x.Key, Stack: x.Stack, Total: x.Total, Limit: nullable(x.Limit),
			P: nullable(x.P), PAdjusted: nullable(x.PAdjusted), Verdict: string(x.Verdict), Hint: x.Hint, Notes: x.Result.Notes}
		if x.Processes > 1 {
			j.Processes = x.Processes
		}
		if x.Result.Method != "-" {
			j.Estimate, j.Method = nullable(x.Result.Estimate), x.Result.Method
			if x.Verdict != gate.NoInterval {
				j.Lo, j.Hi = nullable(x.Result.Lo), nullable(x.Result.Hi)
			}
		}
		if x.Kind == gate.KindBaseline {
			j.Base, j.New, j.Diff = nullable(x.Base), nullable(x.New), nullable(x.Diff)
			if x.Verdict != gate.NoInterval {
				j.DiffLo, j.DiffHi = nullable(x.DiffLo), nullable(x.DiffHi)
			}
		}
		out.Gates = append(out.Gates, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// warningsOf joins the warnings of reports (nil ones skipped), each once:
// the two sides of a comparison often say the same of their inputs.
func warningsOf(reports ...*report.Report) []string {
	var out []string
	said := map[string]bool{}
	for _, r := range reports {
		if r == nil {
			continue
		}
		for _, w := range r.Warnings {
			if !said[w] {
				said[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// sourcePaths lists a report's inputs.
func sourcePaths(r *report.Report) []string {
	out := make([]string, len(r.Sources))
	for i, s := range r.Sources {
		out[i] = s.Path
	}
	return out
}

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub
// test reporters): one testsuite, one testcase per gate, a failure
// element for each failed gate, skipped for gates that are not tests.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	// SystemOut sums up the baseline's rows, which is not a test case.
	SystemOut string `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure"`
	Error     *junitFailure `xml:"error"`
	Skipped   *junitFailure `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func writeGatesJUnit(w io.Writer, g *Gates) error {
	suite := junitSuite{Name: fmt.Sprintf("heapest ci: %s by %s", g.New.Value, g.New.By),
		Properties: []junitProperty{
			{"confidence", fmt.Sprint(g.New.Confidence)},
			{"correction", g.correction()},
			{"inputs", strings.Join(sourcePaths(g.New), " ")},
		}}
	for _, l := range g.perProcessLines() {
		suite.Properties = append(suite.Properties, junitProperty{"per_process", l})
	}
	for i, t := range g.texts() {
		x := g.Result.Gates[i]
		c := junitCase{Classname: "heapest." + string(x.Kind), Name: x.Name}
		detail := junitDetail(t, g.New.Confidence)
		switch x.Verdict {
		case gate.Fail:
			c.Failure = &junitFailure{Message: x.Name + " failed: " + detail, Type: string(x.Kind), Text: x.Hint}
			suite.Failures++
		case gate.NoInterval:
			c.Skipped = &junitFailure{Message: "no interval: the sampling gives no honest error bound here"}
			suite.Skipped++
		default:
			c.SystemOut = strings.TrimSpace(string(x.Verdict) + ": " + detail + "\n" + x.Hint)
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	if t := g.rowsText(); t != "" {
		suite.SystemOut = "baseline rows: " + t
	}
	return writeJUnit(w, junitSuites{Name: "heapest ci", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}})
}

// writeJUnit writes out as an XML document.
func writeJUnit(w io.Writer, out junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitDetail is a gate's line in words, without the parts it has not
// (a budget no sample fell in has no interval).
func junitDetail(t gateText, confidence float64) string {
	parts := []string{"observed " + t.observed}
	if t.interval != "" && t.interval != "-" {
		parts = append(parts, fmt.Sprintf("%g%% interval %s", 100*confidence, t.interval))
	}
	parts = append(parts, "limit "+t.limit)
	if t.p != "" && t.p != "-" {
		parts = append(parts, "p (adjusted) "+t.p)
	}
	return strings.Join(parts, ", ")
}

func writeGatesMarkdown(w io.Writer, g *Gates) error {
	bw := &errWriter{w: w}
	icon := "✅"
	if !g.Result.Passed() {
		icon = "❌"
	}
	fmt.Fprintf(bw, "### %s heapest ci — %s\n\n", icon, g.summary())
	fmt.Fprintf(bw, "%s by %s of %s; %g%% intervals; %s.\n\n", g.New.Value, g.New.By, inputsText(g.New), 100*g.New.Confidence, g.correction())
	if g.Base != nil {
		fmt.Fprintf(bw, "Baseline: %s.\n\n", inputsText(g.Base))
	}
	for _, l := range g.perProcessLines() {
		fmt.Fprintf(bw, "%s.\n\n", l)
	}
	fmt.Fprintf(bw, "| verdict | gate | observed | %g%% interval | limit | p (adjusted) |\n", 100*g.New.Confidence)
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|")
	var hints []string
	for i, t := range g.texts() {
		x := g.Result.Gates[i]
		fmt.Fprintf(bw, "| %s | `%s` | %s | %s | %s | %s |\n", verdictIcon(x.Verdict), mdCode(t.name), t.observed, t.interval, t.limit, t.p)
		if x.Verdict == gate.Inconclusive {
			hints = append(hints, fmt.Sprintf("> ⚠️ `%s`: %s", mdCode(x.Name), x.Hint))
		}
	}
	if t := g.rowsText(); t != "" {
		fmt.Fprintf(bw, "\nBaseline rows: %s.\n", t)
	}
	if len(hints) > 0 {
		fmt.Fprintf(bw, "\n%s\n", strings.Join(hints, "\n>\n"))
	}
	return bw.err
}

func verdictIcon(v gate.Verdict) string {
	switch v {
	case gate.Fail:
		return "❌ fail"
	case gate.Inconclusive:
		return "⚠️ inconclusive"
	case gate.NoInterval:
		return "➖ no interval"
	}
	return "✅ pass"
}

// mdCode keeps a gate's text from closing its code span or a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(s)
}

// inputsText names a report's inputs in a sentence.
func inputsText(r *report.Report) string {
	if r.IsMerge() {
		return mergeSummary(r)
	}
	return strings.Join(sourcePaths(r), ", ")
}
