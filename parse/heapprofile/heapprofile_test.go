package heapprofile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/parse"
)

// collect parses data and keeps copies of the records.
func collect(t *testing.T, data []byte, opt parse.Options) (*parse.Profile, []parse.Record, error) {
	t.Helper()
	var recs testfile.Records
	p, err := Parse("test.heapprofile", bufio.NewReader(bytes.NewReader(data)), opt, &recs)
	return p, recs, err
}

// simNode is a node of a simulated profile: its function, and the
// objects sampled there, n of each size.
type simNode struct {
	name  string
	sizes map[int64]int64
	// self, when not 0, is the selfSize written instead of the samples'
	// (a node whose samples came after it was taken).
	self int64
}

// simulate writes the JSON V8's inspector writes for nodes (each a child
// of the root) sampled at rate: each sample as b·round(s(b)), each node's
// selfSize as the sum over sizes of b·round(n·s(b)).
func simulate(t testing.TB, rate float64, nodes []simNode) []byte {
	t.Helper()
	type cf struct {
		FunctionName string `json:"functionName"`
		URL          string `json:"url"`
		LineNumber   int    `json:"lineNumber"`
		ColumnNumber int    `json:"columnNumber"`
	}
	type jn struct {
		CallFrame cf    `json:"callFrame"`
		SelfSize  int64 `json:"selfSize"`
		ID        int   `json:"id"`
		Children  []jn  `json:"children"`
	}
	type js struct {
		Size    int64 `json:"size"`
		NodeID  int   `json:"nodeId"`
		Ordinal int   `json:"ordinal"`
	}
	root := jn{CallFrame: cf{FunctionName: "(root)", LineNumber: -1, ColumnNumber: -1}, ID: 1, Children: []jn{}}
	var samples []js
	for i, n := range nodes {
		node := jn{CallFrame: cf{FunctionName: n.name, URL: "file:///app.js", LineNumber: i, ColumnNumber: 2}, ID: i + 2, Children: []jn{}}
		if strings.HasPrefix(n.name, "(") {
			node.CallFrame = cf{FunctionName: n.name, LineNumber: -1, ColumnNumber: -1} // a VM state's
		}
		for b, cnt := range n.sizes {
			node.SelfSize += b * scaled(cnt, b, rate)
			for range cnt {
				samples = append(samples, js{Size: b * scaled(1, b, rate), NodeID: i + 2, Ordinal: len(samples) + 1})
			}
		}
		if n.self != 0 {
			node.SelfSize = n.self
		}
		root.Children = append(root.Children, node)
	}
	data, err := json.Marshal(struct {
		Head    jn   `json:"head"`
		Samples []js `json:"samples"`
	}{root, samples})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSizes: every object size is among the sizes its sample value
// allows, at every interval; small objects share values.
func TestSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		rate := float64(int64(1) << (10 + rng.IntN(12)))
		b := int64(8 + rng.IntN(8)*8)
		if rng.IntN(2) == 0 {
			b = 4 * (1 + rng.Int64N(int64(rate))) // sizes are multiples of 4 (align)
		}
		v := b * scaled(1, b, rate)
		if got := newSolver(readBudget).sizes(v, rate); !slices.Contains(got, b) {
			t.Fatalf("sizes(%d, %v) = %v, lacks %d", v, rate, got, b)
		}
	}
	if got, want := newSolver(readBudget).sizes(131088, 131072), []int64{16, 24, 48}; !slices.Equal(got, want) {
		t.Errorf("sizes(131088, 131072) = %v, want %v", got, want)
	}
	if got := newSolver(readBudget).sizes(3<<20, 131072); !slices.Equal(got, []int64{3 << 20}) {
		t.Errorf("a 3 MiB object at 128 KiB: sizes %v", got)
	}
}

// TestSimulatedProfiles: profiles written as V8 writes them are read at
// the interval they were sampled at, found from their samples; a node
// whose values allow several sizes gets the one its selfSize gives, and
// V8's own bytes and counts.
func TestSimulatedProfiles(t *testing.T) {
	for _, rate := range []float64{4096, 32768, 100000, 131072, 524288, 1 << 20} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			nodes := []simNode{
				{name: "small", sizes: map[int64]int64{24: 40}},
				{name: "arrays", sizes: map[int64]int64{8048: 30, 8064: 25}},
				{name: "big", sizes: map[int64]int64{2 << 20: 2}},
				{name: "mixed", sizes: map[int64]int64{32: 7, 4096: 3}},
			}
			p, recs, err := collect(t, simulate(t, rate, nodes), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Source.Rate != rate || p.Source.Format != "heapprofile" {
				t.Fatalf("rate %v, format %q (detail %q, warnings %q)", p.Source.Rate, p.Source.Format, p.Source.Detail, p.Warnings)
			}
			var samples float64
			bytesOf := map[string]float64{}
			for _, r := range recs {
				if r.Scheme != parse.Bernoulli || r.Rate != rate || r.InUse.Enc != parse.Scaled {
					t.Errorf("record %+v", r)
				}
				samples += r.InUse.Samples
				bytesOf[r.Stack[0].Func] += r.InUse.Bytes
			}
			if samples != 40+30+25+2+7+3 {
				t.Errorf("%v samples", samples)
			}
			// The "small" node's value is shared by other sizes; its
			// selfSize tells, and its bytes are V8's.
			if want := float64(24 * scaled(40, 24, rate)); bytesOf["small"] != want {
				t.Errorf("small: %v bytes, want V8's %v", bytesOf["small"], want)
			}
		})
	}
}

// TestRealProfiles: node --heap-prof's files (testdata/README.md) are
// read at the interval they were written with.
func TestRealProfiles(t *testing.T) {
	for file, rate := range map[string]float64{"node20-512k.heapprofile": 524288, "node20-128k.heapprofile": 131072} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if !Detect(data) {
			t.Fatalf("%s not detected", file)
		}
		p, recs, err := collect(t, data, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Source.Rate != rate || !strings.HasPrefix(p.Source.Detail, "interval found from its samples") {
			t.Errorf("%s: rate %v, detail %q", file, p.Source.Rate, p.Source.Detail)
		}
		var siteA float64
		for _, r := range recs {
			if r.Stack[0].Func == "siteA" {
				siteA += r.InUse.Bytes
			}
		}
		// About 32 MB, within what one profile's sampling gives.
		if siteA < 20e6 || siteA > 45e6 {
			t.Errorf("%s: siteA %v bytes", file, siteA)
		}
	}
}

// TestRate: --rate is used, and checked; a profile no round interval
// explains asks for it.
func TestRate(t *testing.T) {
	data := simulate(t, 131072, []simNode{{name: "small", sizes: map[int64]int64{24: 40, 48: 3}}, {name: "arrays", sizes: map[int64]int64{8048: 30}}})
	p, _, err := collect(t, data, parse.Options{Rate: 131072})
	if err != nil || strings.Contains(strings.Join(p.Warnings, "\n"), "--rate") || p.Source.Rate != 131072 {
		t.Fatalf("--rate as sampled: %v, warnings %q", err, p.Warnings)
	}
	p, _, err = collect(t, data, parse.Options{Rate: 65536})
	if err != nil || p.Source.Rate != 65536 || !strings.Contains(strings.Join(p.Warnings, "\n"), "--rate 65536 does not explain the profile") {
		t.Fatalf("--rate wrong: %v, warnings %q", err, p.Warnings)
	}
	// selfSizes no interval gives (a 3 written before each): none fits.
	bad := bytes.ReplaceAll(data, []byte(`"selfSize":`), []byte(`"selfSize":3`))
	if _, _, err := collect(t, bad, parse.Options{}); err == nil || !strings.Contains(err.Error(), "pass it with --rate") {
		t.Errorf("sizes no interval explains: %v", err)
	}
}

// TestRateVMStates: at an interval of 16 bytes, node --heap-prof files
// the allocations of its own writing under "(IDLE)" after the node's
// selfSize was taken (96 bytes against 57 samples of 2,664). The interval
// is found from the JavaScript nodes all the same; it had been "no round
// interval explains it". A JavaScript node that misfits still counts.
func TestRateVMStates(t *testing.T) {
	js := simNode{name: "objs", sizes: map[int64]int64{24: 2000, 40: 3000}}
	data := simulate(t, 16, []simNode{js, {name: "(IDLE)", sizes: map[int64]int64{2664: 57}, self: 96}})
	p, _, err := collect(t, data, parse.Options{})
	if err != nil || p.Source.Rate != 16 {
		t.Fatalf("rate %v, err %v; want 16", p.Source.Rate, err)
	}
	data = simulate(t, 16, []simNode{js, {name: "idle", sizes: map[int64]int64{2664: 57}, self: 96}})
	if _, _, err := collect(t, data, parse.Options{}); err == nil {
		t.Error("a JavaScript node whose selfSize no interval gives was left out of the check")
	}
	for _, tt := range []struct {
		name, url string
		want      bool
	}{{"(IDLE)", "", true}, {"(V8 API)", "", true}, {"(GC)", "", true}, {"(root)", "", false}, {"(anonymous)", "", false},
		{"(anonymous:L#3:C#9)", "", false}, {"(IDLE)", "file:///a.js", false}, {"()", "", false}} {
		if got := vmState(callFrame{FunctionName: tt.name, URL: tt.url}); got != tt.want {
			t.Errorf("vmState(%q, url %q) = %v, want %v", tt.name, tt.url, got, tt.want)
		}
	}
}

// TestBadInput: what is not a V8 heap profile is an error naming the
// byte and what was expected.
func TestBadInput(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[]},"samples":[{"size":-1,"nodeId":1}]}`, "size -1"},
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[{"callFrame":{},"id":1}]}}`, "node id 1 appears twice"},
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[]},"samples":[{"size":5}]}`, "want its size and nodeId"},
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[]},"samples":[{"size":5,`, "reading sample 1"},
		{`{"samples":[]}`, `no "head"`},
		{`[1,2]`, "expected the profile object"},
		// What follows the profile is read too: a second profile, or
		// garbage, is damage.
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[]},"samples":[]} {"head":{}}`, "more data after the profile, at byte 82"},
		{`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[]},"samples":[]}GARBAGE`, "after the profile, at byte 82: invalid character 'G'"},
	} {
		_, _, err := collect(t, []byte(tt.in), parse.Options{})
		var pe *parse.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want a parse error with %q", tt.in, err, tt.want)
		}
	}
}

// TestSamplesBeforeHead: samples written before the tree are held until
// it is read, and give the same records.
func TestSamplesBeforeHead(t *testing.T) {
	data := simulate(t, 32768, []simNode{{name: "a", sizes: map[int64]int64{64: 9}}, {name: "b", sizes: map[int64]int64{4096: 4}}})
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	swapped := fmt.Sprintf(`{"samples":%s,"head":%s}`, doc["samples"], doc["head"])
	_, want, err := collect(t, data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := collect(t, []byte(swapped), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples first:\n%v\nhead first:\n%v", got, want)
	}
}

// TestNoSamples: a profile without samples (older writers) gives V8's
// estimates, without intervals, and says so.
func TestNoSamples(t *testing.T) {
	in := `{"head":{"callFrame":{"functionName":"(root)","lineNumber":-1},"selfSize":0,"id":1,"children":[{"callFrame":{"functionName":"f"},"selfSize":4096,"id":2,"children":[]}]}}`
	p, recs, err := collect(t, []byte(in), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Scheme != parse.Unknown || recs[0].InUse.Bytes != 4096 || !strings.Contains(strings.Join(p.Warnings, ""), "no \"samples\"") {
		t.Errorf("records %+v, warnings %q", recs, p.Warnings)
	}
}

// TestDetect: the head of every writer's JSON, whitespace or not, and no
// other V8 JSON.
func TestDetect(t *testing.T) {
	for in, want := range map[string]bool{
		`{"head":{"callFrame":{"functionName":"(root)"`:          true,
		"{\n  \"head\": {\n    \"callFrame\": {":                 true,
		"\xef\xbb\xbf{\"head\":{\"callFrame\":":                  true,
		`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"`: false, // a .cpuprofile
		`{"snapshot":{"meta":{"node_fields":`:                    false, // a .heapsnapshot
		`{"head":{"id":1}}`:                                      false,
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%q) = %v", in, got)
		}
	}
}

// frameName names as pprof-nodejs does.
func TestFrameName(t *testing.T) {
	for cf, want := range map[callFrame]string{
		{FunctionName: "f"}:                            "f",
		{LineNumber: 4, ColumnNumber: 9}:               "(anonymous:L#5:C#10)",
		{LineNumber: -1, ColumnNumber: -1}:             "(anonymous)",
		{FunctionName: "x", LineNumber: math.MaxInt32}: "x",
	} {
		if got := frameName(cf); got != want {
			t.Errorf("frameName(%+v) = %q, want %q", cf, got, want)
		}
	}
}

// A node whose sizes cannot be told gets V8's sum for it: ten samples of
// 4,032-byte objects every 32 KiB each write 4032·round(8.64) = 36,288,
// 4% over what they stand for; V8's selfSize rounds 10·8.64 once.
func TestUntoldShare(t *testing.T) {
	const rate = 32768
	gs := []group{{node: 1, v: 36288, n: 10}}
	self := float64(4032 * scaled(10, 4032, rate))
	c := untold(gs[0], []int64{4032, 4536}, untoldShare(gs, self))
	if c.Bytes != self || c.Samples != 10 || c.Size != 0 || math.Abs(c.Objects-self/4032) > 1e-9 {
		t.Errorf("untold: %+v, want %v bytes (V8's selfSize)", c, self)
	}
	// A selfSize far from the values is not V8's rounding: values as written.
	if got := untoldShare(gs, 3*36288*10); got != 1 {
		t.Errorf("share of a selfSize 3 times the values: %v", got)
	}
}

// A sample at the root node itself, which V8's writers never make but a
// hand-made profile may, is read at a frame of the root's name rather
// than refused.
func TestRootSample(t *testing.T) {
	in := `{"head":{"callFrame":{"functionName":"(root)","lineNumber":-1},"selfSize":131088,"id":1,"children":[]},"samples":[{"size":131088,"nodeId":1}]}`
	_, recs, err := collect(t, []byte(in), parse.Options{Rate: 131072})
	if err != nil || len(recs) != 1 || len(recs[0].Stack) != 1 || recs[0].Stack[0].Func != "(root)" {
		t.Fatalf("records %+v, err %v", recs, err)
	}
}

// TestManyNodes: a real profile of thousands of nodes (testdata/many.js,
// 2,900 of them) is read at the interval it was written with; judging
// each interval on every node ran out the search's budget, and the
// profile was refused.
func TestManyNodes(t *testing.T) {
	data := testfile.Gunzip(t, "testdata/node20-many-16k.heapprofile.gz")
	p, recs, err := collect(t, data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stacks := map[uint64]bool{}
	for _, r := range recs {
		stacks[r.StackID] = true
	}
	if p.Source.Rate != 16384 || len(stacks) < 2000 {
		t.Errorf("rate %v, %d nodes with samples", p.Source.Rate, len(stacks))
	}
}

// A byte-order mark before the JSON, which Detect passes, is read past.
func TestByteOrderMark(t *testing.T) {
	data := append([]byte("\xef\xbb\xbf"), simulate(t, 32768, []simNode{{name: "a", sizes: map[int64]int64{64: 9}}})...)
	if !Detect(data) {
		t.Fatal("not detected")
	}
	if _, recs, err := collect(t, data, parse.Options{}); err != nil || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

// By line (Options.Lines), a frame is its function and its position, lines
// from 1; an anonymous function is told by its line, and a frame without a
// position keeps its name.
func TestFrameNamesByLine(t *testing.T) {
	const prof = `{"head":{"callFrame":{"functionName":"(root)","url":"","lineNumber":-1,"columnNumber":-1},"id":1,"children":[
		{"callFrame":{"functionName":"","url":"file:///app/main.js","lineNumber":0,"columnNumber":0},"id":2,"children":[
			{"callFrame":{"functionName":"site","url":"file:///app/main.js","lineNumber":6,"columnNumber":12},"selfSize":131088,"id":3,"children":[]}]}]},
		"samples":[{"size":131088,"nodeId":3}]}`
	for _, tt := range []struct {
		lines bool
		want  string
	}{
		{false, "[site (anonymous:L#1:C#1)]"}, // the root is no frame
		{true, "[site file:///app/main.js:7 (anonymous) file:///app/main.js:1]"},
	} {
		var names []string
		_, err := Parse("t.heapprofile", bufio.NewReader(strings.NewReader(prof)), parse.Options{Rate: 131072, Lines: tt.lines}, parse.SinkFunc(func(r *parse.Record) {
			for _, f := range r.Stack {
				names = append(names, f.Func)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(names); got != tt.want {
			t.Errorf("lines %v: stack %s, want %s", tt.lines, got, tt.want)
		}
	}
}
