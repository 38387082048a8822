package main

import "errors"

// Exit statuses, the same for every command.
const (
	exitOK         = 0
	exitGateFailed = 1 // a gate of heapest ci, or heapest diff --fail-on, failed
	exitUsage      = 2 // usage or input error
)

// errGateFailed is returned by commands whose gate failed; the command has
// already explained why on its output.
var errGateFailed = errors.New("gate failed")

// exitCode is the one place that maps errors to exit statuses.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errGateFailed):
		return exitGateFailed
	default:
		return exitUsage
	}
}

// exitStatusHelp is appended to the long help of heapest itself and of
// the commands that have gates; exitStatusNoGate to the others', which
// never exit 1.
const (
	exitStatusHelp = `
EXIT STATUS
  0  success
  1  a gate failed: heapest ci's, or heapest diff --fail-on
  2  usage error, or an input that cannot be read`
	exitStatusNoGate = `
EXIT STATUS
  0  success
  2  usage error, or an input that cannot be read`
)
