package render

import (
	"encoding/json"
	"io"
	"math"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// jsonReport is the JSON shape of SPEC section 6.
type jsonReport struct {
	Confidence float64      `json:"confidence"`
	Value      string       `json:"value"`
	Unit       string       `json:"unit"`
	By         string       `json:"by"`
	Sources    []jsonSource `json:"sources"`
	Total      jsonResult   `json:"total"`
	Rows       []jsonRow    `json:"rows"`
	Omitted    int          `json:"omitted,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
}

type jsonSource struct {
	Path    string  `json:"path"`
	Format  string  `json:"format"`
	Rate    float64 `json:"rate"`
	Samples float64 `json:"samples"`
	Detail  string  `json:"detail,omitempty"`
}

type jsonResult struct {
	Estimate     float64  `json:"estimate"`
	Lo           float64  `json:"lo"`
	Hi           float64  `json:"hi"`
	Samples      float64  `json:"samples"`
	SamplesBound bool     `json:"samples_bound,omitempty"`
	Method       string   `json:"method"`
	Notes        []string `json:"notes,omitempty"`
	// OffsetBytes is .NET Approach 2's u, present for trace rows, so that
	// heapest ci --samples S --offset-bytes U --open-end reproduces the row.
	OffsetBytes *float64 `json:"offset_bytes,omitempty"`
}

type jsonRow struct {
	Key   string   `json:"key"`
	Stack []string `json:"stack,omitempty"`
	jsonResult
	Cum *jsonResult `json:"cum,omitempty"`
}

func toJSONResult(r ci.Result, s ci.Stats) jsonResult {
	j := jsonResult{Estimate: finite(r.Estimate), Lo: finite(r.Lo), Hi: finite(r.Hi), Samples: r.Samples,
		SamplesBound: s.SamplesBound, Method: r.Method, Notes: r.Notes}
	if s.HasOffset {
		u := s.Offset
		j.OffsetBytes = &u
	}
	return j
}

// finite keeps JSON valid: an unbounded upper limit is written as the
// largest float64 (JSON has no infinity).
func finite(x float64) float64 {
	if math.IsInf(x, 1) {
		return math.MaxFloat64
	}
	return x
}

// WriteJSON writes r as JSON with every number unrounded.
func WriteJSON(w io.Writer, r *report.Report) error {
	out := jsonReport{Confidence: r.Confidence, Value: r.Value.String(), Unit: r.Value.Unit(), By: r.By.String(),
		Total: toJSONResult(r.Total.Flat, r.Total.Stats), Rows: []jsonRow{}, Omitted: r.Omitted, Notes: r.Notes}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, jsonSource{Path: s.Path, Format: s.Format, Rate: s.Rate, Samples: s.Samples, Detail: s.Detail})
	}
	for _, row := range r.Rows {
		jr := jsonRow{Key: row.Key, Stack: row.Stack, jsonResult: toJSONResult(row.Flat, row.Stats)}
		if row.Cum != nil {
			c := toJSONResult(*row.Cum, row.CumStats)
			jr.Cum = &c
		}
		out.Rows = append(out.Rows, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
