package render

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/tw"
)

// tablewriterLayout is gridLayout's fallback, for any table: what
// plainLayout must match.
func tablewriterLayout(t *testing.T, head []string, rows [][]string, align []tw.Align) []byte {
	t.Helper()
	var buf bytes.Buffer
	tbl := newTable(&buf, alignedCells(align))
	tbl.Header(head)
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	return trimTrailing(buf.Bytes())
}

// TestLayoutAsTablewriter lays out random tables of plain text, ASCII and
// not (East Asian wide characters, combining marks, emoji and joined ones,
// zero-width and bidirectional marks, bytes that are not UTF-8, the
// table's own – ± ¹), blanks at either end, empty cells and empty tables,
// and checks plainLayout against tablewriter byte for byte.
func TestLayoutAsTablewriter(t *testing.T) {
	pieces := []string{"a", "Z", "0", "9.5KiB", " ", "main.alloc", " < ", "–", "±", "¹", "²", "%", "你好", "ｆｕｌｌ", "é", "e\u0301", "🙂", "∑", "Ω", "…", "-", "_", "(anon)", "日本", "\xff", "\xe2\x80", "\u200b", "\u202e", "\ufeff", "\u00a0", "ｱ", "한국어", "\U0001F468\u200D\U0001F469"}
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range r.IntN(5) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for n := range 2000 {
		cols := 1 + r.IntN(7)
		head := make([]string, cols)
		align := make([]tw.Align, cols)
		for i := range head {
			head[i] = strings.ToUpper(text())
			align[i] = tw.AlignLeft
			if r.IntN(2) == 0 {
				align[i] = tw.AlignRight
			}
		}
		rows := make([][]string, r.IntN(6))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = text()
			}
		}
		got, ok := plainLayout(head, rows, align)
		if !ok {
			t.Fatalf("table %d: plain text not laid out: %q %q", n, head, rows)
		}
		if want := tablewriterLayout(t, head, rows, align); !bytes.Equal(got, want) {
			t.Fatalf("table %d: head %q rows %q align %v:\ngot\n%s\nwant\n%s", n, head, rows, align, got, want)
		}
	}
}

// Tables plainLayout leaves to tablewriter: text that is not plain, rows
// of another width than the header, other alignments.
func TestLayoutFallsBack(t *testing.T) {
	left := []tw.Align{tw.AlignLeft, tw.AlignRight}
	for _, c := range []struct {
		name  string
		head  []string
		rows  [][]string
		align []tw.Align
	}{
		{"line break", []string{"A", "B"}, [][]string{{"x\ny", "1"}}, left},
		{"tab", []string{"A", "B"}, [][]string{{"x\ty", "1"}}, left},
		{"escape", []string{"A", "B"}, [][]string{{"\x1b[31mred\x1b[0m", "1"}}, left},
		{"C1 control", []string{"A", "B"}, [][]string{{"x\u0085y", "1"}}, left},
		{"short row", []string{"A", "B"}, [][]string{{"x"}}, left},
		{"centre", []string{"A", "B"}, [][]string{{"x", "1"}}, []tw.Align{tw.AlignCenter, tw.AlignRight}},
	} {
		if _, ok := plainLayout(c.head, c.rows, c.align); ok {
			t.Errorf("%s: laid out as plain text", c.name)
		}
		if _, err := gridLayout(c.head, c.rows, c.align); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"main", "main"},
		{"std::vector<int>::push_back", "std::vector<int>::push_back"},
		{"naïve 名前", "naïve 名前"},
		{"a\tb", "a\tb"},
		{"red\x1b[31m", `red\x1b[31m`},
		{"nul\x00line\nbreak", `nul\x00line\x0abreak`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},
		{"\u202eevil\u202c.func", `\u202eevil\u202c.func`},
		{"c1\u0085", `c1\u0085`},
		{"del\x7f", `del\x7f`},
		{"non\uffffchar\ufffe", `non\uffffchar\ufffe`},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
