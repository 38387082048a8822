// Package fleet knows what a set of inputs is: which files a command line
// names (directories walked, globs expanded, paths read from standard input),
// which of them are dumps of one process or recording, which a merge must
// not sum as if they were independent samples of the fleet, and which are
// processes forked from one parent, whose samples may be correlated.
package fleet
