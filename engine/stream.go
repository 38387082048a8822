package engine

import (
	"errors"
	"fmt"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// A Survey is what a first pass over a file of rows (Scan) finds: whether
// they are sample rows of one source, which can then be read again as
// records one row at a time (SampleRecords) instead of all kept.
type Survey struct {
	// Samples is set when the first row is a sample row; OneSource when
	// every row has the first row's source.
	Samples, OneSource bool
	// Source names the rows' source: the first row's, or the file's
	// name when it has none.
	Source string
	rows   int
	p      parse.Profile
	// err is what Records would have said of the rows: the first bad
	// one's error, found in the survey so that none is sent before it.
	err error
}

// SurveyRows scans the rows of Parquet file in (survey: Scan without
// their stacks, which it does not read), noting what SampleRecords needs
// before it sends any record; it stops at the first row when that is not
// a sample row, and at the first of a second source. source names the
// source of rows that have none.
func SurveyRows(in *Input, source string) (*Survey, error) {
	sv := &Survey{OneSource: true}
	var profile *sampleProfile
	err := survey(in, in.Size, in.Name, func(row *Row) error {
		src := row.Source
		if src == "" {
			src = source
		}
		if sv.rows == 0 {
			sv.Samples, sv.Source = row.Part == PartSample, src
			profile = newSampleProfile(src)
		}
		if !sv.Samples {
			return errSurveyed
		}
		if src != sv.Source {
			sv.OneSource = false
			return errSurveyed
		}
		if sv.err == nil {
			if _, _, err := profile.add(row, sv.rows); err != nil {
				sv.err = err
			}
		}
		sv.rows++
		return nil
	})
	if err != nil && err != errSurveyed {
		return nil, err
	}
	if profile != nil {
		sv.p = profile.profile()
	}
	return sv, nil
}

// errSurveyed stops a survey that has seen enough.
var errSurveyed = errors.New("surveyed")

// SampleRecords reads the sample rows of a file that SurveyRows found to be
// of one source as that source's records, a record per row: what Records
// sends, a record per stack and type, merged by the collector instead
// (in the same order, so to the same statistics). A second Scan reads
// the rows; nothing of them is kept.
func SampleRecords(in *Input, sv *Survey) func(sink parse.Sink, threads bool) (*parse.Profile, error) {
	return func(sink parse.Sink, _ bool) (*parse.Profile, error) {
		if sv.err != nil {
			return nil, sv.err
		}
		if !sv.Samples || !sv.OneSource {
			return nil, fmt.Errorf("%s: not the sample rows of one source", in.Name)
		}
		p := sv.p
		parse.Begin(sink, &p)
		var rec parse.Record
		var pre parse.Precomputed
		profile := newSampleProfile(sv.Source)
		i := 0
		err := Scan(in, in.Size, in.Name, func(row *Row) error {
			v, s, err := profile.add(row, i)
			i++
			if err != nil {
				return err // the file changed since the survey
			}
			pre = parse.Precomputed{}
			pre.Stats[v], pre.Has[v] = s, true
			sendSample(sink, &rec, row.Stack, row.Type, &pre)
			p.Records++
			return nil
		})
		if err != nil {
			return nil, err
		}
		return &p, nil
	}
}

// sampleProfile checks sample rows one at a time and gathers the profile
// of their source that they make (profile).
type sampleProfile struct {
	name               string
	rows               int
	hasInUse, hasAlloc bool
	rate               float64
	mixedRate          bool
	// process is the source's process (its rows', parse.Source.Process):
	// a report of several sources tells by it which may be correlated.
	process string
}

func newSampleProfile(name string) *sampleProfile { return &sampleProfile{name: name} }

// profile is the profile of the rows added.
func (sp *sampleProfile) profile() parse.Profile {
	p := parse.Profile{Source: parse.Source{Path: sp.name, Format: "parquet", Rate: sp.rate,
		Detail: fmt.Sprintf("%d sample rows of heapest statistics", sp.rows), Process: sp.process}, HasInUse: sp.hasInUse, HasAlloc: sp.hasAlloc}
	if sp.mixedRate {
		p.Source.Rate = 0
	}
	return p
}

// add checks the source's row i and notes it; it returns the row's value
// and statistics.
func (sp *sampleProfile) add(r *Row, i int) (unbias.Value, ci.Stats, error) {
	if r.Part != PartSample {
		return 0, ci.Stats{}, fmt.Errorf("%s: row %d: part %q among sample rows: a file is either groups or samples", sp.name, i+1, r.Part)
	}
	v, err := unbias.ParseValue(r.Value)
	if err != nil {
		return 0, ci.Stats{}, fmt.Errorf("%s: row %d: %w", sp.name, i+1, err)
	}
	s, err := r.Columns.Stats()
	if err != nil {
		return 0, ci.Stats{}, fmt.Errorf("%s: row %d (%s): %w", sp.name, i+1, r.Key, err)
	}
	sp.hasInUse = sp.hasInUse || !v.IsAlloc()
	sp.hasAlloc = sp.hasAlloc || v.IsAlloc()
	if i == 0 {
		sp.rate, sp.process = s.Rate, r.Process
	} else if s.MixedRate || s.Rate != sp.rate {
		sp.mixedRate = true
	}
	sp.rows = i + 1
	return v, s, nil
}
