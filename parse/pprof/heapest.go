package pprof

// heapest's own pprof output (render/pprof.go) read back. Each sample is one
// stack with the exact ci.Stats of every value heapest computed for it,
// carried in one string label "heapest": the statistics of each sample
// type in ci.Stats' text form, in sample type order, separated by "|"
// (numeric labels are int64 and would round the variance). The sample
// values are those estimates rounded, for pprof viewers. Reading the label
// back reproduces the statistics, and so the intervals, exactly, and lets
// such files be merged again. Files of the first version
// ("heapest-pprof/1") carried one label "heapest.<value>" per value; they
// are still read.

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/parse"
)

// HeapestMarker is the comment that marks a profile.proto written by
// heapest; its version changes when the label encoding does.
const HeapestMarker = "heapest-pprof/2"

// DiffComment is the comment of heapest diff's pprof output: NEW's
// estimates and BASE's negated, which pprof shows as a diff and which is
// no heap profile to read again.
const DiffComment = "heapest diff: unbiased estimates of NEW, and of BASE negated (tag pprof::base)"

// heapestMarkerV1 marks heapest's output with one statistics label per value.
const heapestMarkerV1 = "heapest-pprof/1"

// StatsLabelKey is the string label key carrying every value's statistics
// in heapest's pprof output: ci.Stats.MarshalText of each sample type, in
// sample type order, separated by StatsSeparator ("" for a value the
// sample has nothing of).
const StatsLabelKey = "heapest"

// StatsSeparator separates the values' statistics in the StatsLabelKey
// label; ci.Stats' text form never holds it.
const StatsSeparator = "|"

// StatsSameAs starts a part of the StatsLabelKey label that stands for
// the statistics of an earlier sample type: "=0" repeats the first.
const StatsSameAs = "="

// heapestValueNames are the four values in unbias.Value order, which
// Precomputed's arrays follow.
var heapestValueNames = [4]string{"inuse_space", "inuse_objects", "alloc_space", "alloc_objects"}

const statsLabelPrefix = "heapest."

// TypeLabel is the string label key carrying the allocated type a
// sample's statistics are of, when the input had types (a trace, a JFR
// recording): heapest's output has one sample per stack and type, so that
// a merge read back groups --by type as its inputs did.
const TypeLabel = statsLabelPrefix + "type"

// StatsLabel is the string label key carrying a value's statistics
// (ci.Stats.MarshalText) in heapest's pprof output.
func StatsLabel(value string) string { return statsLabelPrefix + value }

// mergedPrefix starts the comment that carries a parse.Merged: what a
// merge was made of, so that a merge of merges can report the inputs
// underneath.
const mergedPrefix = "heapest-merged: "

// MergedComment is m as a profile comment, read back by the parser into
// parse.Profile.Merged. Its fields are URL-query encoded (sorted keys,
// escaped values): file paths and build names may hold any character.
func MergedComment(m *parse.Merged) string {
	v := url.Values{}
	v.Set("inputs", strconv.Itoa(m.Inputs))
	v.Set("skipped", strconv.Itoa(m.Skipped))
	v.Set("processes", strconv.Itoa(m.Processes))
	v.Set("rate_min", strconv.FormatFloat(m.RateMin, 'g', -1, 64))
	v.Set("rate_max", strconv.FormatFloat(m.RateMax, 'g', -1, 64))
	addCounts(v, "format", ':', m.Formats)
	for _, b := range m.Builds {
		v.Add("build", b)
	}
	addCounts(v, "family", '*', m.Families)
	if m.Correlated > 1 {
		v.Set("correlated", strconv.FormatFloat(m.Correlated, 'g', -1, 64))
	}
	for _, k := range m.Keys {
		v.Add("key", k)
	}
	for _, k := range m.Held {
		v.Add("held", k)
	}
	return mergedPrefix + v.Encode()
}

// addCounts adds counts to v under key, one NAME<sep>COUNT value each, in
// the names' order.
func addCounts(v url.Values, key string, sep byte, counts map[string]int) {
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		v.Add(key, name+string(sep)+strconv.Itoa(counts[name]))
	}
}

// readCounts reads addCounts' values of key back (nil for none); a count
// must be at least atLeast.
func readCounts(v url.Values, key string, sep byte, atLeast int) (map[string]int, error) {
	var counts map[string]int
	for _, e := range v[key] {
		i := strings.LastIndexByte(e, sep)
		n, err := strconv.Atoi(e[i+1:])
		if i < 0 || err != nil || n < atLeast {
			return nil, fmt.Errorf("%s=%q: want NAME%cCOUNT", key, e, sep)
		}
		if counts == nil {
			counts = map[string]int{}
		}
		counts[e[:i]] += n
	}
	return counts, nil
}

// parseMerged reads a MergedComment back.
func parseMerged(c string) (*parse.Merged, error) {
	v, err := url.ParseQuery(strings.TrimPrefix(c, mergedPrefix))
	if err != nil {
		return nil, err
	}
	m := &parse.Merged{Formats: map[string]int{}, Builds: v["build"], Keys: v["key"], Held: v["held"]}
	ints := []struct {
		key string
		dst *int
	}{{"inputs", &m.Inputs}, {"skipped", &m.Skipped}, {"processes", &m.Processes}}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(v.Get(f.key)); err != nil || *f.dst < 0 {
			return nil, fmt.Errorf("%s=%q: want a count", f.key, v.Get(f.key))
		}
	}
	if m.RateMin, err = strconv.ParseFloat(v.Get("rate_min"), 64); err != nil {
		return nil, fmt.Errorf("rate_min: %v", err)
	}
	if m.RateMax, err = strconv.ParseFloat(v.Get("rate_max"), 64); err != nil {
		return nil, fmt.Errorf("rate_max: %v", err)
	}
	formats, err := readCounts(v, "format", ':', 0)
	if err != nil {
		return nil, err
	}
	for f, n := range formats {
		m.Formats[f] += n
	}
	// Files written before families were recorded have none: a family
	// their merge split is not found again.
	if m.Families, err = readCounts(v, "family", '*', 1); err != nil {
		return nil, err
	}
	if c := v.Get("correlated"); c != "" {
		if m.Correlated, err = strconv.ParseFloat(c, 64); err != nil || !(m.Correlated >= 1) || math.IsInf(m.Correlated, 0) {
			return nil, fmt.Errorf("correlated=%q: want a factor ≥ 1", c)
		}
	}
	return m, nil
}

// mergeIdentity tells a merge apart by what it merged: the comments that
// list its inputs (and those underneath, in the MergedComment) and those
// it skipped. Copies of one merge share it; two merges of other inputs
// never do, whatever processes they hold.
func mergeIdentity(comments []string) string {
	h := fnv.New64a()
	for _, c := range comments {
		if strings.HasPrefix(c, mergedPrefix) || strings.HasPrefix(c, "source: ") || strings.HasPrefix(c, SkippedPrefix) {
			h.Write([]byte(c))
			h.Write([]byte{0})
		}
	}
	return fmt.Sprintf("merge-%016x", h.Sum64())
}

// readMerged finds the MergedComment among d's comments (nil: none).
func readMerged(d *decoded) (*parse.Merged, error) {
	var m *parse.Merged
	var why []string
	for _, c := range d.Comments {
		if w, ok := strings.CutPrefix(c, SkippedPrefix); ok {
			why = append(why, w)
		}
		if strings.HasPrefix(c, mergedPrefix) && m == nil {
			var err error
			if m, err = parseMerged(c); err != nil {
				return nil, &parse.Error{File: d.name, Offset: -1, Msg: "comment " + strings.TrimSpace(mergedPrefix), Err: err}
			}
		}
	}
	if m != nil {
		m.SkippedWhy = why
	}
	return m, nil
}

// SkippedPrefix starts the comment of heapest's output for an input its
// merge left out, the input's error after it.
const SkippedPrefix = "skipped: "

func isHeapestProfile(d *decoded) bool {
	for _, c := range d.Comments {
		if c == HeapestMarker || c == heapestMarkerV1 {
			return true
		}
	}
	return false
}

// readHeapest turns heapest's own samples back into records whose Pre holds
// the statistics as written. One Precomputed serves every record.
func readHeapest(d *decoded, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "heapest")
	out.Source.Detail = "heapest pprof output: statistics read back exactly"
	var err error
	if out.Merged, err = readMerged(d); err != nil {
		return nil, err
	}
	if out.Merged != nil && out.Merged.Inputs > 1 {
		out.Source.Recording = mergeIdentity(d.Comments)
	}
	e := newEmitter(d, out, sink)
	rate, mixedRate := 0.0, false
	lo, hi := math.Inf(1), 0.0 // the samples' sampling periods
	pre := &parse.Precomputed{}
	read := func(i int, s *sample) error { return readPre(d, i, s, pre) }
	if d.needsCheck() {
		if err := d.scan(true, read); err != nil {
			return nil, err
		}
	}
	types := map[uint64]string{} // one string per type: the collector interns by address
	repeated := 0
	err = d.scan(false, func(i int, s *sample) error {
		if err := read(i, s); err != nil {
			return err
		}
		k, err := copiesOf(d, i, s, pre)
		if err != nil {
			return err
		}
		if k > 1 {
			repeated++
			for v := range pre.Stats {
				pre.Stats[v].Repeat(float64(k))
			}
		}
		e.rec.SetPrecomputed(pre)
		if t, ok := d.strLabelIndex(s, labelHeapestType); ok {
			if _, seen := types[t]; !seen {
				types[t] = string(d.strs.at(int(t)))
			}
			e.rec.Type = types[t]
		}
		if out.Records == 0 {
			rate = e.rec.Rate
		} else if e.rec.Rate != rate {
			mixedRate = true
		}
		if r := e.rec.Rate; r > 0 {
			lo, hi = min(lo, r), max(hi, r)
		}
		out.HasInUse = out.HasInUse || pre.Has[0] || pre.Has[1]
		out.HasAlloc = out.HasAlloc || pre.Has[2] || pre.Has[3]
		return e.send(i, s)
	})
	if err != nil {
		return nil, err
	}
	if mixedRate {
		rate = 0
	}
	if repeated > 0 {
		what := "samples of heapest's output hold"
		if repeated == 1 {
			what = "sample of heapest's output holds"
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"%d %s several samples' values with one sample's statistics: pprof merged heapest's files (go tool pprof -proto a b), adding samples of equal labels; each is read as that many independent samples. heapest merge of the files keeps every sample, and tells dumps of one process apart",
			repeated, what))
	}
	if m := out.Merged; m != nil && hi > 0 && (lo < m.RateMin*(1-1e-9) || hi > m.RateMax*(1+1e-9)) {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"its samples were sampled at periods %s–%s, outside its header's %s–%s: it is heapest's output combined with another by a tool that keeps one file's comments (go tool pprof -proto a b), so what its header says it merged (%d inputs, the processes it holds) is one part's, and a merge cannot tell which inputs it holds twice; merge the parts with heapest merge instead",
			units.Format(lo, true), units.Format(hi, true), units.Format(m.RateMin, true), units.Format(m.RateMax, true), m.Inputs))
	}
	if opt.Rate > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"--rate %s ignored: the file holds heapest's statistics, computed with their own sampling periods", parse.RateText(opt.Rate)))
	}
	return e.finish(rate), nil
}

// readPre reads sample i's statistics labels into pre.
func readPre(d *decoded, i int, s *sample, pre *parse.Precomputed) error {
	*pre = parse.Precomputed{}
	if text, ok := d.strLabel(s, labelHeapestAll); ok {
		if err := readStatsLabel(d, text, pre); err != nil {
			return &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("sample %d: label %s", i, StatsLabelKey), Err: err}
		}
	}
	for v := range heapestValueNames {
		text, ok := d.strLabel(s, labelHeapest+uint8(v))
		if !ok {
			continue
		}
		if err := pre.Stats[v].UnmarshalText(text); err != nil {
			return &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("sample %d: label %s", i, StatsLabel(heapestValueNames[v])), Err: err}
		}
		pre.Has[v] = true
	}
	if !pre.Has[0] && !pre.Has[1] && !pre.Has[2] && !pre.Has[3] {
		return &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("sample %d has no heapest statistics label (file marked %s)", i, HeapestMarker)}
	}
	return nil
}

// maxCopies bounds the copies one sample may stand for (copiesOf): more
// is no merge of heapest's files but a value changed after writing.
const maxCopies = 1 << 20

// copiesOf is how many samples of heapest's output sample s (whose
// statistics pre holds) is the sum of. heapest writes each value as its
// estimate rounded; pprof's merge (go tool pprof -proto a b) adds the
// values of samples whose stack and labels are equal, which the samples
// of identical statistics are (exact rows, rows of a sample or two), and
// keeps one label: the value is then k times the estimate, and the label
// stands for k samples. A value that is no such multiple was changed
// after heapest wrote it, and the statistics no longer describe it.
func copiesOf(d *decoded, i int, s *sample, pre *parse.Precomputed) (int64, error) {
	k := int64(0)
	for t, st := range d.SampleType {
		v := slices.Index(heapestValueNames[:], st.Type)
		if v < 0 || !pre.Has[v] || t >= len(s.Value) {
			continue
		}
		want, got := int64(math.Round(pre.Stats[v].Estimate)), s.Value[t]
		switch {
		case want == 0 && got == 0:
			continue // any number of copies of nothing
		case want == 0 || got%want != 0 || got/want < 1 || got/want > maxCopies || k > 0 && got/want != k:
			return 0, &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf(
				"sample %d: its %s value %d is not its statistics' estimate %d, nor a multiple of it (a merge of heapest's files by pprof): the file was changed after heapest wrote it",
				i, st.Type, got, want)}
		}
		k = got / want
	}
	return max(k, 1), nil
}

// readStatsLabel reads a StatsLabelKey label: one part per sample type.
func readStatsLabel(d *decoded, text []byte, pre *parse.Precomputed) error {
	parts := strings.Split(string(text), StatsSeparator)
	if len(parts) != len(d.SampleType) {
		return fmt.Errorf("%d statistics for %d sample types", len(parts), len(d.SampleType))
	}
	for k, part := range parts {
		if part == "" {
			continue
		}
		v := slices.Index(heapestValueNames[:], d.SampleType[k].Type)
		if v < 0 {
			return fmt.Errorf("statistics for sample type %q, which heapest does not write", d.SampleType[k].Type)
		}
		if pre.Has[v] {
			return fmt.Errorf("sample type %s given twice", d.SampleType[k].Type)
		}
		if err := readStatsPart(parts, k, part, &pre.Stats[v]); err != nil {
			return fmt.Errorf("%s: %w", d.SampleType[k].Type, err)
		}
		pre.Has[v] = true
	}
	return nil
}

// readStatsPart reads part k of a StatsLabelKey label into st: statistics,
// or StatsSameAs and the number of an earlier part holding statistics.
func readStatsPart(parts []string, k int, part string, st *ci.Stats) error {
	ref, same := strings.CutPrefix(part, StatsSameAs)
	if !same {
		return st.UnmarshalText([]byte(part))
	}
	j, err := strconv.Atoi(ref)
	if err != nil || j < 0 || j >= k || strings.HasPrefix(parts[j], StatsSameAs) || parts[j] == "" {
		return fmt.Errorf("%q: want %sN, N an earlier sample type with statistics", part, StatsSameAs)
	}
	return st.UnmarshalText([]byte(parts[j]))
}
