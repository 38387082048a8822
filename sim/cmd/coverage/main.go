// Command coverage runs heapest's coverage study (package sim) and writes
// its results into the docs: docs/coverage.csv (every number),
// docs/coverage_objects.csv (the same for object counts),
// docs/coverage.svg (the plot) and the generated sections of
// docs/statistics.md (between the "BEGIN GENERATED" and "END GENERATED"
// markers).
//
//	go -C sim/cmd/coverage run . -reps 10000 -docs ../../../docs
//
// It is a module of its own (see go.mod here) so that the plotting library
// is not a dependency of heapest: run it with -C from the repository root.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heapest/heapest/sim"
	"github.com/heapest/heapest/unbias"
)

func main() {
	reps := flag.Int("reps", 10000, "replicates per scenario and dump encoding (0: skip the bytes study)")
	objReps := flag.Int("objects-reps", 10000, "replicates for the object-count study (0: skip it)")
	docs := flag.String("docs", "docs", "docs directory to write into")
	seed := flag.Uint64("seed", 2026, "random seed")
	flag.Parse()
	if err := run(*reps, *objReps, *seed, *docs); err != nil {
		log.Fatal(err)
	}
}

func run(reps, objReps int, seed uint64, docs string) error {
	cp, err := campPaulsonTable()
	if err != nil {
		return err
	}
	sections := map[string]string{"scenarios": scenarioList(), "camp-paulson": cp}
	if reps > 0 {
		results, err := study(reps, seed, unbias.InUseSpace)
		if err != nil {
			return err
		}
		if err := writeCSV(filepath.Join(docs, "coverage.csv"), results); err != nil {
			return err
		}
		if err := writePlot(filepath.Join(docs, "coverage.svg"), results); err != nil {
			return err
		}
		sections["coverage"] = coverageTable(results, reps)
		sections["widths"] = widthTable(results)
		sections["totals"] = totalsTable(results)
	}
	if objReps > 0 {
		objects, err := study(objReps, seed+1, unbias.InUseObjects)
		if err != nil {
			return err
		}
		if err := writeCSV(filepath.Join(docs, "coverage_objects.csv"), objects); err != nil {
			return err
		}
		sections["coverage-objects"] = coverageTable(objects, objReps)
	}
	return replaceSections(filepath.Join(docs, "statistics.md"), sections)
}

// study runs every scenario in both dump encodings for one value.
func study(reps int, seed uint64, v unbias.Value) ([]sim.StudyResult, error) {
	start := time.Now()
	var results []sim.StudyResult
	for _, sc := range sim.Scenarios() {
		for _, enc := range []sim.Encoding{sim.Raw, sim.Unbias} {
			// Object counts are scored against the allocations of the
			// sizes sampled (sim.Options.Conditional): that is what
			// heapest's object intervals claim (method "conditional").
			r, err := sim.Run(sc, enc, sim.Options{Reps: reps, Seed: seed, Confidence: 0.95, Value: v,
				Conditional: !v.IsSpace()})
			if err != nil {
				return nil, err
			}
			log.Printf("%s %s/%s: auto %.4f (%s)", v, sc.Name, enc, r.Tallies[0].Coverage(), time.Since(start).Round(time.Second))
			results = append(results, r)
		}
	}
	return results, nil
}

// replaceSections rewrites the text between "<!-- BEGIN GENERATED name -->"
// and "<!-- END GENERATED name -->" for every name.
func replaceSections(path string, sections map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(b)
	for name, body := range sections {
		begin := "<!-- BEGIN GENERATED " + name + " -->"
		end := "<!-- END GENERATED " + name + " -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			return fmt.Errorf("%s: markers for %q not found", path, name)
		}
		doc = doc[:i+len(begin)] + "\n" + body + doc[j:]
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
