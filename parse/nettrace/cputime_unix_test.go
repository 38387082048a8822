//go:build unix

package nettrace

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process used so far: issue
// 9's targets are in CPU seconds, which wall time on a shared machine
// does not measure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
