package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	nt "github.com/heapest/heapest/internal/nettracetest"
)

type traceRow struct {
	Key         string   `json:"key"`
	Estimate    float64  `json:"estimate"`
	Lo          float64  `json:"lo"`
	Hi          float64  `json:"hi"`
	Samples     float64  `json:"samples"`
	OffsetBytes *float64 `json:"offset_bytes"`
	Method      string   `json:"method"`
}

// A trace row's interval is what the calculator prints for the row's
// samples and offset sum (.NET Approach 2 with the end-of-trace
// compensation): the two are one computation.
func TestTraceRowsMatchCalculator(t *testing.T) {
	w := nt.Workload{Seed: 7, Threads: 2, Types: []nt.TypeSpec{
		{Name: "System.String", Size: 48, Objects: 20000},
		{Name: "System.Byte[]", Size: 4000, Objects: 500},
	}}
	data, _ := nt.Simulate(w, nt.Options{Version: nt.V6, PID: 1})
	path := filepath.Join(t.TempDir(), "sim.nettrace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "report", "--format", "json", "--top", "0", path)
	if code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	var rep struct {
		By   string     `json:"by"`
		Rows []traceRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.By != "type" || len(rep.Rows) != 2 {
		t.Fatalf("by %q, %d rows; want by type, 2 rows", rep.By, len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.OffsetBytes == nil {
			t.Fatalf("%s: no offset_bytes", r.Key)
		}
		out, errOut, code := runCLI(t, "ci", "--format", "json", "--rate", "102400", "--open-end",
			"--samples", strconv.FormatFloat(r.Samples, 'f', -1, 64), "--offset-bytes", strconv.FormatFloat(*r.OffsetBytes, 'f', -1, 64))
		if code != 0 {
			t.Fatalf("ci: %s", errOut)
		}
		var c struct {
			Total traceRow `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		if r.Hi <= r.Lo || c.Total.Lo != r.Lo || c.Total.Hi != r.Hi || c.Total.Method != r.Method {
			t.Errorf("%s: report [%v, %v] %s, ci [%v, %v] %s", r.Key, r.Lo, r.Hi, r.Method, c.Total.Lo, c.Total.Hi, c.Total.Method)
		}
		// With the samples' sizes the calculator gives the row's estimate
		// too: both are the one constructor's Horvitz–Thompson sum.
		sizes := strings.TrimSuffix(strings.Repeat(strconv.Itoa(typeSize[r.Key])+",", int(r.Samples)), ",")
		out, errOut, code = runCLI(t, "ci", "--format", "json", "--rate", "102400", "--open-end", "--sizes", sizes,
			"--samples", strconv.FormatFloat(r.Samples, 'f', -1, 64), "--offset-bytes", strconv.FormatFloat(*r.OffsetBytes, 'f', -1, 64))
		if code != 0 {
			t.Fatalf("ci --sizes: %s", errOut)
		}
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		if c.Total.Estimate != r.Estimate || c.Total.Lo != r.Lo || c.Total.Hi != r.Hi {
			t.Errorf("%s: report %v [%v, %v], ci --sizes %v [%v, %v]", r.Key, r.Estimate, r.Lo, r.Hi, c.Total.Estimate, c.Total.Lo, c.Total.Hi)
		}
	}
}

// typeSize is the size of each simulated type of TestTraceRowsMatchCalculator.
var typeSize = map[string]int{"System.String": 48, "System.Byte[]": 4000}
