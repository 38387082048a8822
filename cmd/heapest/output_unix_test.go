//go:build unix

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
