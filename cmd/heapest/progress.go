package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// What progress depends on outside the program, as variables so that
// tests fake them: whether standard error is a terminal, the clock, and
// how long one input is read before its progress shows.
var (
	terminal      = isTerminal
	clock         = time.Now
	progressAfter = time.Second
)

// progress shows a merge's progress on a terminal: inputs done of all,
// megabytes read, throughput and the time left. It is silent when
// standard error is not a terminal (a pipe, a file, CI logs).
type progress struct {
	w           io.Writer
	total, n    int
	bytes       int64
	start, last time.Time
	cols        int // the terminal's width, 0 if unknown
}

func newProgress(stderr io.Writer, total int) *progress {
	if !terminal(stderr) {
		return &progress{}
	}
	now := clock()
	return &progress{w: stderr, total: total, start: now, last: now, cols: terminalWidth(stderr)}
}

// done counts one input; it redraws the line at most ten times a second.
func (p *progress) done(_ string, size int64) {
	if p.w == nil {
		return
	}
	p.n++
	p.bytes += size
	if now := clock(); now.Sub(p.last) >= 100*time.Millisecond || p.n == p.total {
		p.last = now
		p.draw(now)
	}
}

func (p *progress) draw(now time.Time) {
	secs := now.Sub(p.start).Seconds()
	mb := float64(p.bytes) / 1e6
	rate, eta := 0.0, "?"
	if secs > 0 {
		rate = mb / secs
	}
	if p.n > 0 && secs > 0 {
		left := secs / float64(p.n) * float64(p.total-p.n)
		eta = (time.Duration(left) * time.Second).Round(time.Second).String()
	}
	line := fmt.Sprintf("%d/%d inputs, %.0f MB, %.0f MB/s, %s left   ", p.n, p.total, mb, rate, eta)
	fmt.Fprintf(p.w, "\r%s", clipLine(line, p.cols))
}

// finish ends the progress line.
func (p *progress) finish() {
	if p.w != nil && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}

// readProgress shows, on a terminal, how far the reading of one input has
// come: megabytes read (of its size, where known) and the rate. It stays
// silent while the input has taken less than progressAfter: most inputs
// are read by then, and a line that flashes past is noise. Then it redraws
// at most ten times a second, as bytes arrive, and finish clears the line,
// so that what follows (warnings, a table on the same terminal) starts on
// a clean line. A nil *readProgress does nothing.
type readProgress struct {
	w           io.Writer
	name        string
	size, read  int64
	start, last time.Time
	// width is that of the line drawn (0: none), which finish blanks.
	width int
	cols  int // the terminal's width, 0 if unknown
}

// newReadProgress is the progress of reading path, or nil when stderr is
// not a terminal.
func newReadProgress(stderr io.Writer, path string) *readProgress {
	if !terminal(stderr) {
		return nil
	}
	name := filepath.Base(path)
	if path == "-" {
		name = "standard input"
	}
	return &readProgress{w: stderr, name: name, cols: terminalWidth(stderr)}
}

// watch is the input's formats.Watch: the input is counted as it is read.
func (p *readProgress) watch(r io.Reader, size int64) io.Reader {
	p.size, p.start = size, clock()
	return &countingReader{r: r, p: p}
}

// add counts n more bytes read, and redraws when it is time.
func (p *readProgress) add(n int) {
	if n == 0 {
		return // the end, or a read that brought nothing: nothing new to say
	}
	p.read += int64(n)
	now := clock()
	if now.Sub(p.start) < progressAfter || p.width > 0 && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.draw(now)
}

func (p *readProgress) draw(now time.Time) {
	mb := float64(p.read) / 1e6
	line := fmt.Sprintf("reading %s: %.1f MB", p.name, mb)
	if p.size > 0 {
		line = fmt.Sprintf("reading %s: %.1f of %.1f MB (%.0f%%)", p.name, mb, float64(p.size)/1e6, 100*float64(p.read)/float64(p.size))
	}
	if secs := now.Sub(p.start).Seconds(); secs > 0 {
		line += fmt.Sprintf(", %.1f MB/s", mb/secs)
	}
	// Padded to the last line's width: "\r" alone leaves a longer line's
	// tail behind.
	line = clipLine(line, p.cols)
	fmt.Fprintf(p.w, "\r%-*s", p.width, line)
	p.width = max(p.width, utf8.RuneCountInString(line))
}

// finish clears the line, if one was drawn.
func (p *readProgress) finish() {
	if p != nil && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}

// countingReader counts what its reader reads into a readProgress.
type countingReader struct {
	r io.Reader
	p *readProgress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.add(n)
	return n, err
}

// clipLine cuts a progress line to a terminal of cols columns, short of
// the last: a line that wraps cannot be redrawn by "\r", which returns to
// the start of its last row only, and each redraw would leave a row
// behind.
func clipLine(line string, cols int) string {
	if cols < 2 || utf8.RuneCountInString(line) < cols {
		return line
	}
	r := []rune(line)
	return string(r[:cols-1])
}
