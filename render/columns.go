package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// A column is one field of a report's rows: its header in the text table,
// its name in CSV and JSON, and how its cell reads for people (human) and
// for programs (machine text in CSV, a value in JSON). Which columns a
// report has is decided once, by newLayout; the renderers only walk the
// lists, so the table, CSV and JSON cannot disagree about it.
type column struct {
	// head is the table header.
	head string
	// name is the CSV header and the JSON key; a column of the cum measure
	// is "cum_"+name in CSV and name inside the JSON "cum" object.
	name string
	// of is the measure the column shows; nil for the row's key and stack.
	of *measure
	// align places the cell in the table.
	align tw.Align
	// jsonOnly columns are left out of CSV, whose rows are flat records.
	jsonOnly bool
	human    func(c *cell) string
	machine  func(c *cell) string
	// json gives the cell's JSON value; false leaves the key out.
	json func(c *cell) (any, bool)
}

// A cell is what a column's formatters see: one row, and for the table
// the footnotes that method cells are numbered against.
type cell struct {
	row   *report.Row
	notes *footnotes
	// total says the row is the report's total, which has no key.
	total bool
}

// A measure is one estimate a row carries: the group's own (flat) or, for
// --by func, that of every stack through the function (cum).
type measure struct {
	// group is "" for flat; for cum it prefixes CSV names and names the
	// nested JSON object.
	group string
	get   func(row *report.Row) (ci.Result, ci.Stats, bool)
}

var (
	flatMeasure = &measure{get: func(row *report.Row) (ci.Result, ci.Stats, bool) {
		return row.Flat, row.Stats, true
	}}
	cumMeasure = &measure{group: "cum", get: func(row *report.Row) (ci.Result, ci.Stats, bool) {
		switch {
		case row.Cum == nil:
			return ci.Result{Method: "-"}, ci.Stats{}, false
		case row.CumStats == nil: // the table's total (tableTotal)
			return *row.Cum, ci.Stats{}, true
		}
		return *row.Cum, *row.CumStats, true
	}}
)

// layout is the column model of one report.
type layout struct {
	// table is the text table's columns, left to right; machine is CSV's
	// columns and JSON's keys, in order. They differ in order and in
	// content (the table joins lo and hi into one interval, JSON nests
	// cum), not in where a value comes from or how it is formatted.
	table, machine []column
	// cum is set when rows carry a cum measure (--by func): the one place
	// that decides it.
	cum bool
}

// newLayout builds the columns of r.
func newLayout(r *report.Report) *layout {
	l := &layout{cum: r.By == aggregate.ByFunc}
	f := formatters{bytes: r.Value.IsSpace(), total: r.Total.Flat.Estimate, by: r.By}
	if r.Filters != nil {
		f.total = r.Unfiltered // percentages of everything, as pprof's
	}
	ciHead := fmt.Sprintf("%g%% CI", 100*r.Confidence)

	l.table = []column{
		f.estimate(flatMeasure, "FLAT"), f.share(flatMeasure, "FLAT%"), f.interval(flatMeasure, ciHead), f.halfWidth(flatMeasure),
	}
	if l.cum {
		l.table = append(l.table, f.estimate(cumMeasure, "CUM"), f.share(cumMeasure, "CUM%"), f.interval(cumMeasure, ciHead))
	}
	l.table = append(l.table, f.samples(flatMeasure), f.method(flatMeasure), f.key(strings.ToUpper(r.By.String())))

	// One order serves CSV and JSON: CSV ends with the notes, and JSON
	// writes a nested measure's object after the row's own keys (jsonRow).
	// CSV starts with the part, which tells its total line from the rows;
	// JSON has the total as an object of its own.
	l.machine = []column{part(), f.key(""), f.stack(),
		f.estimate(flatMeasure, ""), f.lo(flatMeasure), f.hi(flatMeasure), f.samples(flatMeasure), f.samplesBound(flatMeasure), f.method(flatMeasure)}
	if l.cum {
		l.machine = append(l.machine, f.estimate(cumMeasure, ""), f.lo(cumMeasure), f.hi(cumMeasure),
			jsonOnly(f.samples(cumMeasure)), jsonOnly(f.samplesBound(cumMeasure)), f.method(cumMeasure),
			jsonOnly(f.notes(cumMeasure)), f.offset(cumMeasure))
	}
	l.machine = append(l.machine, f.notes(flatMeasure), f.offset(flatMeasure))
	return l
}

// tableTotal is the total row as the table draws it: where rows have a
// cum, the total's cum is the total itself. (CSV leaves the total's cum
// cells empty and JSON's total has no cum: they print what the report
// holds.)
func (l *layout) tableTotal(r *report.Report) report.Row {
	tot := r.Total
	tot.Key = "total"
	if l.cum {
		c := tot.Flat
		tot.Cum = &c
	}
	return tot
}

func jsonOnly(c column) column {
	c.jsonOnly = true
	return c
}

// formatters make the columns; they hold what every cell of a report
// shares.
type formatters struct {
	bytes bool    // the value counts bytes (binary units in the table)
	total float64 // the total estimate, for shares
	by    aggregate.By
}

// CSV parts: a line is one of the rows, or the total. The total's key is
// empty, so that no key (a function may be named "total") stands for both.
const (
	partGroup = "group"
	partTotal = "total"
)

// part is CSV's first column: "group" for a row, "total" for the total
// line, what a consumer filters on (as on Parquet rows' part). JSON needs
// none: its total is an object of its own.
func part() column {
	return column{name: "part",
		machine: func(c *cell) string {
			if c.total {
				return partTotal
			}
			return partGroup
		},
		json: func(*cell) (any, bool) { return nil, false },
	}
}

// key is the key column. A --by stack row of a report built without keys
// (report.Options.KeylessStacks) gets its key as it is written.
func (f formatters) key(head string) column {
	return column{head: head, name: "key", align: tw.AlignLeft,
		human:   func(c *cell) string { return keyText(*c.row, f.by) },
		machine: func(c *cell) string { return aggregate.KeyOf(c.row.Key, c.row.Stack) },
		json:    func(c *cell) (any, bool) { return aggregate.KeyOf(c.row.Key, c.row.Stack), true },
	}
}

func (f formatters) stack() column {
	return column{name: "stack", jsonOnly: true,
		json: func(c *cell) (any, bool) { return c.row.Stack, len(c.row.Stack) > 0 },
	}
}

// result makes a column of one number of a measure's result. Absent
// measures (the total's cum) have empty machine cells and no JSON key.
func (f formatters) result(m *measure, head, name string, x func(ci.Result) float64) column {
	return column{head: head, name: name, of: m, align: tw.AlignRight,
		human: func(c *cell) string {
			r, _, _ := m.get(c.row)
			return human(x(r), f.bytes)
		},
		machine: func(c *cell) string {
			r, _, ok := m.get(c.row)
			if !ok {
				return ""
			}
			return num(x(r))
		},
		json: func(c *cell) (any, bool) {
			r, _, ok := m.get(c.row)
			return finite(x(r)), ok
		},
	}
}

func (f formatters) estimate(m *measure, head string) column {
	return f.result(m, head, "estimate", func(r ci.Result) float64 { return r.Estimate })
}

func (f formatters) lo(m *measure) column {
	return f.bound(m, "lo", func(r ci.Result) float64 { return r.Lo })
}

func (f formatters) hi(m *measure) column {
	return f.bound(m, "hi", func(r ci.Result) float64 { return r.Hi })
}

// bound is a column of an interval's end: empty (null in JSON) where the
// row has no interval (method none, or nothing sampled), which a number
// equal to the estimate would make look exact.
func (f formatters) bound(m *measure, name string, x func(ci.Result) float64) column {
	c := f.result(m, "", name, x)
	machine, json := c.machine, c.json
	c.machine = func(cl *cell) string {
		if r, _, ok := m.get(cl.row); ok && !hasInterval(r) {
			return ""
		}
		return machine(cl)
	}
	c.json = func(cl *cell) (any, bool) {
		if r, _, ok := m.get(cl.row); ok && !hasInterval(r) {
			return nil, true
		}
		return json(cl)
	}
	return c
}

// share is the estimate as a percentage of the total (table only).
func (f formatters) share(m *measure, head string) column {
	return column{head: head, of: m, align: tw.AlignRight, human: func(c *cell) string {
		r, _, _ := m.get(c.row)
		return share(r.Estimate, f.total)
	}}
}

// interval is "lo – hi" in the table; machine output has lo and hi.
func (f formatters) interval(m *measure, head string) column {
	return column{head: head, of: m, align: tw.AlignRight, human: func(c *cell) string {
		r, _, _ := m.get(c.row)
		return interval(r, f.bytes)
	}}
}

// halfWidth is the interval's half width relative to the estimate (table
// only).
func (f formatters) halfWidth(m *measure) column {
	return column{head: "±", of: m, align: tw.AlignRight, human: func(c *cell) string {
		r, _, _ := m.get(c.row)
		return halfWidthPct(r)
	}}
}

// SamplesText is a row's sample count as tables show it: three
// significant digits (a count recovered from rescaled values need not be
// whole), "≤" before it when it is an upper bound.
func SamplesText(samples float64, bound bool) string {
	if bound {
		return "≤" + human(samples, false)
	}
	return human(samples, false)
}

func (f formatters) samples(m *measure) column {
	col := f.result(m, "SAMPLES", "samples", func(r ci.Result) float64 { return r.Samples })
	col.human = func(c *cell) string {
		r, s, _ := m.get(c.row)
		return SamplesText(r.Samples, s.SamplesBound)
	}
	col.json = func(c *cell) (any, bool) {
		r, _, ok := m.get(c.row)
		return r.Samples, ok
	}
	return col
}

func (f formatters) samplesBound(m *measure) column {
	return column{name: "samples_bound", of: m,
		machine: func(c *cell) string {
			_, s, _ := m.get(c.row)
			return strconv.FormatBool(s.SamplesBound)
		},
		json: func(c *cell) (any, bool) {
			_, s, ok := m.get(c.row)
			return true, ok && s.SamplesBound
		},
	}
}

// method names the interval method; in the table it carries the marks of
// the result's footnotes.
func (f formatters) method(m *measure) column {
	return column{head: "METHOD", name: "method", of: m, align: tw.AlignRight,
		human: func(c *cell) string {
			r, _, _ := m.get(c.row)
			return r.Method + c.notes.marks(r.Notes)
		},
		machine: func(c *cell) string {
			r, _, ok := m.get(c.row)
			if !ok {
				return ""
			}
			return r.Method
		},
		json: func(c *cell) (any, bool) {
			r, _, ok := m.get(c.row)
			return r.Method, ok
		},
	}
}

func (f formatters) notes(m *measure) column {
	return column{name: "notes", of: m,
		machine: func(c *cell) string {
			r, _, _ := m.get(c.row)
			return strings.Join(r.Notes, "; ")
		},
		json: func(c *cell) (any, bool) {
			r, _, ok := m.get(c.row)
			return r.Notes, ok && len(r.Notes) > 0
		},
	}
}

// offset is .NET Approach 2's u, present for trace rows, so that heapest
// ci --samples S --offset-bytes U --open-end reproduces the row (JSON
// only).
func (f formatters) offset(m *measure) column {
	return column{name: "offset_bytes", of: m, jsonOnly: true,
		json: func(c *cell) (any, bool) {
			_, s, ok := m.get(c.row)
			return s.Offset, ok && s.HasOffset
		},
	}
}
