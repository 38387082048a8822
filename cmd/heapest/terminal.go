package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/heapest/heapest/render"
)

// tableOptions fit the table to the terminal standard output is, if it is
// one: its width (unless --wide) and its locale's character set. Files
// and pipes get the whole table, as it is.
func tableOptions(w io.Writer, wide bool) render.TableOptions {
	if !isTerminal(w) {
		return render.TableOptions{}
	}
	var opt render.TableOptions
	if !wide {
		opt.Width = terminalWidth(w)
	}
	opt.ASCII = !utf8Locale()
	return opt
}

// terminalWidth is the width of the terminal w is, in columns: COLUMNS
// where it is set to one (as ls and git take it), else the terminal's
// own, and 0 where neither says (a terminal of size 0x0, as script and
// docker -t make).
func terminalWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := fileOf(w); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 0
}

// isTerminal reports whether w is a terminal: progress and fitted tables
// are shown only there, binary output never. (A character device is not
// enough: /dev/null is one.) A variable, so that tests can have one.
var isTerminal = func(w io.Writer) bool {
	f, ok := fileOf(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// fileOf is the file w writes to, through the writers heapest wraps
// standard output and standard error in (stickyWriter, printableWriter).
func fileOf(w io.Writer) (*os.File, bool) {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return f, ok
}

// utf8Locale reports whether the locale's character set is UTF-8, as
// LC_ALL, else LC_CTYPE, else LANG says (POSIX's order); unset is the C
// locale, which is ASCII.
func utf8Locale() bool {
	for _, name := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(name); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
