package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// cdp sends one Chrome DevTools Protocol command through chromedriver.
func (s *session) cdp(t *testing.T, cmd string, params map[string]any, out any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if err := s.wd.call("POST", "/session/"+s.id+"/goog/cdp/execute", map[string]any{"cmd": cmd, "params": params}, out); err != nil {
		t.Fatal(err)
	}
}

// chromeSites is what each capture allocates: siteA 4,000 arrays of 1,000
// small integers (each 4,008 bytes and a header under Chrome's pointer
// compression, about 16 MB), siteB 200,000 small objects.
const chromeSites = `
window.keepA = []; window.keepB = [];
function siteA() { for (let i = 0; i < 4000; i++) keepA.push(new Array(1000).fill(i)); }
function siteB() { for (let i = 0; i < 200000; i++) keepB.push({a: i, b: i + 1, c: 'x' + i}); }
siteA(); siteB(); 0`

// TestChromeHeapProfile: V8's sampling heap profiles from Chrome itself,
// taken through the DevTools protocol as DevTools' "Allocation sampling"
// takes them (HeapProfiler.startSampling, stopSampling): every capture
// read with the interval found (the JSON does not carry it), siteA's
// intervals as wide as the captures' spread, and their mean near what
// siteA's arrays hold.
func TestChromeHeapProfile(t *testing.T) {
	chromium := needTool(t, "chromium")
	driverPath := needTool(t, "chromedriver")
	heapest := heapestBinary(t)
	runs := envInt(t, "HEAPEST_E2E_CHROME_RUNS", 12)
	const rate = 32768
	sess := startDriver(t, driverPath).newSession(t, chromium)
	dir := t.TempDir()
	var siteA []nodeRow
	for i := range runs {
		// A page of its own each time: the last one's objects are garbage.
		sess.navigate(t, "about:blank")
		sess.cdp(t, "HeapProfiler.enable", nil, nil)
		sess.cdp(t, "HeapProfiler.startSampling", map[string]any{"samplingInterval": rate}, nil)
		sess.cdp(t, "Runtime.evaluate", map[string]any{"expression": chromeSites}, nil)
		sess.cdp(t, "HeapProfiler.collectGarbage", nil, nil)
		var stopped struct{ Profile json.RawMessage }
		sess.cdp(t, "HeapProfiler.stopSampling", nil, &stopped)
		path := filepath.Join(dir, fmt.Sprintf("chrome-%d.heapprofile", i))
		if err := os.WriteFile(path, stopped.Profile, 0o644); err != nil {
			t.Fatal(err)
		}
		r := parseReport(t, run(t, nil, heapest, "report", "--format", "json", "--top", "0", path))
		if got := r.Sources[0].Rate; got != rate || r.Sources[0].Format != "heapprofile" {
			t.Fatalf("capture %d: %s at interval %v, want heapprofile at %d", i, r.Sources[0].Format, got, rate)
		}
		for _, row := range r.Rows {
			if row.Key == "siteA" {
				siteA = append(siteA, nodeRow{row.Estimate, row.Lo, row.Hi})
			}
		}
	}
	if len(siteA) != runs {
		t.Fatalf("siteA in %d of %d captures", len(siteA), runs)
	}
	mean, se := nodeCoverage(t, "Chrome .heapprofile", "siteA", siteA)
	// 4,000 arrays of 4,008 to 4,036 bytes each (Chrome writes them with
	// and without a header and a memento), and keepA's own store.
	lo, hi := 4000*4008.0, 4000*4036.0+64<<10
	if mean < lo-4*se || mean > hi+4*se {
		t.Errorf("siteA's mean %.0f bytes (± %.0f) is not near the %.0f to %.0f its arrays hold", mean, se, lo, hi)
	}
}
