package unbias

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTcmallocSampledSize: sizes from gperftools' own class table (the
// sizes whose sampling two audits measured biased), the request itself
// above 256 KiB.
func TestTcmallocSampledSize(t *testing.T) {
	for _, tc := range []struct{ size, want uint64 }{
		{0, 8}, {1, 8}, {8, 8}, {9, 16}, {64, 64}, {65, 80}, {101, 112}, {200, 208},
		{1024, 1024}, {1025, 1152}, {4097, 4608}, {256 << 10, 256 << 10}, {256<<10 + 1, 256<<10 + 1}, {1 << 30, 1 << 30},
	} {
		if got := TcmallocSampledSize(tc.size); got != tc.want {
			t.Errorf("TcmallocSampledSize(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}

// TestTcmallocClassesAgainstLibrary compares every size up to 256 KiB with
// what the installed libtcmalloc allocates for it (tc_nallocx: the class
// size). Skipped without gcc and gperftools' headers, except under
// CI=true (scripts/install-deps.sh installs them).
func TestTcmallocClassesAgainstLibrary(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err == nil {
		_, err = os.Stat("/usr/include/gperftools/tcmalloc.h")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("gcc and libgoogle-perftools-dev are required under CI=true: %v", err)
		}
		t.Skipf("skipping: gcc or gperftools' headers missing (%v)", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "nallocx.c")
	prog := `#include <stdio.h>
#include <gperftools/tcmalloc.h>
int main(void) {
	for (size_t s = 0; s <= 262144; s++) printf("%zu %zu\n", s, tc_nallocx(s, 0));
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "nallocx")
	if out, err := exec.Command(gcc, "-O1", "-o", bin, src, "-ltcmalloc").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n, bad := 0, 0
	for sc.Scan() {
		var size, class uint64
		if _, err := fmt.Sscan(sc.Text(), &size, &class); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		n++
		if got := TcmallocSampledSize(size); got != class && bad < 10 {
			bad++
			t.Errorf("size %d: %d, libtcmalloc's class is %d", size, got, class)
		}
	}
	if n != 262145 {
		t.Errorf("%d sizes compared, want 262145", n)
	}
}
