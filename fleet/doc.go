// Package fleet knows what a set of inputs is: which files a command line
// names (directories walked, globs expanded, paths read from standard input),
// and which of them are dumps of one process, which a merge must not sum
// as if they were independent samples of the fleet.
package fleet
