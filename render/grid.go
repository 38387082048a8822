package render

import (
	"bytes"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// writeGrid writes a table of strings aligned per column as heapest's
// report tables are (no borders, every option explicit so that golden
// output does not depend on tablewriter's defaults).
func writeGrid(w io.Writer, head []string, rows [][]string, align []tw.Align) error {
	var buf bytes.Buffer
	cfg := alignedCells(align)
	tbl := newTable(&buf, cfg)
	tbl.Header(head)
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	_, err := w.Write(trimTrailing(buf.Bytes()))
	return err
}

// newTable is a borderless table with every option set explicitly, so
// that golden output does not depend on tablewriter's defaults.
func newTable(buf *bytes.Buffer, cells tw.CellConfig) *tablewriter.Table {
	return tablewriter.NewTable(buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.Off, ShowFooter: tw.Off},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cells, Row: cells}),
		tablewriter.WithTrimSpace(tw.Off),
	)
}

// alignedCells aligns each column as given, with cells never reformatted
// or wrapped.
func alignedCells(align []tw.Align) tw.CellConfig {
	return tw.CellConfig{
		Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
		Alignment:  tw.CellAlignment{PerColumn: align},
		Padding:    tw.CellPadding{Global: tw.Padding{Left: " ", Right: " ", Overwrite: true}},
	}
}
