package render

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// maxStackFrames is how many frames a --by stack row shows in a table.
const maxStackFrames = 6

// TableOptions shape the text table for where it is shown.
type TableOptions struct {
	// Width, when > 0, is the terminal's: columns are dropped, least
	// needed first, until the table fits (the key column is cut last).
	Width int
	// ASCII replaces the few non-ASCII characters (–, ±, ≤, ¹…) for a
	// terminal whose locale is not UTF-8.
	ASCII bool
}

// writeTable writes r as an aligned text table: a header naming the inputs,
// one line per row, the total, and footnotes for the caveats.
func writeTable(w io.Writer, r *report.Report) error { return WriteTable(w, r, TableOptions{}) }

// WriteTable is the table format, fitted to opt.
func WriteTable(w io.Writer, r *report.Report, opt TableOptions) error {
	// The header, the body and what follows it are written in turn: the
	// body of a large dump's --by stack --top 0 is hundreds of megabytes,
	// not to be copied into one buffer with the rest.
	var head, tail bytes.Buffer
	bw := &errWriter{w: &head}
	writeHeader(bw, r)
	l := newLayout(r)
	notes := &footnotes{}
	cols := l.table
	var body []byte
	keyMax := 0 // the key column's width limit once no column is left to drop
	for {
		b, err := tableBody(cols, l.tableTotal(r), r, notes, opt.ASCII, keyMax)
		if err != nil {
			return err
		}
		body = b
		over := maxLineWidth(b) - opt.Width
		if opt.Width <= 0 || over <= 0 {
			break
		}
		notes = &footnotes{}
		if narrower := dropColumn(cols); narrower != nil {
			cols = narrower
			continue
		}
		if keyMax > 0 {
			break // the keys are as short as they go: the terminal wraps
		}
		keyMax = max(maxKeyWidth(r)-over, 12)
	}
	bw = &errWriter{w: &tail}
	if r.Omitted > 0 {
		fmt.Fprintf(bw, "(%d more %s; --top 0 shows all)\n", r.Omitted, rowsWord(r.Omitted))
	}
	if len(cols) < len(l.table) {
		fmt.Fprintf(bw, "(%s left out to fit %d; --wide shows all)\n", columnsText(len(l.table)-len(cols)), opt.Width)
	}
	notes.write(bw, r.Notes)
	if bw.err != nil {
		return bw.err
	}
	// The body's cells were made ASCII already (tableBody).
	for _, part := range [][]byte{ascii(head.Bytes(), opt.ASCII), body, ascii(tail.Bytes(), opt.ASCII)} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// ascii is text with its non-ASCII characters replaced, when on.
func ascii(text []byte, on bool) []byte {
	if !on {
		return text
	}
	return []byte(asciiReplacer.Replace(string(text)))
}

// tableBody renders the rows and the total in the columns cols.
func tableBody(cols []column, tot report.Row, r *report.Report, notes *footnotes, ascii bool, keyMax int) ([]byte, error) {
	head := make([]string, len(cols))
	align := make([]tw.Align, len(cols))
	for i, col := range cols {
		head[i], align[i] = col.head, col.align
		if ascii {
			head[i] = asciiReplacer.Replace(head[i])
		}
	}
	rows := make([][]string, 0, len(r.Rows)+1)
	for _, row := range withTotal(r.Rows, &tot) {
		cells := tableCells(cols, &cell{row: row, notes: notes})
		if last := len(cells) - 1; keyMax > 0 && utf8.RuneCountInString(cells[last]) > keyMax {
			// The key is the last column: cut it, its end marked.
			cells[last] = string([]rune(cells[last])[:keyMax-1]) + "…"
		}
		if ascii {
			// Before the layout, so that the columns align.
			for i := range cells {
				cells[i] = asciiReplacer.Replace(cells[i])
			}
		}
		rows = append(rows, cells)
	}
	return gridLayout(head, rows, align)
}

// dropOrder is which table columns go first when the table is too wide:
// the cum interval, then the half width, the cum share, the flat share,
// the method; the estimates, the flat interval, the samples and the key
// stay.
var dropOrder = []func(i int, c column) bool{
	func(i int, c column) bool { return c.of == cumMeasure && c.head != "CUM" && c.head != "CUM%" },
	func(i int, c column) bool { return c.head == "±" },
	func(i int, c column) bool { return c.head == "CUM%" },
	func(i int, c column) bool { return c.head == "FLAT%" },
	func(i int, c column) bool { return c.head == "METHOD" },
}

// columnsText is "1 column" or "N columns".
func columnsText(n int) string { return strconv.Itoa(n) + " " + Noun(n, "column", "columns") }

// dropColumn returns cols without the first column dropOrder names, or
// nil when none is left to drop.
func dropColumn(cols []column) []column {
	for _, drop := range dropOrder {
		for i, c := range cols {
			if drop(i, c) {
				return append(append([]column{}, cols[:i]...), cols[i+1:]...)
			}
		}
	}
	return nil
}

// maxKeyWidth is the widest key the table shows, in characters.
func maxKeyWidth(r *report.Report) int {
	w := len("total")
	for _, row := range r.Rows {
		w = max(w, utf8.RuneCountInString(keyText(row, r.By)))
	}
	return w
}

// maxLineWidth is the widest line of b, in characters.
func maxLineWidth(b []byte) int {
	w := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		w = max(w, utf8.RuneCount(line))
	}
	return w
}

// asciiReplacer spells the table's non-ASCII characters in ASCII.
var asciiReplacer = strings.NewReplacer("–", "-", "±", "+/-", "≤", "<=", "−", "-", "×", "x", "…", "...",
	"¹", "[1]", "²", "[2]", "³", "[3]", "⁴", "[4]", "⁵", "[5]", "⁶", "[6]", "⁷", "[7]", "⁸", "[8]", "⁹", "[9]")

// tableCells formats one row, left to right.
func tableCells(cols []column, c *cell) []string {
	out := make([]string, len(cols))
	for i, col := range cols {
		out[i] = col.human(c)
	}
	return out
}

func writeHeader(w io.Writer, r *report.Report) {
	writeSources(w, r)
	writeValueLine(w, r)
}

// writeValueLine says what the rows are.
func writeValueLine(w io.Writer, r *report.Report) { writeValueLineBy(w, r, byText(r)) }

// byText says what a row is: --by, or with --lines the source line a
// row by func then is.
func byText(r *report.Report) string {
	switch {
	case r.Lines && r.By == aggregate.ByFunc:
		return "source line"
	case r.Lines:
		return r.By.String() + " (frames by source line)"
	}
	return r.By.String()
}

// writeValueLineBy is writeValueLine with the rows' kind in words, and
// any extra lines of the header after it.
func writeValueLineBy(w io.Writer, r *report.Report, by string, extra ...string) {
	fmt.Fprintf(w, "Value: %s, by %s, %g%% confidence intervals\n", r.Value, by, 100*r.Confidence)
	if r.Filters != nil {
		fmt.Fprintf(w, "Active filters: %s (percentages are of the unfiltered total, %s)\n", r.Filters, human(r.Unfiltered, r.Value.IsSpace()))
	}
	WriteHidden(w, r)
	for _, l := range extra {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
}

// WriteHidden writes the header line that says which frames --hide took
// out of the report's stacks, if any.
func WriteHidden(w io.Writer, r *report.Report) {
	if r.Hidden != "" {
		fmt.Fprintf(w, "Hidden frames: %s (their samples count at the frames that called them)\n", r.Hidden)
	}
}

// writeSources names the inputs (or what a merge was made of).
func writeSources(w io.Writer, r *report.Report) {
	if r.IsMerge() {
		writeMergeHeader(w, r)
	}
	for _, s := range r.Sources {
		if r.IsMerge() {
			break // --by source lists them
		}
		fmt.Fprintf(w, "File: %s (%s", Printable(s.Path), s.Format)
		if s.Rate > 0 {
			fmt.Fprintf(w, ", sampling period %s", human(s.Rate, true))
		}
		if s.Detail != "" {
			fmt.Fprintf(w, ", %s", Printable(s.Detail))
		}
		fmt.Fprintln(w, ")")
	}
}

// keyText is a row's key as the table, the diff table and the HTML page
// show it: a stack leaf first (report.StackText), where CSV and JSON key it
// root first (report.Row.Key) and JSON lists it leaf first too.
func keyText(row report.Row, by aggregate.By) string {
	if by == aggregate.BySize {
		// Sizes read as sizes, as every other byte count of the table.
		if z, err := strconv.ParseFloat(row.Key, 64); err == nil {
			return human(z, true)
		}
	}
	if by != aggregate.ByStack || len(row.Stack) == 0 {
		return row.Key
	}
	s := row.Stack
	more := ""
	if len(s) > maxStackFrames {
		s, more = s[:maxStackFrames], report.StackSep+"…"
	}
	return report.StackText(s) + more
}

func interval(r ci.Result, bytes bool) string {
	if !hasInterval(r) {
		return "-"
	}
	return human(r.Lo, bytes) + " – " + human(r.Hi, bytes)
}

// hasInterval reports whether r has an interval: not for method none (no
// honest one) nor "-" (nothing sampled).
func hasInterval(r ci.Result) bool { return r.Method != "-" && r.Method != "none" }

func share(x, total float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x/total)
}

// footnotes numbers distinct notes in order of first use.
type footnotes struct {
	texts []string
	index map[string]int
}

var superscripts = []string{"¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}

func (f *footnotes) marks(notes []string) string {
	if f.index == nil {
		f.index = map[string]int{}
	}
	var b strings.Builder
	for _, n := range notes {
		i, ok := f.index[n]
		if !ok {
			i = len(f.texts)
			f.index[n] = i
			f.texts = append(f.texts, n)
		}
		if i < len(superscripts) {
			b.WriteString(superscripts[i])
		} else {
			fmt.Fprintf(&b, "[%d]", i+1)
		}
	}
	return b.String()
}

func (f *footnotes) write(w io.Writer, global []string) {
	if len(f.texts) > 0 || len(global) > 0 {
		fmt.Fprintln(w)
	}
	for i, t := range f.texts {
		m := fmt.Sprintf("[%d]", i+1)
		if i < len(superscripts) {
			m = superscripts[i]
		}
		fmt.Fprintf(w, "%s %s\n", m, Printable(t))
	}
	for _, t := range global {
		fmt.Fprintf(w, "Note: %s\n", Printable(t))
	}
}

// errWriter keeps the first write error so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// trimTrailing drops the blanks tablewriter pads the last column with, so
// lines carry no trailing spaces.
func trimTrailing(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

// writeMergeHeader says what a merge was made of, and what it left out.
func writeMergeHeader(w io.Writer, r *report.Report) {
	m := r.Merged
	fmt.Fprintf(w, "Merged: %s (%s)", Plural(m.Inputs, "input"), formatCounts(m.Formats))
	switch {
	case m.RateMin > 0 && m.RateMin == m.RateMax:
		fmt.Fprintf(w, ", sampling period %s", human(m.RateMin, true))
	case m.RateMin > 0:
		fmt.Fprintf(w, ", sampling periods %s–%s", human(m.RateMin, true), human(m.RateMax, true))
	}
	if len(m.Builds) > 0 {
		fmt.Fprintf(w, ", %s", Plural(len(m.Builds), "build"))
	}
	fmt.Fprintf(w, ", %s\n", Plural(m.Processes, "process"))
	if m.Skipped > 0 {
		fmt.Fprintf(w, "Skipped: %s that could not be read\n", Plural(m.Skipped, "input"))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  %s\n", Printable(s.Err.Error()))
	}
}

// formatCounts lists the inputs per format, "jemalloc 990, pprof 8".
func formatCounts(f map[string]int) string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, f[n])
	}
	return strings.Join(parts, ", ")
}

// Plural is n counted things in words: "1 input", "3 inputs", "2 processes".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// rowsWord is "row" or "rows", for n of them.
func rowsWord(n int) string { return Noun(n, "row", "rows") }

// Noun is one or many, as n of them are.
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
