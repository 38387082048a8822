package pagecache

import (
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// heapProfile is where TestHeapProfile writes its profile. Relative paths are
// relative to this package's directory, where go test runs the test, so CI
// passes an absolute one.
var heapProfile = flag.String("heapprofile", "", "write a heap profile of a warm cache to this `file`")

// TestHeapProfile warms a cache as production does and writes a heap profile
// while the cache is still live, so the profile's inuse_space is what the
// cache holds. Run it with go test -memprofilerate 4096: the default rate
// (512 KiB) samples a few pages of a 4 MB cache, too few for a gate to decide.
func TestHeapProfile(t *testing.T) {
	if *heapProfile == "" {
		t.Skip("no -heapprofile FILE: nothing to write")
	}
	c := New()
	c.Warm(1000)

	// The profile's inuse values are as of the last completed GC: collect
	// now so that they include the warm cache.
	runtime.GC()
	f, err := os.Create(*heapProfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The cache must stay live until the profile is written.
	runtime.KeepAlive(c)
	t.Logf("%d pages cached; heap profile in %s", c.Len(), *heapProfile)
}
