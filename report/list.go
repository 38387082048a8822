package report

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/heapest/heapest/parse"
)

// Routine is one function's rows of a report by func whose frames were
// named by source line (parse.Options.Lines): what heapest list lays
// beside the function's source, as pprof's -list does.
type Routine struct {
	Func string
	// File is the source file of the lines, as the profile names it
	// ("" when it names none: JFR's).
	File string
	// Lines are the lines that have a row, ascending; Rows[i] is line
	// Lines[i]'s.
	Lines []int
	Rows  []Row
	// Flat is the sum of the lines' flat estimates: what the routines are
	// ordered by.
	Flat float64
}

// Routines gathers the rows of r (by func, named by line) of the
// functions whose name re matches into one Routine per function and
// file, largest Flat first (then by name and file). unlined lists the
// matching functions whose frames had no line (their input, or their
// binary, has none).
func Routines(r *Report, re *regexp.Regexp) (routines []Routine, unlined []string) {
	at := map[[2]string]int{}
	for _, row := range r.Rows {
		fn, file, line, ok := parse.SplitLineName(row.Key)
		if !re.MatchString(fn) {
			continue
		}
		if !ok {
			unlined = append(unlined, fn)
			continue
		}
		k := [2]string{fn, file}
		i, seen := at[k]
		if !seen {
			i = len(routines)
			at[k] = i
			routines = append(routines, Routine{Func: fn, File: file})
		}
		rt := &routines[i]
		rt.Lines = append(rt.Lines, int(line))
		rt.Rows = append(rt.Rows, row)
		rt.Flat += row.Flat.Estimate
	}
	for i := range routines {
		routines[i].sortLines()
	}
	slices.SortStableFunc(routines, func(a, b Routine) int {
		return cmp.Or(cmp.Compare(b.Flat, a.Flat), strings.Compare(a.Func, b.Func), strings.Compare(a.File, b.File))
	})
	slices.Sort(unlined)
	return routines, slices.Compact(unlined)
}

// sortLines orders the routine's lines, and their rows with them.
func (rt *Routine) sortLines() {
	order := make([]int, len(rt.Lines))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rt.Lines[a], rt.Lines[b]) })
	lines, rows := make([]int, len(order)), make([]Row, len(order))
	for j, o := range order {
		lines[j], rows[j] = rt.Lines[o], rt.Rows[o]
	}
	rt.Lines, rt.Rows = lines, rows
}
