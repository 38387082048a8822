package ci

import "sort"

// Many rows are many tests. Holm's step-down procedure keeps the chance
// of any false failure among m tests at most α, whatever their
// dependence (a gate fails a build: one false alarm is one too many);
// Benjamini and Hochberg's step-up procedure keeps the expected share of
// false discoveries among the rows called changed at most α for
// independent or positively dependent tests (a diff lists rows: a few
// false ones among many true ones are acceptable). Both are given as
// adjusted p-values: a test is rejected at level α when its adjusted
// p-value is at most α.

// Holm returns Holm's adjusted p-values: for the k-th smallest p-value of
// m, max over j ≤ k of min(1, (m−j+1)·p_(j)).
func Holm(p []float64) []float64 {
	idx := order(p)
	m := float64(len(p))
	adj := make([]float64, len(p))
	run := 0.0
	for k, i := range idx {
		run = max(run, min(1, (m-float64(k))*p[i]))
		adj[i] = run
	}
	return adj
}

// BenjaminiHochberg returns Benjamini and Hochberg's adjusted p-values
// (q-values): for the k-th smallest p-value of m, min over j ≥ k of
// min(1, m·p_(j)/j).
func BenjaminiHochberg(p []float64) []float64 {
	idx := order(p)
	m := float64(len(p))
	adj := make([]float64, len(p))
	run := 1.0
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		run = min(run, m*p[i]/float64(k+1))
		adj[i] = run
	}
	return adj
}

// SampleFactor is how many times its samples a one-sided test with
// p-value p would need for its p-value to reach target: z-scores grow as
// the square root of the samples, so the factor is (z(target)/z(p))².
func SampleFactor(p, target float64) float64 {
	r := normalQuantile(1-target) / normalQuantile(1-p)
	return r * r
}

// order returns the indices of p by increasing p-value (stable, so that
// ties keep their order and results do not depend on the sort).
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	return idx
}
