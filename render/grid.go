package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// writeGrid writes a table of strings aligned per column as heapest's
// report tables are (no borders, every option explicit so that golden
// output does not depend on tablewriter's defaults).
func writeGrid(w io.Writer, head []string, rows [][]string, align []tw.Align) error {
	b, err := gridLayout(head, rows, align)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// gridLayout lays out a table of strings, each column aligned as align says,
// without trailing blanks. A table of plain text (aligned left or right,
// no control character, rows as wide as the header) is laid out here, as
// tablewriter lays it out (TestLayoutAsTablewriter): tablewriter took
// 1.2 GB and 6 s of CPU for the 98,600 rows of a dump's stacks. Any other
// goes to tablewriter, which handles what plain text does not have
// (line breaks, terminal escapes, tabs).
func gridLayout(head []string, rows [][]string, align []tw.Align) ([]byte, error) {
	for _, r := range rows {
		for i, c := range r {
			r[i] = Printable(c)
		}
	}
	if b, ok := plainLayout(head, rows, align); ok {
		return b, nil
	}
	var buf bytes.Buffer
	tbl := newTable(&buf, alignedCells(align))
	tbl.Header(head)
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			return nil, err
		}
	}
	if err := tbl.Render(); err != nil {
		return nil, err
	}
	return trimTrailing(buf.Bytes()), nil
}

// plainLayout is gridLayout's own: each cell padded by a blank on either side
// to its column's display width (tablewriter's measure of it), aligned
// left or right; ok is false for a table it does not lay out.
func plainLayout(head []string, rows [][]string, align []tw.Align) (b []byte, ok bool) {
	n := len(head)
	if len(align) != n {
		return nil, false
	}
	for _, a := range align {
		if a != tw.AlignLeft && a != tw.AlignRight {
			return nil, false
		}
	}
	// line r is the header for r = -1, else row r.
	line := func(r int) []string {
		if r < 0 {
			return head
		}
		return rows[r]
	}
	// The display width of every cell, the header's first, row by row.
	widths := make([]int32, 0, (len(rows)+1)*n)
	col := make([]int, n)
	var rw runeWidths
	for r := -1; r < len(rows); r++ {
		cells := line(r)
		if len(cells) != n {
			return nil, false
		}
		for i, c := range cells {
			w, ok := rw.of(c)
			if !ok {
				return nil, false
			}
			widths = append(widths, int32(w))
			col[i] = max(col[i], w)
		}
	}
	size := 0
	for r := -1; r < len(rows); r++ {
		for i, c := range line(r) {
			size += 2 + col[i] - int(widths[(r+1)*n+i]) + len(c)
		}
		size++
	}
	b = make([]byte, 0, size)
	for r := -1; r < len(rows); r++ {
		b = plainLine(b, line(r), widths[(r+1)*n:(r+2)*n], col, align)
	}
	return b, true
}

// plainLine appends one line of the table, of cells of display widths
// widths in columns of widths col, without its trailing blanks.
func plainLine(b []byte, cells []string, widths []int32, col []int, align []tw.Align) []byte {
	for i, c := range cells {
		gap := col[i] - int(widths[i])
		b = append(b, ' ')
		if align[i] == tw.AlignRight {
			b = appendBlanks(b, gap)
			b = append(b, c...)
		} else {
			b = append(b, c...)
			b = appendBlanks(b, gap)
		}
		b = append(b, ' ')
	}
	end := len(b)
	for end > 0 && b[end-1] == ' ' {
		end--
	}
	return append(b[:end], '\n')
}

func appendBlanks(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// runeWidths measures cells as tablewriter does (twwidth.Width: the sum
// of its characters' widths, East Asian wide ones two), asking it once per
// distinct character that is not printable ASCII.
type runeWidths map[rune]int

// of is the display width of a cell, and whether the cell is plain text:
// no control character, so no line break, tab or terminal escape.
func (m *runeWidths) of(s string) (int, bool) {
	w := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return 0, false
		}
		if c >= 0x80 {
			return m.slow(s)
		}
		w++
	}
	return w, true
}

func (m *runeWidths) slow(s string) (int, bool) {
	if *m == nil {
		*m = runeWidths{}
	}
	w := 0
	for _, r := range s {
		switch {
		case r < 0x80:
			if r < 0x20 || r == 0x7f {
				return 0, false
			}
			w++
			continue
		case unicode.IsControl(r):
			return 0, false
		}
		rw, ok := (*m)[r]
		if !ok {
			rw = twwidth.Width(string(r))
			(*m)[r] = rw
		}
		w += rw
	}
	return w, true
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

// Printable is s as a terminal or a page may show it: the names an input
// gives are the input's, and a control character (a terminal escape, a
// line break, a NUL; not a tab), a byte that is not UTF-8, or a character that
// reorders the text around it (U+202E) is written as its escape (\x1b,
// \u202e), so that it cannot act on a terminal, break an XML file, or
// make a name look like another. (U+FFFE and U+FFFF, which XML cannot
// hold, are escaped too.)
func Printable(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\t':
			b.WriteByte('\t') // laid out as tablewriter lays it out: source lines have them
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x80 && r <= 0x9f, reorders(r), r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// reorders reports whether r is a Unicode control of the direction or
// joining of text: the bidirectional marks, embeddings, overrides and
// isolates.
func reorders(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
