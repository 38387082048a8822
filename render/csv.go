package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/heapest/heapest/report"
)

// WriteCSV writes one line per row plus a final "total" line, every number
// unrounded. Notes are joined with "; " in the last column.
func WriteCSV(w io.Writer, r *report.Report) error {
	cw := csv.NewWriter(w)
	head := []string{"key", "estimate", "lo", "hi", "samples", "samples_bound", "method"}
	withCum := len(r.Rows) > 0 && r.Rows[0].Cum != nil
	if withCum {
		head = append(head, "cum_estimate", "cum_lo", "cum_hi", "cum_method")
	}
	head = append(head, "notes")
	if err := cw.Write(head); err != nil {
		return err
	}
	write := func(row report.Row) error {
		f := row.Flat
		rec := []string{row.Key, num(f.Estimate), num(f.Lo), num(f.Hi), num(f.Samples),
			strconv.FormatBool(row.Stats.SamplesBound), f.Method}
		if withCum {
			if c := row.Cum; c != nil {
				rec = append(rec, num(c.Estimate), num(c.Lo), num(c.Hi), c.Method)
			} else {
				rec = append(rec, "", "", "", "")
			}
		}
		rec = append(rec, strings.Join(f.Notes, "; "))
		return cw.Write(rec)
	}
	for _, row := range r.Rows {
		if err := write(row); err != nil {
			return err
		}
	}
	if err := write(r.Total); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
