package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/unbias"
)

// Flags are parsed and validated here, once, as they are read: a bad value
// is a usage error before any input is opened, and the commands receive
// typed values.

// The choices each enumerated flag offers, in the order help lists them.
var (
	methodChoices       = []ci.Method{ci.Auto, ci.Exact, ci.CampPaulson, ci.Gamma, ci.Normal}
	valueChoices        = []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}
	byChoices           = []aggregate.By{aggregate.ByFunc, aggregate.ByStack, aggregate.ByLeaf, aggregate.ByThread, aggregate.BySize, aggregate.ByType, aggregate.BySource}
	reportFormatChoices = []render.Format{render.Table, render.CSV, render.JSON, render.Pprof, render.Parquet, render.SVG, render.HTML}
	ciFormatChoices     = []render.Format{render.Table, render.CSV, render.JSON, render.JUnit, render.Markdown}
	diffFormatChoices   = []render.Format{render.Table, render.CSV, render.JSON, render.Pprof, render.SVG}
	unbiasChoices       = []unbiasMode{unbiasAuto, "on", "off"}
	samplerChoices      = []samplerKind{samplerExponential, samplerGeometric}
)

// samplerKind is the calculator's --sampler: how the sample points fall,
// which decides π(Z) (unbias.Samples.Geometric). An input file's
// sampler is its format's.
type samplerKind string

const (
	// samplerExponential: sample points with exponential gaps (Go,
	// tcmalloc, gperftools, heapprofd, V8): π = 1 − exp(−Z/R).
	samplerExponential samplerKind = "exponential"
	// samplerGeometric: a trial per byte (jemalloc, .NET's
	// AllocationSampled): π = 1 − (1−1/R)^Z.
	samplerGeometric samplerKind = "geometric"
)

func (k samplerKind) String() string { return string(k) }

// unbiasMode is --jemalloc-unbias: how jemalloc 5.3 dumps were written,
// as parse.Options.JemallocUnbias takes it.
type unbiasMode string

const unbiasAuto unbiasMode = "auto"

func (m unbiasMode) String() string { return string(m) }

// enumFlag is a flag whose value is one of a fixed list of choices, named
// by their String. As a pflag.Value it lets cobra's help show the choices
// as the flag's placeholder ("--by func|stack|...") and shell completion
// offer them.
type enumFlag[T fmt.Stringer] struct {
	value   *T
	choices []T
	// optional flags have no default of their own (it depends on the
	// input): unset, they print as "" so help shows no default.
	optional, set bool
}

func (e *enumFlag[T]) String() string {
	if e.optional && !e.set {
		return ""
	}
	return (*e.value).String()
}

// Set accepts exactly one of the choices' names.
func (e *enumFlag[T]) Set(s string) error {
	for _, c := range e.choices {
		if c.String() == s {
			*e.value, e.set = c, true
			return nil
		}
	}
	return fmt.Errorf("want %s", orList(e.names()))
}

// Type is the placeholder help prints: the choices themselves.
func (e *enumFlag[T]) Type() string { return strings.Join(e.names(), "|") }

func (e *enumFlag[T]) names() []string {
	out := make([]string, len(e.choices))
	for i, c := range e.choices {
		out[i] = c.String()
	}
	return out
}

// enumVar defines an enumerated flag that starts as *p and offers its
// choices to shell completion. An optional flag's default is decided
// later from the input (cmd.Flags().Changed tells whether it was given).
func enumVar[T fmt.Stringer](cmd *cobra.Command, p *T, name string, choices []T, optional bool, usage string) {
	e := &enumFlag[T]{value: p, choices: choices, optional: optional}
	cmd.Flags().Var(e, name, usage)
	flag := cmd.Flags().Lookup(name)
	// A flag hidden later (list's --by, which a listing refuses) offers
	// no values either.
	complete := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		if flag.Hidden {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return e.names(), cobra.ShellCompDirectiveNoFileComp
	}
	// Registration fails only for an unknown or doubly registered flag
	// name, a mistake in this file.
	if err := cmd.RegisterFlagCompletionFunc(name, complete); err != nil {
		panic(err)
	}
}

// confidenceFlag is a confidence level, strictly between 0 and 1, given
// as a fraction (0.95) or, as --threshold and --precision are, as a
// percentage (95%).
type confidenceFlag float64

func (c *confidenceFlag) String() string { return strconv.FormatFloat(float64(*c), 'g', -1, 64) }

func (c *confidenceFlag) Set(s string) error {
	var x float64
	var err error
	if strings.HasSuffix(strings.TrimSpace(s), "%") {
		x, err = units.ParsePercent(s)
	} else {
		x, err = strconv.ParseFloat(s, 64)
	}
	if err == nil && x > 1 && x < 100 && !strings.HasSuffix(strings.TrimSpace(s), "%") {
		return fmt.Errorf("want a coverage strictly between 0 and 1; did you mean %s (%s%%)?", strconv.FormatFloat(x/100, 'g', 12, 64), strings.TrimSpace(s))
	}
	if err != nil || !(x > 0 && x < 1) {
		return fmt.Errorf("want a coverage strictly between 0 and 1, such as 0.95 (or 95%%)")
	}
	if x < minConfidence || x > maxConfidence {
		// Nearer 1, 1 − x is a few units of the last place: the
		// quantiles' probabilities are no longer apart from 0 and 1.
		return fmt.Errorf("want a coverage from %v to %v, such as 0.95 (or 95%%)", minConfidence, maxConfidence)
	}
	*c = confidenceFlag(x)
	return nil
}

func (c *confidenceFlag) Type() string { return "float" }

// minConfidence and maxConfidence bound --confidence: twelve nines at most.
const (
	minConfidence = 1e-6
	maxConfidence = 0.999999999999
)

// confidenceVar defines --confidence with default 0.95.
func confidenceVar(cmd *cobra.Command, p *float64) {
	*p = 0.95
	cmd.Flags().Var((*confidenceFlag)(p), "confidence", "coverage of the intervals, a `LEVEL` in (0,1) or a percentage: 0.99 or 99%")
}

// sizeFlag is a size in bytes, with or without a unit (524288, 512KiB,
// 1MiB), of at least min: how every size heapest reads is given.
type sizeFlag struct {
	p    *float64
	min  float64
	what string // "a sampling period", "a size", ...
}

func (f sizeFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f sizeFlag) Set(s string) error {
	x, err := parseSize(s, f.min, f.what)
	if err != nil {
		return err
	}
	*f.p = x
	return nil
}

func (f sizeFlag) Type() string { return "SIZE" }

// parseSize reads one size of at least min.
// maxSize bounds every size a flag takes: 2⁶², far beyond any heap, and
// below where sizes stop being whole int64 byte counts (8EiB overflowed).
const maxSize = 1 << 62

func parseSize(s string, min float64, what string) (float64, error) {
	x, _, err := units.ParseSize(s)
	if err == nil && x > maxSize {
		return 0, fmt.Errorf("want %s of at most 4096PiB", what)
	}
	if err != nil || !(x >= min) || math.IsInf(x, 0) {
		unit := "bytes"
		if min == 1 {
			unit = "byte"
		}
		return 0, fmt.Errorf("want %s of at least %g %s, in bytes or with a unit (524288, 512KiB; KiB to PiB, KB to PB)", what, min, unit)
	}
	return x, nil
}

// sizeVar defines a size flag.
func sizeVar(cmd *cobra.Command, p *float64, name string, min float64, what, usage string) {
	cmd.Flags().Var(sizeFlag{p: p, min: min, what: what}, name, usage)
}

// sizesFlag is a list of sizes, comma-separated or repeated.
type sizesFlag struct{ p *[]float64 }

func (f sizesFlag) String() string {
	if len(*f.p) == 0 {
		return "" // no "(default [])" in the help
	}
	var parts []string
	for _, z := range *f.p {
		parts = append(parts, strconv.FormatFloat(z, 'g', -1, 64))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (f sizesFlag) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		z, err := parseSize(part, 1, "sizes")
		if err != nil {
			return fmt.Errorf("%s: %w", part, err)
		}
		*f.p = append(*f.p, z)
	}
	return nil
}

func (f sizesFlag) Type() string { return "SIZES" }

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
