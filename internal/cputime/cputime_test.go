package cputime

import (
	"runtime"
	"testing"
)

// Used grows while the process computes (on systems that measure it).
func TestUsed(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no CPU time on this system")
	}
	t0 := Used()
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	if Used() <= t0 || x == 0 {
		t.Errorf("CPU time did not grow: %v → %v", t0, Used())
	}
}
