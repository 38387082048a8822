package sim

import (
	"math"
	"math/rand/v2"
	"sync"
)

// Scenario is a named workload of the coverage study.
type Scenario struct {
	Name string
	// Desc says in plain words what it allocates.
	Desc string
	// Workload builds the fixed allocations (from its own seed).
	Workload func() Workload
}

// defaultLgR is jemalloc's default lg_prof_sample: R = 512 KiB.
const defaultLgR = 19

// oneSize is rows of allocations of one usize, rows[i] allocations each.
func oneSize(z uint64, counts []int64) Workload {
	p := Process{LgRate: defaultLgR}
	for _, c := range counts {
		p.Stacks = append(p.Stacks, Stack{Allocs: []Alloc{{Size: z, Count: c}}})
	}
	return Workload{Processes: []Process{p}}
}

// repeat is n copies of c.
func repeat(c int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// countsFor returns the allocation count of usize z whose expected number
// of samples at rate 2^lgR is s.
func countsFor(s float64, z uint64, lgR uint) int64 {
	pi := -math.Expm1(float64(z) * math.Log1p(-1/float64(uint64(1)<<lgR)))
	return int64(math.Max(1, math.Round(s/pi)))
}

// logNormalRow draws count allocations with log-normal requested sizes
// (median med bytes, log-sd sigma), rounded to size classes.
func logNormalRow(rng *rand.Rand, count int, med, sigma float64) Stack {
	bySize := map[uint64]int64{}
	for range count {
		z := uint64(math.Max(1, math.Round(med*math.Exp(sigma*rng.NormFloat64()))))
		bySize[Usize(z)]++
	}
	var s Stack
	for z, c := range bySize {
		s.Allocs = append(s.Allocs, Alloc{Size: z, Count: c})
	}
	sortAllocs(s.Allocs)
	return s
}

func sortAllocs(a []Alloc) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].Size < a[j-1].Size; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// hiddenSmall is 20 rows of three 4 MiB allocations plus 64 B ones
// worth f·R bytes at the same stack: sampling sees the 4 MiB ones
// almost surely and the small ones with probability 1 − exp(−f), so a
// row looks like one size while holding another.
func hiddenSmall(f float64) Workload {
	const r = 1 << defaultLgR
	small := int64(math.Round(f * r / 64))
	p := Process{LgRate: defaultLgR}
	for range 20 {
		p.Stacks = append(p.Stacks, Stack{Allocs: []Alloc{{Size: 64, Count: small}, {Size: 4 << 20, Count: 3}}})
	}
	return Workload{Processes: []Process{p}}
}

// Scenarios are the workloads of the study (SPEC §4.5). Each workload is
// built once, on first use, and then shared.
func Scenarios() []Scenario {
	list := scenarioList()
	for i := range list {
		list[i].Workload = sync.OnceValue(list[i].Workload)
	}
	return list
}

func scenarioList() []Scenario {
	const r = 1 << defaultLgR
	return []Scenario{
		{"small-s1", "64 B allocations (≪ R), 40 rows expecting 1 sample each", func() Workload {
			return oneSize(64, repeat(countsFor(1, 64, defaultLgR), 40))
		}},
		{"small-s0.2", "64 B allocations, 40 rows expecting 0.2 samples (most rows absent from a dump)", func() Workload {
			return oneSize(64, repeat(countsFor(0.2, 64, defaultLgR), 40))
		}},
		{"small-s3", "64 B allocations, 40 rows expecting 3 samples", func() Workload {
			return oneSize(64, repeat(countsFor(3, 64, defaultLgR), 40))
		}},
		{"small-s10", "4 KiB allocations, 40 rows expecting 10 samples", func() Workload {
			return oneSize(4096, repeat(countsFor(10, 4096, defaultLgR), 40))
		}},
		{"small-s100", "64 B allocations, 20 rows expecting 100 samples", func() Workload {
			return oneSize(64, repeat(countsFor(100, 64, defaultLgR), 20))
		}},
		{"small-s1000", "256 B allocations, 10 rows expecting 1,000 samples", func() Workload {
			return oneSize(256, repeat(countsFor(1000, 256, defaultLgR), 10))
		}},
		{"near-R", "512 KiB allocations (Z = R, π = 0.63), rows of 1 to 40 allocations", func() Workload {
			return oneSize(r, []int64{1, 2, 3, 5, 8, 13, 21, 40})
		}},
		{"huge", "4 MiB allocations (Z = 8R, π ≈ 0.9997), rows of 1 to 20 allocations", func() Workload {
			return oneSize(4<<20, []int64{1, 2, 5, 20})
		}},
		{"lognormal-s2", "log-normal sizes within a row (median 200 B, σ = 2), 40 rows expecting about 2.4 samples", func() Workload {
			rng := rand.New(rand.NewPCG(11, 0))
			p := Process{LgRate: defaultLgR}
			for range 40 {
				p.Stacks = append(p.Stacks, logNormalRow(rng, 800, 200, 2))
			}
			return Workload{Processes: []Process{p}}
		}},
		{"lognormal-s50", "log-normal sizes within a row (median 2 KiB, σ = 1.5), 20 rows expecting about 50 samples", func() Workload {
			rng := rand.New(rand.NewPCG(12, 0))
			p := Process{LgRate: defaultLgR}
			for range 20 {
				p.Stacks = append(p.Stacks, logNormalRow(rng, 4000, 2048, 1.5))
			}
			return Workload{Processes: []Process{p}}
		}},
		{"tiny+huge", "rows of 100,000 × 32 B plus 1 to 3 allocations of 8 MiB", func() Workload {
			p := Process{LgRate: defaultLgR}
			for i := range 20 {
				p.Stacks = append(p.Stacks, Stack{Allocs: []Alloc{{Size: 32, Count: 100_000}, {Size: 8 << 20, Count: int64(1 + i%3)}}})
			}
			return Workload{Processes: []Process{p}}
		}},
		{"many-rows", "300 rows with log-uniform expected samples 0.05…20 and log-normal sizes; the total matters", func() Workload {
			rng := rand.New(rand.NewPCG(13, 0))
			p := Process{LgRate: defaultLgR}
			for range 300 {
				med := math.Exp(rng.Float64() * math.Log(64<<10))
				want := math.Exp(math.Log(0.05) + rng.Float64()*math.Log(400))
				n := int(math.Max(1, want*float64(r)/med))
				if n > 200_000 {
					n = 200_000
				}
				p.Stacks = append(p.Stacks, logNormalRow(rng, n, med, 1))
			}
			return Workload{Processes: []Process{p}}
		}},
		{"hidden-0.1R", "rows of 3 × 4 MiB plus 64 B allocations worth 0.1R that sampling almost never shows", func() Workload {
			return hiddenSmall(0.1)
		}},
		{"hidden-0.5R", "rows of 3 × 4 MiB plus 64 B allocations worth 0.5R (unseen 61% of the time)", func() Workload {
			return hiddenSmall(0.5)
		}},
		{"hidden-1R", "rows of 3 × 4 MiB plus 64 B allocations worth R (unseen 37% of the time)", func() Workload {
			return hiddenSmall(1)
		}},
		{"hidden-2R", "rows of 3 × 4 MiB plus 64 B allocations worth 2R", func() Workload {
			return hiddenSmall(2)
		}},
		{"size-class-avg", "rows whose sampled sizes average to a size class: 6 × 1 MiB + 2 × 4 MiB (1.75 MiB), 1 MiB + 2 MiB (1.5 MiB), 32 B + 64 B expecting 2 samples each (48 B)", func() Workload {
			p := Process{LgRate: defaultLgR}
			for range 10 {
				p.Stacks = append(p.Stacks,
					Stack{Allocs: []Alloc{{Size: 1 << 20, Count: 6}, {Size: 4 << 20, Count: 2}}},
					Stack{Allocs: []Alloc{{Size: 1 << 20, Count: 1}, {Size: 2 << 20, Count: 1}}},
					Stack{Allocs: []Alloc{{Size: 32, Count: countsFor(2, 32, defaultLgR)}, {Size: 64, Count: countsFor(2, 64, defaultLgR)}}})
			}
			return Workload{Processes: []Process{p}}
		}},
		{"two-rate-merge", "2 processes, R = 512 KiB and 16 MiB, the same 12 stacks each (64 B to 1 MiB, 1 to 16 MiB a stack), merged: the 16 MiB process often has no sample of a stack", func() Workload {
			var w Workload
			for _, lg := range []uint{19, 24} {
				p := Process{LgRate: lg}
				for j := range 12 {
					z := []uint64{64, 4096, 96 << 10, 1 << 20}[j%4]
					bytes := uint64(1<<20) << (j % 5) // 1 to 16 MiB
					p.Stacks = append(p.Stacks, Stack{Allocs: []Alloc{{Size: Usize(z), Count: int64(max(1, bytes/z))}}})
				}
				w.Processes = append(w.Processes, p)
			}
			return w
		}},
		{"fleet-merge", "30 processes with R from 64 KiB to 2 MiB, the same 25 stacks each (sizes 16 B…1 MiB), merged", func() Workload {
			rng := rand.New(rand.NewPCG(14, 0))
			var w Workload
			for i := range 30 {
				p := Process{LgRate: uint(16 + i%6)}
				for j := range 25 {
					z := uint64(16) << (j % 17)
					c := int64(1 + rng.IntN(int(math.Max(2, float64(8<<20)/float64(z)))))
					p.Stacks = append(p.Stacks, Stack{Allocs: []Alloc{{Size: Usize(z), Count: c}}})
				}
				w.Processes = append(w.Processes, p)
			}
			return w
		}},
	}
}
