package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A progress line says inputs done of all, megabytes, throughput and time
// left; a writer that is not a terminal gets nothing.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf, 10); p.w != nil {
		t.Fatal("progress on a writer that is not a terminal")
	}
	start := time.Unix(1000, 0)
	p := &progress{w: &buf, total: 4, start: start, last: start}
	p.n, p.bytes = 1, 50e6
	p.draw(start.Add(2 * time.Second))
	if got, want := buf.String(), "\r1/4 inputs, 50 MB, 25 MB/s, 6s left   "; got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
	p.finish()
	if !strings.HasSuffix(buf.String(), "\n") {
		t.Error("finish does not end the line")
	}
}

// fakeClock is a clock that moves step forward each time it is read: a
// reader read through it is as slow as step per read, without sleeping.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(1000, 0)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// fakeTerminal makes every writer a terminal, and the clock fake, for one
// test; progress shows after a second of reading.
func fakeTerminal(t *testing.T, step time.Duration) {
	saved, savedClock, savedAfter := terminal, clock, progressAfter
	terminal, clock, progressAfter = func(io.Writer) bool { return true }, fakeClock(step), time.Second
	t.Cleanup(func() { terminal, clock, progressAfter = saved, savedClock, savedAfter })
}

// Reading one input says nothing for its first second, then how far it
// has come, at most ten times a second, and the line is blanked when the
// input is read; a writer that is not a terminal gets nothing.
func TestReadProgress(t *testing.T) {
	if newReadProgress(&bytes.Buffer{}, "x.heap") != nil {
		t.Fatal("progress on a writer that is not a terminal")
	}
	fakeTerminal(t, 300*time.Millisecond)
	var buf bytes.Buffer
	p := newReadProgress(&buf, "/data/x.heap")
	// 3 MB read 0.5 MB at a time, each read 300 ms of the fake clock
	// after the last (the start read it once): 0.3, 0.6 and 0.9 s are
	// silent, 1.2, 1.5 and 1.8 s draw; the read that finds the end draws
	// nothing new.
	readAll(t, p.watch(bytes.NewReader(make([]byte, 3e6)), 3e6), 5e5)
	const last = "reading x.heap: 3.0 of 3.0 MB (100%), 1.7 MB/s"
	if want := "\rreading x.heap: 2.0 of 3.0 MB (67%), 1.7 MB/s" + "\rreading x.heap: 2.5 of 3.0 MB (83%), 1.7 MB/s" + "\r" + last; buf.String() != want {
		t.Errorf("progress %q, want %q", buf.String(), want)
	}
	buf.Reset()
	p.finish()
	if blank := "\r" + strings.Repeat(" ", len(last)) + "\r"; buf.String() != blank {
		t.Errorf("finish wrote %q, want %q", buf.String(), blank)
	}
	var none *readProgress
	none.finish() // no terminal: nothing to clear

	// Reads every 60 ms: the first line at 1.02 s, then one every other
	// read (120 ms apart), never two within 100 ms.
	clock = fakeClock(60 * time.Millisecond)
	buf.Reset()
	p = newReadProgress(&buf, "-")
	readAll(t, p.watch(bytes.NewReader(make([]byte, 25)), 0), 1)
	if n := strings.Count(buf.String(), "\r"); n != 5 {
		t.Errorf("%d lines drawn for reads at 60 ms from 1.02 to 1.5 s, want 5: %q", n, buf.String())
	}
	if !strings.HasPrefix(buf.String(), "\rreading standard input: 0.0 MB, 0.0 MB/s") {
		t.Errorf("progress of standard input (size unknown) %q", buf.String())
	}

	// On a terminal 30 columns wide (COLUMNS says), each line is cut to
	// 29: one that wrapped could not be drawn over.
	t.Setenv("COLUMNS", "30")
	clock = fakeClock(300 * time.Millisecond)
	buf.Reset()
	p = newReadProgress(&buf, "/data/a-long-file-name.heap")
	readAll(t, p.watch(bytes.NewReader(make([]byte, 3e6)), 3e6), 5e5)
	for _, line := range strings.Split(buf.String(), "\r")[1:] {
		if n := utf8.RuneCountInString(line); n != 29 {
			t.Errorf("line %q of %d columns, want 29", line, n)
		}
	}
}

// readAll reads r to its end, n bytes at a time.
func readAll(t *testing.T, r io.Reader, n int) {
	t.Helper()
	b := make([]byte, n)
	for {
		if _, err := r.Read(b); err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// On a terminal, one slow input's progress line is on standard error,
// cleared before the warnings that follow; standard output is what it is
// without a terminal, and --quiet leaves standard error empty.
func TestSingleInputProgressCLI(t *testing.T) {
	args := []string{"report", "testdata/je530_mixed_foreign.heap"}
	plainOut, plainErr, code := runCLI(t, args...)
	if code != 0 || strings.Contains(plainErr, "\r") {
		t.Fatalf("without a terminal: exit %d, stderr %q", code, plainErr)
	}
	fakeTerminal(t, time.Second) // every read a second after the last
	out, errOut, code := runCLI(t, args...)
	if code != 0 || out != plainOut {
		t.Errorf("on a terminal: exit %d, stdout differs:\n%s", code, out)
	}
	progress, rest, ok := strings.Cut(errOut, "\rheapest: warning:")
	if !ok || !strings.HasPrefix(progress, "\rreading je530_mixed_foreign.heap: ") || rest != strings.TrimPrefix(plainErr, "heapest: warning:") {
		t.Fatalf("on a terminal, stderr %q; want the progress line, cleared, then %q", errOut, plainErr)
	}
	lines := strings.Split(progress, "\r")
	if blank := lines[len(lines)-1]; len(blank) == 0 || strings.Trim(blank, " ") != "" {
		t.Errorf("the progress line is not blanked: %q", progress)
	}
	out, errOut, code = runCLI(t, append(args, "--quiet")...)
	if code != 0 || out != plainOut || errOut != "" {
		t.Errorf("--quiet: exit %d, stderr %q", code, errOut)
	}
}
