// Package mix scrambles the bits of 64-bit keys for heapest's
// open-addressing tables: one home for the finaliser they share.
package mix

// Finish is SplitMix64's finaliser: every output bit depends on every
// input bit, so that linear probing stays short on keys that are far from
// random in their low bits (addresses, ids, parent and child pairs).
func Finish(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
