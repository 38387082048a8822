package render

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

func TestSVGGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string
		opt  report.Options
		log  bool
	}{
		{"func.svg", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc, Top: 5}, false},
		{"func-log.svg", "mixed_symbolized.heap", report.Options{By: aggregate.ByFunc}, true},
		{"stack-objects.svg", "mixed_symbolized.heap", report.Options{By: aggregate.ByStack, Value: unbias.InUseObjects}, false},
		{"thread-log.svg", "je530_threads_unbias-on.heap", report.Options{By: aggregate.ByThread}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSVG(&buf, buildDump(t, tt.file, tt.opt), ChartOptions{Log: tt.log}); err != nil {
				t.Fatal(err)
			}
			checkXML(t, buf.Bytes())
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// checkXML fails unless data is well-formed XML.
func checkXML(t *testing.T, data []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			return
		}
	}
}

// Every row has its dot where its estimate is on the axis, between the
// ends of its whiskers, and the dot of a row with a wider interval is
// paler.
func TestSVGGeometry(t *testing.T) {
	r := buildDump(t, "mixed_symbolized.heap", report.Options{By: aggregate.ByStack})
	var buf bytes.Buffer
	if err := WriteSVG(&buf, r, ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	dots := regexp.MustCompile(`<circle class="estimate" cx="([0-9.]+)" cy="[0-9.]+" r="4.5" fill="hsl\(210,([0-9.]+)%`).FindAllStringSubmatch(svg, -1)
	whiskers := regexp.MustCompile(`<line class="whisker" x1="([0-9.]+)" y1="[0-9.]+" x2="([0-9.]+)"`).FindAllStringSubmatch(svg, -1)
	if len(dots) != len(r.Rows) || len(whiskers) != len(r.Rows) {
		t.Fatalf("%d dots and %d whiskers for %d rows", len(dots), len(whiskers), len(r.Rows))
	}
	ax := chartAxis(r, ChartOptions{})
	for i, d := range dots {
		if d[1] != px(ax.pos(r.Rows[i].Flat.Estimate)) {
			t.Errorf("row %d: dot at %s, want %s", i, d[1], px(ax.pos(r.Rows[i].Flat.Estimate)))
		}
		if !(num2(whiskers[i][1]) <= num2(d[1]) && num2(d[1]) <= num2(whiskers[i][2])) {
			t.Errorf("row %d: dot at %s outside its whiskers %s–%s", i, d[1], whiskers[i][1], whiskers[i][2])
		}
	}
	// Rows 0 (±12%) and 3 (±253%): the second is less saturated.
	if !(num2(dots[3][2]) < num2(dots[0][2])) {
		t.Errorf("saturation %s (±253%%) not below %s (±12%%)", dots[3][2], dots[0][2])
	}
	if !strings.Contains(svg, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("a standalone SVG names its namespace")
	}
}

func num2(s string) float64 {
	var x float64
	for _, c := range strings.Split(s, ".")[0] {
		x = 10*x + float64(c-'0')
	}
	if _, frac, ok := strings.Cut(s, "."); ok && frac != "" {
		x += float64(frac[0]-'0') / 10
	}
	return x
}

func TestAxisTicks(t *testing.T) {
	for _, tt := range []struct {
		minPos, max float64
		log, bytes  bool
		want        string
	}{
		{0, 64.9 * (1 << 20), false, true, "0 20MiB 40MiB 60MiB 80MiB"},
		{0, 950, false, false, "0 200 400 600 800 1000"},
		{0, 3.2e6, false, false, "0 1M 2M 3M 4M"},
		{80 << 10, 64.9 * (1 << 20), true, true, "10KiB 100KiB 1MiB 10MiB 100MiB"},
		{3, 2500, true, false, "1 10 100 1k 10k"},
		{5, 5, true, false, "1 10"},
	} {
		a := newAxis(tt.minPos, tt.max, tt.log, tt.bytes, 0, 100)
		var got []string
		for _, tk := range a.ticks {
			got = append(got, tk.label)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("newAxis(%v, %v, log %v): ticks %q, want %q", tt.minPos, tt.max, tt.log, strings.Join(got, " "), tt.want)
		}
		if a.pos(a.lo) != 0 || a.pos(a.hi) != 100 {
			t.Errorf("ends at %v and %v", a.pos(a.lo), a.pos(a.hi))
		}
	}
}

func TestDistrust(t *testing.T) {
	for _, tt := range []struct {
		res  ci.Result
		want float64
	}{
		{ci.Result{Estimate: 100, Lo: 90, Hi: 110, Method: "exact"}, 0.1},
		{ci.Result{Estimate: 100, Lo: 10, Hi: 400, Method: "exact"}, 1},
		{ci.Result{Estimate: 100, Lo: 100, Hi: 100, Method: "complete"}, 0},
		{ci.Result{Estimate: 100, Method: "none"}, 1},
	} {
		if got := distrust(tt.res); got != tt.want {
			t.Errorf("distrust(%+v) = %v, want %v", tt.res, got, tt.want)
		}
	}
}

// A name that XML cannot hold (a NUL, bytes that are not UTF-8) is
// written escaped: the chart stays a well-formed XML file.
func TestSVGWellFormedNames(t *testing.T) {
	r := buildDump(t, "mixed_symbolized.heap", report.Options{})
	r.Rows[0].Key = "bad\xff\xfe\x00name"
	var buf bytes.Buffer
	if err := WriteSVG(&buf, r, ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&buf)
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}
