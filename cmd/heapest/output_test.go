package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteOutput checks -o's cases: a new file gets 0666 less the umask,
// an existing file keeps its mode, a symlink is followed (the link
// stays), a FIFO is written through, and errors name the user's path.
func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "report\n"); return err }
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	fresh := filepath.Join(dir, "new.txt")
	if err := writeOutput(fresh, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644 (0666 less umask 022)", st.Mode().Perm())
	}

	kept := filepath.Join(dir, "kept.txt")
	os.WriteFile(kept, []byte("old"), 0o640)
	os.Chmod(kept, 0o640)
	if err := writeOutput(kept, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o640 {
		t.Errorf("existing file mode %v, want 0640 kept", st.Mode().Perm())
	}

	link := filepath.Join(dir, "link.txt")
	os.Symlink(kept, link)
	if err := writeOutput(link, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink became a %v", st.Mode())
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := writeOutput(fifo, nil, write); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "report\n" {
		t.Errorf("read %q from the FIFO", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became a %v", st.Mode())
	}

	err := writeOutput(filepath.Join(dir, "missing", "out.txt"), nil, write)
	if err == nil || !strings.Contains(err.Error(), "missing/out.txt") || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("error %v, want one naming the path given and not the temporary file", err)
	}
}

// TestBinaryOutput: pprof and Parquet output go to standard output when it
// is a file or a pipe (as pprof's -proto writes), and are refused with a
// hint when it is a terminal.
func TestBinaryOutput(t *testing.T) {
	dump := "../../testdata/jemalloc/mixed_symbolized.heap"
	fleet := "../../testdata/fleet"
	cases := []struct {
		args  []string
		what  string // the refusal's start
		magic string // the output's first bytes otherwise
	}{
		{[]string{"report", "--format", "pprof", dump}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"merge", fleet}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"diff", "--format", "pprof", fleet + "/host1", fleet + "/host2"}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"report", "--format", "parquet", dump}, "--format parquet writes a binary file", "PAR1"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:1], " ")+" "+c.magic, func(t *testing.T) {
			out, errOut, code := runWithStdin(t, t.TempDir(), "", c.args)
			if code != 0 || !strings.HasPrefix(out, c.magic) {
				t.Errorf("%v to a file: exit %d, output %.8q, stderr %s", c.args, code, out, errOut)
			}
			saved := isTerminal
			isTerminal = func(io.Writer) bool { return true }
			defer func() { isTerminal = saved }()
			out, errOut, code = runWithStdin(t, t.TempDir(), "", c.args)
			want := "heapest: " + c.what + ", and standard output is a terminal: give -o FILE, or redirect it\n"
			if code != 2 || out != "" || errOut != want {
				t.Errorf("%v to a terminal: exit %d, output %.8q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, want)
			}
		})
	}
}

// A name from the input quoted on standard error (a mapped path in a
// warning) reaches it printable: a terminal escape in it is written
// \x1b, not sent to the terminal.
func TestStderrPrintable(t *testing.T) {
	data, err := os.ReadFile("testdata/je530_threads_foreign.heap")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "esc.heap")
	evil := strings.ReplaceAll(string(data), "/opt/heaplab/t2", "/opt/heaplab/t\x1b[31m\u202e2")
	if err := os.WriteFile(path, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "report", path)
	if code != 0 || !strings.Contains(stderr, `/opt/heaplab/t\x1b[31m\u202e2`) || strings.ContainsAny(stderr, "\x1b\u202e") {
		t.Errorf("exit %d, stderr %q: want the path's escapes written out", code, stderr)
	}
}
