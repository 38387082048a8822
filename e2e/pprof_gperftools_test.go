package e2e

// Real gperftools heap samples (MallocExtension::GetHeapSample, heap_v2
// legacy text) from testdata/realdata/gperftools/prog.cc, whose true live
// heap is known: heapest reads the raw counts and its 95% intervals cover
// the truth.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

// gperfTruth is what prog.cc prints.
type gperfTruth struct {
	Sites []struct {
		Func        string  `json:"func"`
		LiveObjects float64 `json:"live_objects"`
		LiveBytes   float64 `json:"live_bytes"`
	} `json:"sites"`
}

type gperfRun struct {
	period, seed int
	file         string
	truth        gperfTruth
	space        Report
}

// needGperftools skips (fails under CI=true) without g++ and gperftools.
func needGperftools(t *testing.T) string {
	t.Helper()
	gxx := needTool(t, "g++")
	needFile(t, "/usr/include/gperftools/malloc_extension.h")
	return gxx
}

// buildGperfProg compiles prog.cc: frame pointers and no PIE keep the
// stacks easy to unwind and symbolize.
func buildGperfProg(t *testing.T, gxx, dir string) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "testdata", "realdata", "gperftools", "prog.cc")
	bin := filepath.Join(dir, "gperf-prog")
	out, errOut, err := runErr(nil, gxx, "-O1", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o", bin, src, "-ltcmalloc")
	if err != nil {
		t.Fatalf("g++ prog.cc: %v\n%s%s", err, out, errOut)
	}
	return bin
}

// gperfPeriods spans TCMALLOC_SAMPLE_PARAMETER from 4 KiB to 512 KiB.
var gperfPeriods = []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10}

func TestGperftoolsRealHeapSamples(t *testing.T) {
	gxx := needGperftools(t)
	dir := t.TempDir()
	prog := buildGperfProg(t, gxx, dir)
	heapest := heapestBinary(t)
	// 8 periods × 20 runs × 5 call sites = 800 pairs (200 with -short):
	// the 93% floor is then > 3 standard errors below the measured ~95.5%.
	perPeriod := 20
	if testing.Short() {
		perPeriod = 5
	}
	var runs []*gperfRun
	for _, period := range gperfPeriods {
		for seed := 1; seed <= perPeriod; seed++ {
			runs = append(runs, &gperfRun{period: period, seed: seed,
				file: filepath.Join(dir, fmt.Sprintf("heap-%d-%d.txt", period, seed))})
		}
	}
	errs := pprofParallel(runs, func(r *gperfRun) error { return execGperfRun(r, prog, heapest) })
	for i, r := range runs {
		if errs[i] != nil {
			t.Fatalf("period=%d seed=%d: %v", r.period, r.seed, errs[i])
		}
	}
	checkGperfRaw(t, runs)
	checkGperfCoverage(t, runs)
}

func execGperfRun(r *gperfRun, prog, heapest string) error {
	env := []string{"TCMALLOC_SAMPLE_PARAMETER=" + strconv.Itoa(r.period)}
	// 64 MiB of warm-up: gperftools < 2.16 leaves the main thread's first
	// 16 MiB unsampled (docs/gperftools.md).
	out, errOut, err := runErr(env, prog, r.file, "64", strconv.Itoa(r.seed))
	if err != nil {
		return fmt.Errorf("prog: %v\n%s", err, errOut)
	}
	if err := json.Unmarshal(out, &r.truth); err != nil {
		return fmt.Errorf("prog output: %v\n%s", err, out)
	}
	return heapestReport(heapest, r.file, "inuse_space", &r.space)
}

// checkGperfRaw: the parser keeps the file's raw lines (one sampled object
// each) and the period of its header; heapest's sample counts equal the
// file's line counts.
func checkGperfRaw(t *testing.T, runs []*gperfRun) {
	for _, r := range runs {
		data, err := os.ReadFile(r.file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(string(data), "] @ ") - 1 // the header has one too
		p, recs, err := readRecords(r.file)
		if err != nil {
			t.Fatalf("%s: %v", r.file, err)
		}
		if p.Source.Format != "gperftools" || p.Source.Rate != float64(r.period) || len(p.Warnings) == 0 {
			t.Errorf("%s: format %q rate %v warnings %q", r.file, p.Source.Format, p.Source.Rate, p.Warnings)
		}
		var samples float64
		for _, rec := range recs {
			if rec.InUse.Enc != parse.Raw || rec.InUse.Size == 0 {
				t.Fatalf("%s: record not raw with a size: %+v", r.file, rec.InUse)
			}
			samples += rec.InUse.Samples
		}
		if int(samples) != lines || r.space.Total.Samples != samples {
			t.Errorf("%s: %d sample lines, parser %v, report %v", r.file, lines, samples, r.space.Total.Samples)
		}
	}
}

// checkGperfCoverage: the 95% intervals contain the true live bytes in at
// least 93% of the (call site, run) pairs.
func checkGperfCoverage(t *testing.T, runs []*gperfRun) {
	var all coverage
	perSite := map[string]*coverage{}
	for _, r := range runs {
		rows := rowsByKey(r.space)
		for _, s := range r.truth.Sites {
			if s.LiveBytes == 0 {
				continue
			}
			row := rows[s.Func]
			all.add(row.Lo, s.LiveBytes, row.Hi)
			if perSite[s.Func] == nil {
				perSite[s.Func] = &coverage{}
			}
			perSite[s.Func].add(row.Lo, s.LiveBytes, row.Hi)
		}
	}
	checkSiteCoverage(t, "gperftools", perSite, all)
}
