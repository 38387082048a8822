package render

import (
	"encoding/csv"
	"io"
	"iter"

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
	rec := make([]string, len(cols)) // cw.Write keeps none of it
	for i, row := range withTotal(r.Rows, &r.Total) {
		for j, col := range cols {
			rec[j] = col.machine(&cell{row: row, total: i == len(r.Rows)})
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// withTotal yields each row, then the total, by index and pointer:
// appending the total to the rows would copy them all first (a
// million rows, --by stack).
func withTotal[T any](rows []T, total *T) iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		for i := range rows {
			if !yield(i, &rows[i]) {
				return
			}
		}
		yield(len(rows), total)
	}
}
