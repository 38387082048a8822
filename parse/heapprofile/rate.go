package heapprofile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// A sample's "size" in the JSON is not its object's: the inspector writes
// each sample as V8's GetSamples gives it, size times ScaleSample's count
// for one object, b·round(s(b)) with s(b) = 1/(1−exp(−b/R))
// (src/inspector/v8-heap-profiler-agent-impl.cc). That value v is V8's
// estimate of the bytes the sample stands for; the size b behind it is one
// of the divisors of v (sizes). For small objects several are: at R =
// 131072, objects of 16, 24, 48 and 2731 bytes all write 131088. A
// node's selfSize, the sum over its sizes of b·round(n·s(b)), then
// often tells which (resolve).

// scale is V8's ScaleSample factor for objects of size bytes at interval
// rate: 1/(1−exp(−size/rate)).
func scale(size, rate float64) float64 { return 1 / -math.Expm1(-size/rate) }

// scaled is round(n·s(b)), as ScaleSample rounds it.
func scaled(n, b int64, rate float64) int64 {
	return int64(math.Floor(float64(n)*scale(float64(b), rate) + 0.5))
}

// align is the alignment of every V8 heap object's size: 8 bytes, or 4
// with pointer compression (Chrome's) (kObjectAlignment).
const align = 4

// sizes returns the object sizes b, ascending, for which V8 at interval
// rate writes a sample as v: b·round(s(b)) = v, b a multiple of align.
// Writing k = round(s(b)), b = v/k: the few objects of a period or more
// have small k, tried one by one (up to bigK); smaller objects have
// b·s(b) = R + b/2 + b²/(12R) + …, so v − R = δ < b + b²/(12R) and
// b ≤ √(12Rδ), tried size by size. None is below R.
func sizes(v int64, rate float64, steps *int) []int64 {
	var out []int64
	try := func(b int64) {
		*steps--
		if b > 0 && b%align == 0 && v%b == 0 && scaled(1, b, rate) == v/b {
			out = append(out, b)
		}
	}
	if float64(v) < rate {
		return nil
	}
	for k := int64(1); k <= bigK && k <= v; k++ {
		try(v / k)
	}
	if float64(v) > rate*(1+1.0/32) {
		// k > bigK: s(b) > 64, b < R/63, v < R + b: no small object.
		slices.Sort(out)
		return slices.Compact(out)
	}
	delta := float64(v) - rate
	hi := min(float64(v)/bigK, rate/63+align, math.Sqrt(12*rate*delta)+2*align)
	if hi/align > maxSteps {
		hi = maxSteps * align // an interval of gigabytes: its small objects are not all tried
	}
	for b := int64(align); float64(b) <= hi && *steps > 0; b += align {
		try(b)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// bigK and maxSteps bound the sizes tried for a value: objects larger
// than a 64th of it one by one, smaller ones up to a million sizes.
const (
	bigK     = 64
	maxSteps = 1 << 20
)

// solver finds sizes and splits within a budget of steps: a profile of
// many varied values would otherwise cost without end (what a fuzzer
// finds). Sizes are remembered per (value, rate): a profile repeats a
// few values over thousands of samples.
type solver struct {
	memo map[[2]float64][]int64
	left int
}

// The budgets: finding the interval judges each interval tried on one of
// its own; reading the profile at one resolves each node once. A real
// profile takes a thousandth of them.
const (
	findBudget = 1 << 21
	readBudget = 1 << 22
)

func newSolver(budget int) *solver { return &solver{memo: map[[2]float64][]int64{}, left: budget} }

// exhausted reports whether the budget ran out: what the solver said
// since may be short of what it would have found.
func (sv *solver) exhausted() bool { return sv.left <= 0 }

func (sv *solver) sizes(v int64, rate float64) []int64 {
	k := [2]float64{float64(v), rate}
	if s, ok := sv.memo[k]; ok {
		return s
	}
	s := sizes(v, rate, &sv.left)
	sv.memo[k] = s
	return s
}

// readTries bounds the splits of a node's samples among sizes resolve
// tries against its selfSize when the profile is read; checkTries when an
// interval is judged, on checkNodes nodes: a few hundred nodes tell a
// wrong interval, and a profile of thousands would otherwise take
// seconds for each interval tried.
const (
	readTries  = 5000
	checkTries = 2000
	checkNodes = 300
)

// resolution is what a node's selfSize says of the sizes behind its
// values.
type resolution struct {
	// split is, for the one way of sharing each value's samples among
	// its sizes that gives selfSize exactly, the samples of each size
	// per value (split[i][j] of sizes[i][j]); nil when none or several
	// do, or too many would have to be tried.
	split, sizes [][]int64
	// solvable: every value has a size at all; checked: every split was
	// tried, and best is the closest any came to selfSize, relative to
	// it.
	solvable, checked bool
	best              float64
}

// resolve judges the groups of one node (its values v, n samples each)
// against its selfSize, V8's sum over sizes b of b·round(n_b·s(b)). One
// size a value is tried first (most nodes allocate one size a value),
// and taken when exactly one such fits; then every way of sharing each
// value's samples among the sizes that write it (24- and 48-byte objects
// both write 131088 at 128 KiB), which says how near selfSize any comes,
// and is taken when exactly one fits.
func resolve(groups []group, selfSize float64, rate float64, sv *solver, maxTries int) resolution {
	r := resolution{sizes: make([][]int64, len(groups))}
	scales := make([][]float64, len(groups))
	for i, g := range groups {
		r.sizes[i] = sv.sizes(g.v, rate)
		if len(r.sizes[i]) == 0 {
			return r
		}
		for _, b := range r.sizes[i] {
			scales[i] = append(scales[i], scale(float64(b), rate))
		}
	}
	r.solvable = true
	if whole := r.wholeFit(groups, scales, selfSize, sv, maxTries); whole != nil {
		// One of the splits gives selfSize exactly: nothing comes nearer.
		r.split, r.checked, r.best = whole, true, 0
		return r
	}
	if split, exact := r.splits(groups, scales, selfSize, sv, maxTries); r.checked && exact == 1 {
		r.split = split
	}
	return r
}

// splits tries every way of sharing each group's samples among its
// sizes, within maxTries and the solver's budget: it sets r.best and
// r.checked, and returns the first split that gives selfSize exactly and
// how many do.
func (r *resolution) splits(groups []group, scales [][]float64, selfSize float64, sv *solver, maxTries int) (first [][]int64, exact int) {
	r.best = math.Inf(1)
	split := make([][]int64, len(groups))
	for i := range split {
		split[i] = make([]int64, len(r.sizes[i]))
	}
	tries := 0
	// share gives group i's size j, and each after it, the left of the
	// group's samples, and goes on to the next group; false stops: too
	// many tries.
	var share func(i, j int, left, sum int64) bool
	share = func(i, j int, left, sum int64) bool {
		if i == len(groups) {
			if tries++; tries > maxTries || sv.left <= 0 {
				return false
			}
			sv.left--
			d := math.Abs(float64(sum)-selfSize) / max(selfSize, 1)
			r.best = min(r.best, d)
			if d == 0 {
				if exact++; exact == 1 {
					first = clone2(split)
				}
			}
			return true
		}
		sz, sc := r.sizes[i], scales[i]
		if j == len(sz)-1 {
			split[i][j] = left
			next := int64(0)
			if i+1 < len(groups) {
				next = groups[i+1].n
			}
			return share(i+1, 0, next, sum+sz[j]*int64(math.Floor(float64(left)*sc[j]+0.5)))
		}
		for c := int64(0); c <= left; c++ {
			split[i][j] = c
			if !share(i, j+1, left-c, sum+sz[j]*int64(math.Floor(float64(c)*sc[j]+0.5))) {
				return false
			}
		}
		return true
	}
	r.checked = share(0, 0, groups[0].n, 0)
	return first, exact
}

func clone2(s [][]int64) [][]int64 {
	out := make([][]int64, len(s))
	for i := range s {
		out[i] = slices.Clone(s[i])
	}
	return out
}

// wholeFit returns the split that gives each value's samples all to one
// size, when exactly one such gives selfSize (nil otherwise, or when
// there are more than maxTries of them).
func (r *resolution) wholeFit(groups []group, scales [][]float64, selfSize float64, sv *solver, maxTries int) [][]int64 {
	combos := 1
	for i := range groups {
		if combos *= len(r.sizes[i]); combos > maxTries || combos > sv.left {
			return nil
		}
	}
	sv.left -= combos
	pick := make([]int, len(groups))
	var found []int
	exact := 0
	var walk func(i int, sum int64)
	walk = func(i int, sum int64) {
		if i == len(groups) {
			if float64(sum) == selfSize {
				if exact++; exact == 1 {
					found = slices.Clone(pick)
				}
			}
			return
		}
		for j, b := range r.sizes[i] {
			pick[i] = j
			walk(i+1, sum+b*int64(math.Floor(float64(groups[i].n)*scales[i][j]+0.5)))
		}
	}
	walk(0, 0)
	if exact != 1 {
		return nil
	}
	split := make([][]int64, len(groups))
	for i, j := range found {
		split[i] = make([]int64, len(r.sizes[i]))
		split[i][j] = groups[i].n
	}
	return split
}

// tolerance is how far from selfSize, relatively, a node's closest split
// may be at the interval V8 sampled at: none is exactly V8's only when a
// size behind a value is not among those tried (an object of an odd size),
// which moves it by a fraction of its size over the interval's. At
// another interval the values read as other sizes, a percent or more
// away.
const tolerance = 2e-3

// The intervals writers start V8's sampler with unless told otherwise:
// node --heap-prof-interval's default, and HeapProfiler.startSampling's
// (what Chrome DevTools uses).
const (
	nodeDefault     = 512 << 10
	devtoolsDefault = 32 << 10
)

// fit is how well an interval explains a profile: values no size gives
// at it, and nodes whose selfSize no assignment of sizes comes near.
type fit struct{ unsolvable, misfits int }

func (f fit) ok() bool { return f.unsolvable == 0 && f.misfits == 0 }

// check judges rate against the profile's nodes (each node's groups), as
// far as the solver's budget goes.
func check(nodes []node, byNode [][]group, rate float64, sv *solver) fit {
	var f fit
	for _, gs := range byNode {
		if sv.exhausted() {
			break
		}
		r := resolve(gs, nodes[gs[0].node].selfSize, rate, sv, checkTries)
		switch {
		case !r.solvable:
			f.unsolvable++
		case r.checked && r.best > tolerance:
			f.misfits++
		}
	}
	return f
}

// heaviest returns the groups of at most n nodes, those with the most
// samples first (the nodes whose selfSize says the most). Nodes of V8's
// VM states are left out: at intervals of 16 bytes and less, the
// allocations of the profile's writing filed under "(IDLE)" after its
// selfSize was taken made every interval misfit.
func heaviest(nodes []node, groups []group, n int) [][]group {
	var out [][]group
	eachNode(groups, func(gs []group) {
		if !nodes[gs[0].node].state {
			out = append(out, gs)
		}
	})
	weight := func(gs []group) (w int64) {
		for _, g := range gs {
			w += g.n
		}
		return w
	}
	slices.SortStableFunc(out, func(a, b []group) int { return cmp.Compare(weight(b), weight(a)) })
	return out[:min(n, len(out))]
}

// eachNode calls fn with the groups of each node in turn.
func eachNode(groups []group, fn func([]group)) {
	for k := 0; k < len(groups); {
		j := k
		for j < len(groups) && groups[j].node == groups[k].node {
			j++
		}
		fn(groups[k:j])
		k = j
	}
}

// findRate returns the sampling interval, a detail for the source line
// and a warning: opt, checked, when given; else the largest round
// interval (a power of two, a multiple of 1024 or of 1000) at or below
// the smallest value that explains the profile. Every value is at least
// R (b·round(s(b)) ≥ R), and the smallest objects write values just above
// it, so the interval is found below the smallest value, and the largest
// that fits is taken: a smaller one reads those values as larger objects.
func findRate(nodes []node, groups []group, opt float64) (rate float64, detail, warn string, err error) {
	sv := newSolver(findBudget)
	byNode := heaviest(nodes, groups, checkNodes)
	if opt > 0 {
		if f := check(nodes, byNode, opt, sv); !f.ok() {
			warn = fmt.Sprintf("--rate %s does not explain the profile (%d sample values no object size gives at it, %d nodes whose selfSize it does not give): V8 sampled at another interval; the estimates use --rate",
				round(opt), f.unsolvable, f.misfits)
		}
		return opt, "interval given with --rate", warn, nil
	}
	if len(groups) == 0 {
		return nodeDefault, "no samples", "", nil
	}
	vmin := groups[0].v
	for _, g := range groups {
		vmin = min(vmin, g.v)
	}
	for _, r := range candidates(float64(vmin)) {
		// Each interval is judged on a budget of its own; one that nothing
		// checked contradicts is taken.
		sv.left = findBudget
		if check(nodes, byNode, r, sv).ok() {
			return r, "interval found from its samples", "", nil
		}
	}
	return 0, "", "", fmt.Errorf("the sampling interval is not in the file, and no round interval at or below its smallest sample value (%d) explains it: pass it with --rate (node --heap-prof-interval, %d unless set; DevTools samples every %d)",
		vmin, nodeDefault, devtoolsDefault)
}

// vmState reports whether a call frame is one of V8's VM states, as the
// sampling heap profiler files allocations made outside JavaScript:
// "(IDLE)", "(V8 API)", "(GC)", "(EXTERNAL)"… A name in parentheses of
// capitals, digits and blanks, with no script: "(anonymous)" and
// "(root)" are not.
func vmState(cf callFrame) bool {
	f := cf.FunctionName
	if cf.URL != "" || len(f) < 3 || f[0] != '(' || f[len(f)-1] != ')' {
		return false
	}
	for _, c := range f[1 : len(f)-1] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '_') {
			return false
		}
	}
	return true
}

// candidates are the round intervals in [vmin/2, vmin], largest first.
func candidates(vmin float64) []float64 {
	var out []float64
	for k := 0; k <= 50; k++ {
		if r := math.Exp2(float64(k)); r <= vmin && r >= vmin/2 {
			out = append(out, r)
		}
	}
	for _, step := range []float64{1024, 1000} {
		for k, n := math.Floor(vmin/step), 0; k >= 1 && k*step >= vmin/2 && n < 64; k, n = k-1, n+1 {
			out = append(out, k*step)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return slices.Compact(out)
}

func round(x float64) string { return strconv.FormatFloat(math.Round(x), 'f', -1, 64) }
