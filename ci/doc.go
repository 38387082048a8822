// Package ci computes confidence intervals for unbiased heap-profile
// estimates. It is pure math: no I/O, no parsing. A group of sampled
// allocations is summarised by Stats, whose fields are sums, maxima and flags
// that merge in any order (see Stats.Add), so intervals can be computed for a
// stack, a function, a whole fleet alike.
package ci
