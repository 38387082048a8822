// Package gate decides heapest ci's gates: budgets, which fail when a
// group's value is significantly above a limit, and a baseline, which
// fails a row whose value grew significantly beyond a threshold. Each is
// a one-sided test at level (1 − confidence)/2, so that a gate fails
// exactly when the two-sided interval it prints lies wholly beyond its
// limit; with many gates and rows, Holm's procedure keeps the chance of
// any false failure at that level.
package gate

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/internal/units"
)

// Rule is one budget: the value of the cells it names must not exceed
// Limit.
type Rule struct {
	// Text is the rule as written.
	Text string
	// Total is set for a budget on everything; otherwise By and Pattern
	// name the cells (see report.Builder.Select).
	Total   bool
	By      aggregate.By
	Pattern *regexp.Regexp
	// Limit is in bytes or objects; Bytes says it was written with a
	// byte unit, Count with a count's SI suffix ("2k", "1.5M"), which
	// a size may not take ("write the unit in full").
	Limit float64
	Bytes bool
	Count bool
}

// Fits checks that the rule's limit is written for a value whose numbers
// are bytes (space) or objects: a byte unit only for bytes, a count's
// suffix only for objects. value names the value in the error.
func (r Rule) Fits(space bool, value string) error {
	limit := strings.TrimSpace(r.Text[strings.LastIndex(r.Text, "<=")+2:])
	switch {
	case r.Bytes && !space:
		return fmt.Errorf("budget %q: %q is a size in bytes, and %s counts objects: give a count, such as 2000 or 2k", r.Text, limit, value)
	case r.Count && space:
		num, unit := strings.TrimSpace(limit[:len(limit)-1]), strings.ToUpper(limit[len(limit)-1:])
		return fmt.Errorf("budget %q: %q is a count of objects, and %s is in bytes: write the unit in full, %s%siB (binary) or %s%sB (decimal)",
			r.Text, limit, value, num, unit, num, unit)
	case !space && r.Limit != math.Trunc(r.Limit):
		return fmt.Errorf("budget %q: %q objects: a count is a whole number", r.Text, limit)
	}
	return nil
}

// ruleKeys are the keys a rule may name, and what each selects.
var ruleKeys = map[string]aggregate.By{
	"func":   aggregate.ByFunc,
	"leaf":   aggregate.ByLeaf,
	"type":   aggregate.ByType,
	"thread": aggregate.ByThread,
	"source": aggregate.BySource,
}

// RuleSyntax describes a rule, for errors and help.
const RuleSyntax = "KEY=REGEX<=LIMIT or total<=LIMIT, KEY one of func, leaf, type, thread, source, LIMIT a size (50MiB) or, for object values, a count (2000, 2k)"

// ParseRule reads a budget: "total<=2GiB", "func=^rocksdb::<=50MiB",
// "type=System.String<=10MB".
func ParseRule(s string) (Rule, error) {
	r := Rule{Text: strings.TrimSpace(s)}
	i := strings.LastIndex(r.Text, "<=")
	if i < 0 {
		return r, fmt.Errorf("budget %q: want %s", s, RuleSyntax)
	}
	lhs, limit := strings.TrimSpace(r.Text[:i]), r.Text[i+2:]
	var err error
	if r.Limit, r.Bytes, err = units.ParseSize(limit); err != nil {
		// Not a size: a count with a suffix ("2M"), for object values.
		var cerr error
		if r.Limit, r.Count, cerr = units.ParseCount(limit); cerr != nil {
			return r, fmt.Errorf("budget %q: %q: want a size (4096, 512KiB, 10MB) or, for object values, a count (2000, 2k, 1.5M)", s, strings.TrimSpace(limit))
		} else if !r.Count {
			return r, fmt.Errorf("budget %q: %v", s, err)
		}
	}
	if lhs == "total" {
		r.Total = true
		return r, nil
	}
	key, expr, ok := strings.Cut(lhs, "=")
	by, known := ruleKeys[strings.TrimSpace(key)]
	if !ok || !known {
		return r, fmt.Errorf("budget %q: want %s", s, RuleSyntax)
	}
	r.By = by
	if r.Pattern, err = regexp.Compile(expr); err != nil {
		return r, fmt.Errorf("budget %q: %v", s, err)
	}
	return r, nil
}

// ParseRules reads a budgets file: one rule a line; blank lines and
// lines starting with # are ignored. Errors name the file and line.
func ParseRules(r io.Reader, name string) ([]Rule, error) {
	var rules []Rule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			// A byte order mark, as Windows editors save UTF-8.
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rule, err := ParseRule(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return rules, nil
}
