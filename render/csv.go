package render

import (
	"encoding/csv"
	"io"

	"github.com/heapest/heapest/report"
)

// writeCSV writes one line per row (part "group") plus a final line of
// the total (part "total", key empty), every number unrounded. Notes are
// joined with "; " in the last column.
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
	for i, row := range append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total) {
		rec := make([]string, len(cols))
		for j, col := range cols {
			rec[j] = col.machine(&cell{row: &row, total: i == len(r.Rows)})
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
