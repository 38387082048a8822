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
func TestReadmeExamples(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
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
		for i, a := range args {
			if strings.HasPrefix(a, "testdata/") {
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
	if n < 2 {
		t.Errorf("found %d examples in README.md, want at least 2", n)
	}
}
