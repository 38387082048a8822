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
	reportFormatChoices = []render.Format{render.Table, render.CSV, render.JSON, render.Pprof, render.Parquet}
	ciFormatChoices     = []render.Format{render.Table, render.CSV, render.JSON, render.JUnit, render.Markdown}
	diffFormatChoices   = []render.Format{render.Table, render.CSV, render.JSON, render.Pprof}
)

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
	// Registration fails only for an unknown or doubly registered flag
	// name, a mistake in this file.
	if err := cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(e.names(), cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(err)
	}
}

// confidenceFlag is a confidence level, strictly between 0 and 1.
type confidenceFlag float64

func (c *confidenceFlag) String() string { return strconv.FormatFloat(float64(*c), 'g', -1, 64) }

func (c *confidenceFlag) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x > 0 && x < 1) {
		return fmt.Errorf("want a coverage strictly between 0 and 1, such as 0.95")
	}
	*c = confidenceFlag(x)
	return nil
}

func (c *confidenceFlag) Type() string { return "float" }

// confidenceVar defines --confidence with default 0.95.
func confidenceVar(cmd *cobra.Command, p *float64, usage string) {
	*p = 0.95
	cmd.Flags().Var((*confidenceFlag)(p), "confidence", usage)
}

// rateFlag is a sampling period: bytes, with or without a unit (512KiB,
// 1MiB, 524288), at least one byte.
type rateFlag float64

func (r *rateFlag) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) }

func (r *rateFlag) Set(s string) error {
	x, _, err := units.ParseSize(s)
	if err != nil || !(x >= 1) || math.IsInf(x, 0) {
		return fmt.Errorf("want a sampling period of at least 1 byte, in bytes or with a unit (524288, 512KiB)")
	}
	*r = rateFlag(x)
	return nil
}

func (r *rateFlag) Type() string { return "SIZE" }

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
