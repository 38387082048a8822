package parse

import "testing"

func TestLineName(t *testing.T) {
	for _, tt := range []struct {
		fn, file string
		line     int64
		name     string
		// back is LineFunc(name): fn, but for a file name with a space
		// (the function is taken to end at the last one).
		back string
	}{
		{"main.alloc", "/src/main.go", 42, "main.alloc /src/main.go:42", "main.alloc"},
		{"leaf_fn", "", 7, "leaf_fn :7", "leaf_fn"},
		{"leaf_fn", "prog.c", 0, "leaf_fn", "leaf_fn"},
		{"", "prog.c", 3, "", ""},
		{"operator new(unsigned long)", "new_op.cc", 50, "operator new(unsigned long) new_op.cc:50", "operator new(unsigned long)"},
		{"f", "my dir/a.cc", 9, "f my dir/a.cc:9", "f my"},
		{"runtime.main", "C:/Program Files/Go/src/runtime/proc.go", 283, "runtime.main C:/Program Files/Go/src/runtime/proc.go:283", "runtime.main"},
		{"Lib.Alloc", `C:\Users\Jo Ann\lib.cs`, 12, `Lib.Alloc C:\Users\Jo Ann\lib.cs:12`, "Lib.Alloc"},
		{"operator new(unsigned long)", "/home/jo ann/new op.cc", 5, "operator new(unsigned long) /home/jo ann/new op.cc:5", "operator new(unsigned long)"},
		{"std::map<int, int>::find", "/usr/include/c++/12/bits/stl_map.h", 1200, "std::map<int, int>::find /usr/include/c++/12/bits/stl_map.h:1200", "std::map<int, int>::find"},
		{"(anonymous)", "http://localhost:8080/app.js", 3, "(anonymous) http://localhost:8080/app.js:3", "(anonymous)"},
		{"f", `\\server\share\a.c`, 2, `f \\server\share\a.c:2`, "f"},
	} {
		if got := LineName(tt.fn, tt.file, tt.line); got != tt.name {
			t.Errorf("LineName(%q, %q, %d) = %q, want %q", tt.fn, tt.file, tt.line, got, tt.name)
		}
		if got := LineFunc(tt.name); got != tt.back {
			t.Errorf("LineFunc(%q) = %q, want %q", tt.name, got, tt.back)
		}
		fn, file, line, ok := SplitLineName(tt.name)
		if named := tt.fn != "" && tt.line > 0; ok != named || ok && (fn != tt.back || line != tt.line || LineName(fn, file, line) != tt.name) {
			t.Errorf("SplitLineName(%q) = %q, %q, %d, %v", tt.name, fn, file, line, ok)
		}
	}
	// Names without a position are left whole.
	for _, name := range []string{"main", "operator new", "std::vector<int, std::allocator<int> >::push_back", "f :x", "f a:", "x:1", "f a:0", "f a:1x", "C:/x y"} {
		if got := LineFunc(name); got != name {
			t.Errorf("LineFunc(%q) = %q, want it whole", name, got)
		}
	}
}
