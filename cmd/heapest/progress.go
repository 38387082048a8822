package main

import (
	"fmt"
	"io"
	"time"
)

// progress shows a merge's progress on a terminal: inputs done of all,
// megabytes read, throughput and the time left. It is silent when
// standard error is not a terminal (a pipe, a file, CI logs).
type progress struct {
	w           io.Writer
	total, n    int
	bytes       int64
	start, last time.Time
}

func newProgress(stderr io.Writer, total int) *progress {
	if !isTerminal(stderr) {
		return &progress{}
	}
	now := time.Now()
	return &progress{w: stderr, total: total, start: now, last: now}
}

// done counts one input; it redraws the line at most ten times a second.
func (p *progress) done(_ string, size int64) {
	if p.w == nil {
		return
	}
	p.n++
	p.bytes += size
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond || p.n == p.total {
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
	fmt.Fprintf(p.w, "\r%d/%d inputs, %.0f MB, %.0f MB/s, %s left   ", p.n, p.total, mb, rate, eta)
}

// finish ends the progress line.
func (p *progress) finish() {
	if p.w != nil && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}
