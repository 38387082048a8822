package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSourceFind: a source is found as the profile names it, else under
// --source-path by its trailing parts, longest first, whether they are
// separated by slashes or, as profiles written on Windows may, backslashes.
func TestSourceFind(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"proj/server.go", "app/proj/server.go", "Go/src/runtime/malloc.go"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &sourceFiles{dirs: []string{dir}}
	for _, c := range []struct{ file, want string }{
		{`C:\Users\dev\proj\server.go`, "proj/server.go"},
		{`C:\build\app\proj\server.go`, "app/proj/server.go"}, // the longest tail first
		{"C:/Program Files/Go/src/runtime/malloc.go", "Go/src/runtime/malloc.go"},
		{"/build/app/proj/server.go", "app/proj/server.go"},
		{filepath.Join(dir, "proj/server.go"), "proj/server.go"}, // as named
		{"/build/nowhere.go", ""},
	} {
		got, ok := s.find(c.file)
		want := filepath.Join(dir, c.want)
		if c.want == "" {
			want = ""
		}
		if ok != (c.want != "") || got != want {
			t.Errorf("find(%q) = %q, %v; want %q", c.file, got, ok, want)
		}
	}
}
