// Package aggregate groups unbiased contributions. It works in two steps:
// a Collector per input interns every distinct stack as the parser gave it
// (addresses, names) and sums each record's contributions into its cell as
// the record streams by; once the input is read and its frames are named
// (once per distinct frame), Collector.Finish moves the cells into a Table
// keyed by names, which any number of inputs share. Table.Groups then
// groups the cells by function, stack, leaf, thread, size or type. A
// group's statistics are sums and maxima of its contributions
// (ci.Stats.Merge), so the order in which records, cells and inputs are
// added never matters.
package aggregate
