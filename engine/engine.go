// Package engine writes heapest's group statistics as Parquet rows that
// any SQL engine merges with one GROUP BY, and reads back the rows an
// engine grouped, so that heapest computes the intervals an engine cannot
// (docs/parquet.md). The statistics are ci.Columns: each column's name
// ends in its merge operator.
package engine

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/heapest/heapest/ci"
)

// Schema names the version of the rows' layout, written into every
// file's key-value metadata under SchemaKey. Engines drop that metadata
// when they write their result; Read recognizes rows by their columns.
const (
	Schema    = "heapest-parquet/1"
	SchemaKey = "heapest.schema"
)

// Parts of a report a row can be.
const (
	// PartTotal is an input's total for the value (key "total").
	PartTotal = "total"
	// PartFlat is a group's own statistics, PartCum a function's over
	// every stack it is in (--by func).
	PartFlat = "flat"
	PartCum  = "cum"
	// PartSample is one distinct stack (and type) of an input, which
	// heapest can group again by anything (--parquet-rows samples).
	PartSample = "sample"
)

// Row is one row of heapest's Parquet schema: labels that say where it
// comes from (optional: an engine's GROUP BY leaves them out), what it is
// (by, part, key, stack, type, value) and its statistics.
type Row struct {
	// Source is the input's path, Format its format, Process and BuildID
	// the process and the build it profiled where the input says.
	Source  string `parquet:"source,optional"`
	Format  string `parquet:"format,optional"`
	Process string `parquet:"process,optional"`
	BuildID string `parquet:"build_id,optional"`
	// Time is when the input was taken (ns since the Unix epoch), where
	// it says (pprof's time_nanos): a label to bucket rows by.
	Time int64 `parquet:"time,optional,timestamp(nanosecond)"`
	// By is what the rows of the part are grouped by (func, stack, …;
	// "stack" for sample rows); the column is grouped_by, as BY is a
	// reserved word in SQL.
	By   string `parquet:"grouped_by"`
	Part string `parquet:"part"`
	// Key is the group's key as report prints it; Stack, for by stack
	// and sample rows, its frames leaf first.
	Key   string   `parquet:"key"`
	Stack []string `parquet:"stack,list"`
	// Type is a sample row's allocated type, where the input has types.
	Type string `parquet:"type,optional"`
	// Value is what the statistics estimate (inuse_space, …).
	Value string `parquet:"value"`
	ci.Columns
}

// Writer writes rows to one Parquet file.
type Writer struct {
	w    *parquet.GenericWriter[Row]
	buf  []Row
	rows int64
	// WriteSample's arenas: the buffered rows' keys and stacks.
	keys  []byte
	names []string
}

// batch is how many rows are buffered before they go to the writer.
const batch = 4096

// NewWriter returns a Writer of a Parquet file to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: parquet.NewGenericWriter[Row](w,
		parquet.KeyValueMetadata(SchemaKey, Schema),
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(rowGroup))}
}

// rowGroup is how many rows a row group holds at most: the writer holds
// one row group until it is written, so a merge of ten thousand dumps
// (16 million rows) kept the whole file in memory. A group of 2^17 rows
// is a few megabytes in the file, and a few tens in memory.
const rowGroup = 1 << 17

// Write adds one row.
func (w *Writer) Write(r Row) error {
	w.buf = append(w.buf, r)
	w.rows++
	if len(w.buf) == batch {
		return w.flush()
	}
	return nil
}

func (w *Writer) flush() error {
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("writing parquet: %w", err)
	}
	return nil
}

// Rows is the number of rows written.
func (w *Writer) Rows() int64 { return w.rows }

// Close writes what is buffered and the file's footer.
func (w *Writer) Close() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("writing parquet: %w", err)
	}
	return nil
}
