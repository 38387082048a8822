package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/heapest/heapest/report"
)

// listContext is how many source lines heapest list shows before a
// routine's first line with a row and after its last.
const listContext = 3

// WriteList writes routines, of report r (by func, named by line), as
// annotated source: per routine a line naming it and a table of its
// lines, each with the columns of r's table (flat and cum, with their
// intervals) and its source text, from listContext lines before its first
// row to as many after its last. Lines without a row show "." in the
// columns. source returns a file's lines (nil when it cannot be read:
// then only the lines with rows are shown, without text). more counts
// the routines left out (--top); the caveats are footnotes after the
// last routine. With opt.Width, columns are dropped as the table drops
// them until the lines fit, or none is left to drop.
func WriteList(w io.Writer, r *report.Report, routines []report.Routine, more int, source func(file string) []string, opt TableOptions) error {
	bw := &errWriter{w: w}
	writeSources(bw, r)
	writeValueLineBy(bw, r, "source line")
	l := newLayout(r)
	all := l.table[:len(l.table)-1] // the key is the routine's, said above its table
	srcs := make([][]string, len(routines))
	for i, rt := range routines {
		if rt.File != "" { // else no file to read: JFR's lines
			srcs[i] = source(rt.File)
		}
	}
	cols := all
	bodies, notes, err := routineBodies(cols, routines, srcs, opt.ASCII)
	for err == nil && opt.Width > 0 && maxWidth(bodies) > opt.Width {
		narrower := dropColumn(cols)
		if narrower == nil {
			break // the source lines are as wide as they are: the terminal wraps
		}
		cols = narrower
		bodies, notes, err = routineBodies(cols, routines, srcs, opt.ASCII)
	}
	if err != nil {
		return err
	}
	for i, rt := range routines {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		if rt.File == "" {
			fmt.Fprintf(bw, "ROUTINE %s\n", rt.Func)
		} else {
			fmt.Fprintf(bw, "ROUTINE %s in %s\n", rt.Func, rt.File)
		}
		bw.Write(bodies[i])
	}
	if more > 0 {
		fmt.Fprintf(bw, "(%d more %s; --top 0 lists all)\n", more, Noun(more, "function", "functions"))
	}
	if len(cols) < len(all) {
		fmt.Fprintf(bw, "(%s left out to fit %d; --wide shows all)\n", columnsText(len(all)-len(cols)), opt.Width)
	}
	notes.write(bw, r.Notes)
	return bw.err
}

// routineBodies lays out every routine's table in the columns cols.
func routineBodies(cols []column, routines []report.Routine, srcs [][]string, ascii bool) ([][]byte, *footnotes, error) {
	notes := &footnotes{}
	bodies := make([][]byte, len(routines))
	for i, rt := range routines {
		b, err := routineBody(cols, rt, srcs[i], notes, ascii)
		if err != nil {
			return nil, nil, err
		}
		bodies[i] = b
	}
	return bodies, notes, nil
}

// maxWidth is the widest line of the bodies.
func maxWidth(bodies [][]byte) int {
	w := 0
	for _, b := range bodies {
		w = max(w, maxLineWidth(b))
	}
	return w
}

// routineBody lays out one routine's table.
func routineBody(cols []column, rt report.Routine, src []string, notes *footnotes, ascii bool) ([]byte, error) {
	head := make([]string, 0, len(cols)+2)
	align := make([]tw.Align, 0, len(cols)+2)
	for _, col := range cols {
		head, align = append(head, col.head), append(align, col.align)
	}
	head, align = append(head, "LINE", "SOURCE"), append(align, tw.AlignRight, tw.AlignLeft)
	var rows [][]string
	add := func(line int, cells []string) {
		text := ""
		if line <= len(src) {
			text = src[line-1]
		}
		cells = append(cells, strconv.Itoa(line), text)
		if ascii {
			for i := range cells {
				cells[i] = asciiReplacer.Replace(cells[i])
			}
		}
		rows = append(rows, cells)
	}
	blank := make([]string, len(cols))
	for i := range blank {
		blank[i] = "."
	}
	next := 0 // the next of rt's lines with a row
	from, to := rt.Lines[0], rt.Lines[len(rt.Lines)-1]
	if src != nil {
		from, to = max(1, from-listContext), min(len(src), to+listContext)
	}
	for line := from; line <= to || next < len(rt.Lines); line++ {
		if next < len(rt.Lines) && rt.Lines[next] == line {
			add(line, tableCells(cols, &cell{row: &rt.Rows[next], notes: notes}))
			next++
			continue
		}
		if src == nil {
			line = rt.Lines[next] - 1 // no text to show between rows
			continue
		}
		if line <= to {
			add(line, append([]string(nil), blank...))
		}
	}
	if ascii {
		for i := range head {
			head[i] = asciiReplacer.Replace(head[i])
		}
	}
	return gridLayout(head, rows, align)
}

// jsonListing is heapest list's JSON: the routines, each line's row as a
// report's JSON row is, keyed by its line instead of its name.
type jsonListing struct {
	Confidence float64       `json:"confidence"`
	Value      string        `json:"value"`
	Unit       string        `json:"unit"`
	Sources    []jsonSource  `json:"sources"`
	Routines   []jsonRoutine `json:"routines"`
	Omitted    int           `json:"omitted,omitempty"`
	Notes      []string      `json:"notes,omitempty"`
	Hide       string        `json:"hide,omitempty"`
	Warnings   []string      `json:"warnings,omitempty"`
}

type jsonRoutine struct {
	Func string `json:"func"`
	// File is the source file as the profile names it ("" for none).
	File  string       `json:"file,omitempty"`
	Lines []jsonObject `json:"lines"`
}

// WriteListJSON writes routines, of report r, as JSON with every number
// unrounded: per routine its function, file and the lines with a row
// (flat, and cum as a nested object, as report's JSON rows have them).
// more counts the routines left out (--top).
func WriteListJSON(w io.Writer, r *report.Report, routines []report.Routine, more int) error {
	l := newLayout(r)
	out := jsonListing{Confidence: r.Confidence, Value: r.Value.String(), Unit: r.Value.Unit(), Sources: jsonSources(r),
		Routines: []jsonRoutine{}, Omitted: more, Notes: r.Notes, Hide: r.Hidden, Warnings: r.Warnings}
	for _, rt := range routines {
		jr := jsonRoutine{Func: rt.Func, File: rt.File}
		for i, line := range rt.Lines {
			obj := jsonObject{{"line", line}}
			for _, m := range jsonRow(l.machine, &rt.Rows[i]) {
				if m.key != "key" && m.key != "stack" { // the routine and the line say them
					obj = append(obj, m)
				}
			}
			jr.Lines = append(jr.Lines, obj)
		}
		out.Routines = append(out.Routines, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
