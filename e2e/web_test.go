package e2e

// heapest web in a real browser: the test starts the binary on a bundled
// dump, drives Debian's headless chromium through chromedriver's W3C
// WebDriver HTTP API (spoken here with net/http), and checks the DOM the
// page's script leaves: the table's top row against report --format json,
// the interval bars and the flame graph drawn with sane geometry, sorting
// and filtering, and pprof's views under /ui/. Interrupting the server
// must stop it cleanly.
//
// go test ./e2e -run TestWebBrowser -screenshot docs/web.png also writes
// the screenshot the README shows.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var screenshot = flag.String("screenshot", "", "write the browser test's screenshot of heapest web to `FILE` (relative to the repository root)")

// The window the page is drawn in: the screenshot's size.
const browserW, browserH = 1280, 1400

func TestWebBrowser(t *testing.T) {
	chromium := needTool(t, "chromium")
	driverPath := needTool(t, "chromedriver")
	heapest := heapestBinary(t)
	// Relative to the repository root, where both run, so that the page
	// (and the screenshot) names the file as the README does.
	const dump = "testdata/jemalloc/mixed_symbolized.heap"
	const topN = "6"

	var want struct{ Rows []jsonRow }
	report := exec.Command(heapest, "report", "--format", "json", "--top", topN, dump)
	report.Dir = repoRoot(t)
	out, err := report.Output()
	if err != nil {
		t.Fatalf("heapest report: %v", err)
	}
	if err := json.Unmarshal(out, &want); err != nil || len(want.Rows) == 0 {
		t.Fatalf("report --format json: %v", err)
	}

	base := startWeb(t, heapest, "--top", topN, dump)
	wd := startDriver(t, driverPath)
	sess := wd.newSession(t, chromium)
	sess.navigate(t, base)
	// The screenshot is of the page as it opens, before pageScript sorts.
	png := sess.screenshot(t)
	if *screenshot != "" {
		writeFile(t, filepath.Join(repoRoot(t), *screenshot), png)
	}

	var dom pageFacts
	sess.execute(t, pageScript, &dom)
	top := want.Rows[0]
	if dom.TopKey != top.Key || dom.Top["estimate"] != top.Estimate || dom.Top["lo"] != top.Lo ||
		dom.Top["hi"] != top.Hi || dom.Top["samples"] != top.Samples || dom.TopMethod != top.Method {
		t.Errorf("top row %q %v %q, report --format json's %+v", dom.TopKey, dom.Top, dom.TopMethod, top)
	}
	if dom.Rows != len(want.Rows) {
		t.Errorf("%d table rows, json has %d", dom.Rows, len(want.Rows))
	}
	checkBars(t, "table", dom.TableBars, 4)
	checkBars(t, "chart", dom.ChartBars, 4)
	checkFlame(t, dom, relWidths(want.Rows))
	// Sorted by estimate, ascending: a smallest row comes first.
	smallest := math.Inf(1)
	firstEst := math.NaN()
	for _, r := range want.Rows {
		smallest = math.Min(smallest, r.Estimate)
		if r.Key == dom.SortedAscFirst {
			firstEst = r.Estimate
		}
	}
	if firstEst != smallest {
		t.Errorf("sorted by estimate, ascending: first row %q (%v), want one of %v", dom.SortedAscFirst, firstEst, smallest)
	}
	if dom.FilterShown != 1 || dom.FilterText != fmt.Sprintf("1 of %d rows", len(want.Rows)) {
		t.Errorf("filter alloc_a: %d rows shown, %q", dom.FilterShown, dom.FilterText)
	}
	if dom.Requests != 1 {
		t.Errorf("the page made %d requests, want 1 (itself): %v", dom.Requests, dom.Resources)
	}

	checkPprofViews(t, sess, base)
}

// jsonRow is a row of report --format json.
type jsonRow struct {
	Key              string
	Estimate, Lo, Hi float64
	Samples          float64
	Method           string
}

// pageFacts is what pageScript reads from the page once its script ran.
type pageFacts struct {
	TopKey         string
	Top            map[string]float64
	TopMethod      string
	Rows           int
	TableBars      []bar
	ChartBars      []bar
	Frames         []frame
	FlameWidth     float64
	Tooltip        string
	TopInterval    string
	SortedAscFirst string
	FilterShown    int
	FilterText     string
	Requests       int
	Resources      []string
}

// bar is an interval as drawn: the whisker's ends and the dot's centre, in
// CSS pixels.
type bar struct{ Lo, Hi, Dot, Y, DotY float64 }

type frame struct {
	Name        string
	X, W, Depth float64
	Fill        string
	Distrust    float64
	ChildrenW   float64
}

// pageScript collects pageFacts. It runs in the page, after its own
// script: it reads the DOM, then sorts and filters as a user would.
const pageScript = `
const q = (s, el) => Array.from((el || document).querySelectorAll(s));
const rect = el => el.getBoundingClientRect();
const first = document.querySelector('#rows tbody tr');
const out = {TopKey: first.querySelector('td.key').textContent, Top: {}, TopMethod: first.querySelector('td.method').textContent.replace(/[¹²³⁴⁵⁶⁷⁸⁹]/g, '')};
for (const c of ['estimate', 'lo', 'hi', 'samples']) out.Top[c] = parseFloat(first.querySelector('td.' + c).dataset.v);
out.Rows = q('#rows tbody tr').length;
const bars = svg => q('g.bar, svg.ibar', svg).map(g => {
  const w = g.querySelector('line.whisker'), d = g.querySelector('circle.estimate');
  if (!w || !d) return null;
  const wr = rect(w), dr = rect(d);
  return {Lo: wr.left, Hi: wr.right, Y: wr.top + wr.height / 2, Dot: dr.left + dr.width / 2, DotY: dr.top + dr.height / 2};
}).filter(b => b);
out.TableBars = bars(document.querySelector('#rows'));
out.ChartBars = bars(document.querySelector('svg.interval-chart'));
const flame = document.querySelector('svg.flame');
out.FlameWidth = rect(flame).width;
out.Frames = q('g.frame', flame).map(g => {
  const r = rect(g.querySelector('rect'));
  return {Name: g.querySelector('title').textContent.split('\n')[0], X: r.left, W: r.width, Depth: parseFloat(g.dataset.d),
          Fill: getComputedStyle(g.querySelector('rect')).fill, Distrust: parseFloat(g.dataset.distrust), ChildrenW: 0};
});
const alloc = q('g.frame', flame).find(g => g.querySelector('title').textContent.startsWith('alloc_b\n'));
out.Tooltip = alloc ? alloc.querySelector('title').textContent : '';
out.TopInterval = first.querySelector('td.lo').textContent + ' – ' + first.querySelector('td.hi').textContent;
const est = q('#rows thead th').find(th => th.classList.contains('estimate'));
est.click(); est.click();
out.SortedAscFirst = document.querySelector('#rows tbody tr td.key').textContent;
est.click();
const f = document.getElementById('filter');
f.value = 'alloc_a'; f.dispatchEvent(new Event('input'));
out.FilterShown = q('#rows tbody tr').filter(r => !r.hidden).length;
out.FilterText = document.getElementById('shown').textContent;
f.value = ''; f.dispatchEvent(new Event('input'));
const res = performance.getEntriesByType('resource').map(e => e.name);
out.Resources = res;
out.Requests = 1 + res.length;
return out;
`

// checkBars checks that at least min intervals are drawn, each a line of
// some width with its dot on it.
func checkBars(t *testing.T, where string, bars []bar, min int) {
	t.Helper()
	if len(bars) < min {
		t.Fatalf("%s: %d interval bars drawn, want at least %d", where, len(bars), min)
	}
	for i, b := range bars {
		if !(b.Hi-b.Lo >= 1) || b.Dot < b.Lo-0.5 || b.Dot > b.Hi+0.5 || math.Abs(b.Y-b.DotY) > 1 {
			t.Errorf("%s bar %d: whisker %.1f–%.1f at y %.1f, dot at %.1f, %.1f", where, i, b.Lo, b.Hi, b.Y, b.Dot, b.DotY)
		}
	}
}

// checkFlame checks the flame graph's geometry: the total spans the
// graph, every frame has a width, a frame's callees fit under it, and of
// alloc_b and alloc_c the one whose interval is relatively wider (rel, from
// report's JSON) is paler; alloc_b's tooltip has the table's interval.
func checkFlame(t *testing.T, dom pageFacts, rel map[string]float64) {
	t.Helper()
	if len(dom.Frames) < 8 || dom.Frames[0].Name != "total" {
		t.Fatalf("flame graph: %d frames, first %+v", len(dom.Frames), dom.Frames)
	}
	root := dom.Frames[0]
	if math.Abs(root.W-dom.FlameWidth) > 3 || dom.FlameWidth < 600 {
		t.Errorf("the total frame is %.1f px wide in a graph of %.1f", root.W, dom.FlameWidth)
	}
	byName := map[string]frame{}
	for i, f := range dom.Frames {
		byName[f.Name] = f
		if !(f.W > 0) {
			t.Errorf("frame %q has no width", f.Name)
		}
		// Frames come parent first: the next frames one level deeper are
		// its callees, and they fit under it.
		var under float64
		for _, c := range dom.Frames[i+1:] {
			if c.Depth <= f.Depth {
				break
			}
			if c.Depth == f.Depth+1 {
				under += c.W
				if c.X < f.X-0.5 || c.X+c.W > f.X+f.W+0.5 {
					t.Errorf("frame %q (%.1f+%.1f) sticks out of its caller %q (%.1f+%.1f)", c.Name, c.X, c.W, f.Name, f.X, f.W)
				}
			}
		}
		if under > f.W+1 {
			t.Errorf("frame %q: callees %.1f px wide under %.1f", f.Name, under, f.W)
		}
	}
	b, c := byName["alloc_b"], byName["alloc_c"]
	if rel["alloc_b"] > rel["alloc_c"] {
		b, c = c, b
	}
	if !(b.Distrust < c.Distrust) || saturation(b.Fill) <= saturation(c.Fill) {
		t.Errorf("%s (±%.0f%%) drawn %s, distrust %v; %s (±%.0f%%) %s, %v: want the second paler",
			b.Name, 100*rel[b.Name], b.Fill, b.Distrust, c.Name, 100*rel[c.Name], c.Fill, c.Distrust)
	}
	if !strings.HasPrefix(dom.Tooltip, "alloc_b\n") || !strings.Contains(dom.Tooltip, dom.TopInterval) {
		t.Errorf("alloc_b's tooltip %q has not its interval %q", dom.Tooltip, dom.TopInterval)
	}
}

// relWidths are the rows' interval half widths relative to their
// estimates.
func relWidths(rows []jsonRow) map[string]float64 {
	out := map[string]float64{}
	for _, r := range rows {
		if r.Estimate > 0 {
			out[r.Key] = (r.Hi - r.Lo) / (2 * r.Estimate)
		}
	}
	return out
}

// saturation is an rgb() colour's HSL saturation, from 0 to 1.
func saturation(css string) float64 {
	m := regexp.MustCompile(`rgb\((\d+), (\d+), (\d+)\)`).FindStringSubmatch(css)
	if m == nil {
		return -1
	}
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseFloat(m[i+1], 64)
		c[i] = v / 255
	}
	hi, lo := math.Max(c[0], math.Max(c[1], c[2])), math.Min(c[0], math.Min(c[1], c[2]))
	l := (hi + lo) / 2
	if hi == lo {
		return 0
	}
	return (hi - lo) / (1 - math.Abs(2*l-1))
}

// checkPprofViews checks that pprof's top and flame graph answer with the
// profile's functions, and that its flame graph draws in the browser.
func checkPprofViews(t *testing.T, sess *session, base string) {
	t.Helper()
	for _, view := range []string{"ui/top", "ui/flamegraph"} {
		resp, err := http.Get(base + view)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte("alloc_b")) || !bytes.Contains(body, []byte("pprof")) {
			t.Errorf("%s: %s, %d bytes", view, resp.Status, len(body))
		}
	}
	sess.navigate(t, base+"ui/flamegraph")
	var boxes int
	sess.execute(t, `return document.querySelectorAll('#stack-chart .boxbg').length`, &boxes)
	if boxes < 5 {
		t.Errorf("pprof's flame graph drew %d boxes", boxes)
	}
	sess.navigate(t, base+"ui/top")
	var topRows int
	sess.execute(t, `return document.querySelectorAll('#toptable tbody tr').length`, &topRows)
	if topRows < 4 {
		t.Errorf("pprof's top table has %d rows", topRows)
	}
}

// startWeb starts heapest web on a free loopback port and returns its
// base URL. At the end of the test it interrupts it, as Ctrl-C does, and
// checks that it stopped cleanly.
func startWeb(t *testing.T, heapest string, args ...string) string {
	t.Helper()
	cmd := exec.Command(heapest, append([]string{"web", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir = repoRoot(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`serving web UI on (http://127\.0\.0\.1:\d+/)`)
	var base string
	var seen []string
	timeout := time.After(30 * time.Second)
	for base == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("heapest web exited: %v: %s", cmd.Wait(), strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				base = m[1]
			}
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("heapest web printed no URL: %s", strings.Join(seen, "\n"))
		}
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		var rest []string
		for l := range lines {
			rest = append(rest, l)
		}
		if err := cmd.Wait(); err != nil || !strings.Contains(strings.Join(rest, "\n"), "heapest: stopped") {
			t.Errorf("heapest web after an interrupt: %v: %s", err, strings.Join(rest, "\n"))
		}
	})
	return base
}

// webDriver is a running chromedriver.
type webDriver struct{ url string }

func startDriver(t *testing.T, path string) *webDriver {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(path, "--port="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	wd := &webDriver{url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var status struct{ Ready bool }
		if err := wd.call("GET", "/status", nil, &status); err == nil && status.Ready {
			return wd
		}
	}
	t.Fatal("chromedriver did not become ready")
	return nil
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// call makes one WebDriver request and decodes the response's "value".
func (wd *webDriver) call(method, path string, body, value any) error {
	var in io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		in = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, wd.url+path, in)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	var out struct{ Value json.RawMessage }
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(out.Value, value)
}

// session is one headless chromium.
type session struct {
	wd *webDriver
	id string
}

func (wd *webDriver) newSession(t *testing.T, chromium string) *session {
	t.Helper()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
			"--force-device-scale-factor=1", fmt.Sprintf("--window-size=%d,%d", browserW, browserH)}},
	}}}
	var created struct{ SessionID string }
	if err := wd.call("POST", "/session", caps, &created); err != nil {
		t.Fatal(err)
	}
	s := &session{wd: wd, id: created.SessionID}
	t.Cleanup(func() { wd.call("DELETE", "/session/"+s.id, nil, nil) })
	return s
}

func (s *session) navigate(t *testing.T, url string) {
	t.Helper()
	if err := s.wd.call("POST", "/session/"+s.id+"/url", map[string]string{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
}

func (s *session) execute(t *testing.T, script string, out any) {
	t.Helper()
	if err := s.wd.call("POST", "/session/"+s.id+"/execute/sync", map[string]any{"script": script, "args": []any{}}, out); err != nil {
		t.Fatal(err)
	}
}

// screenshot is the viewport as a PNG, checked to be one of the window's
// size.
func (s *session) screenshot(t *testing.T) []byte {
	t.Helper()
	var b64 string
	if err := s.wd.call("GET", "/session/"+s.id+"/screenshot", nil, &b64); err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if w := img.Bounds().Dx(); w != browserW {
		t.Errorf("screenshot %d px wide, want %d", w, browserW)
	}
	return data
}
