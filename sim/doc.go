// Package sim is heapest's coverage study: it draws per-byte Bernoulli
// samples from allocation workloads whose truth is known, exactly as the
// allocators sample (each allocation of usize Z independently with
// probability 1 − exp(−Z/R)), writes them as real jemalloc heap_v2 dumps
// (raw counts or prof_unbias encoding), runs them through heapest's own
// parse → unbias → aggregate → ci pipeline, and counts how often each
// interval method covers the truth.
package sim
