package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/shlex"
)

// TestReadmeExamples runs every "$ heapest ..." block of README.md from the
// repository root and compares the output with the block, so the README
// cannot go stale.
func TestReadmeExamples(t *testing.T) { runDocExamples(t, "../../README.md", 2) }

// TestMergeDocExamples does the same for docs/merge.md's worked example.
func TestMergeDocExamples(t *testing.T) { runDocExamples(t, "../../docs/merge.md", 2) }

// runDocExamples runs the "$ heapest ..." blocks of a Markdown file (at
// least min of them) from the repository root.
func runDocExamples(t *testing.T, file string, min int) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	n := 0
	for _, block := range strings.Split(string(data), "```") {
		block = strings.TrimPrefix(block, "\n")
		if !strings.HasPrefix(block, "$ heapest ") {
			continue
		}
		cmdLine, want, _ := strings.Cut(block, "\n")
		args, err := shlex.Split(strings.TrimPrefix(cmdLine, "$ heapest "))
		if err != nil {
			t.Fatal(err)
		}
		// Paths are the repository root's (the examples run there): the
		// arguments with a "/" that name one of its files, and ".". A bare
		// word such as "report" is a command, though a directory has its
		// name.
		for i, a := range args {
			if _, err := os.Stat(filepath.Join(root, a)); err == nil && (a == "." || strings.Contains(a, "/")) {
				args[i] = filepath.Join(root, a)
			}
		}
		out, errOut, code := runCLI(t, args...)
		out = strings.ReplaceAll(out, root+"/", "")
		if code != 0 || out != want {
			t.Errorf("%s: exit %d (%s)\ngot:\n%s\nwant:\n%s", cmdLine, code, errOut, out, want)
		}
		n++
	}
	if n < min {
		t.Errorf("found %d examples in %s, want at least %d", n, file, min)
	}
}
