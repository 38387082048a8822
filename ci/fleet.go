package ci

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fleet is what a two-stage interval needs besides a group's summed
// statistics: the group's estimate in each of the n sampled processes,
// summed and squared-summed (processes without the group count as 0),
// and the fleet's size N.
type Fleet struct {
	// Sum, SumSq and SumCube are Σ Ŷᵢ, Σ Ŷᵢ² and Σ Ŷᵢ³ over the n
	// sampled processes.
	Sum, SumSq, SumCube float64
	// Sampled is n, Size is N ≥ n.
	Sampled, Size int
}

// NoteFleet explains a fleet interval.
const NoteFleet = "fleet: scaled from the sampled processes to --fleet-size; two-stage interval (between- and within-process variance, skewness-corrected Student t with n−1 df)"

// FleetInterval is the two-stage interval for the total over a fleet of N
// processes of which n were sampled at random (without replacement), each
// one's total estimated from its own sampled profile with the statistics
// within (summed in within). The estimate is N/n·ΣŶᵢ; its unbiased
// variance estimate is
//
//	N²(1−n/N)·s²/n + (N/n)·Σ vᵢ
//
// with s² the sample variance of the Ŷᵢ and Σ vᵢ the within-process
// variances (within.Var): the first term is the processes that were not
// sampled, the second the sampling inside those that were. The interval is
// the estimate ± t(n−1)·√v, cut at 0: with n of 20 or more processes the
// sum over processes is close to normal even when one process's is not.
func FleetInterval(within Stats, f Fleet, confidence float64) (Result, error) {
	n, N := float64(f.Sampled), float64(f.Size)
	if f.Sampled < 2 || f.Size < f.Sampled {
		return Result{}, fmt.Errorf("a fleet interval needs at least 2 sampled processes and a fleet at least as large (%d of %d)", f.Sampled, f.Size)
	}
	est := N / n * f.Sum
	s2 := math.Max(0, (f.SumSq-f.Sum*f.Sum/n)/(n-1))
	v := N*N*(1-n/N)*s2/n + N/n*within.Var
	if est <= 0 || v <= 0 {
		return Result{Estimate: est, Lo: est, Hi: est, Samples: within.Samples, Method: "fleet", Notes: []string{NoteFleet}}, nil
	}
	// Johnson's skewness correction of the t interval: a few processes
	// holding most of a group make the sum skewed right, and a symmetric
	// interval around it misses high.
	shift := 0.0
	if s2 > 0 {
		mean := f.Sum / n
		m3 := (f.SumCube - 3*mean*f.SumSq + 3*mean*mean*f.Sum - n*mean*mean*mean) / n
		shift = N * m3 / (6 * s2 * n)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(1 - (1-confidence)/2)
	half := t * math.Sqrt(v)
	return Result{Estimate: est, Lo: math.Max(0, est+shift-half), Hi: est + shift + half, Samples: within.Samples,
		Method: "fleet", Notes: []string{NoteFleet}}, nil
}
