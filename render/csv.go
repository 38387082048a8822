package render

import (
	"encoding/csv"
	"io"

	"github.com/heapest/heapest/report"
)

// writeCSV writes one line per row plus a final "total" line, every number
// unrounded. Notes are joined with "; " in the last column.
func writeCSV(w io.Writer, r *report.Report) error {
	var cols []column
	var head []string
	for _, col := range newLayout(r).machine {
		if col.jsonOnly {
			continue
		}
		cols = append(cols, col)
		if col.of != nil && col.of.group != "" {
			head = append(head, col.of.group+"_"+col.name)
		} else {
			head = append(head, col.name)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, row := range append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total) {
		rec := make([]string, len(cols))
		for i, col := range cols {
			rec[i] = col.machine(&cell{row: &row})
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
