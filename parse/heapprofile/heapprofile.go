package heapprofile

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/heapest/heapest/parse"
)

// prefix is how every writer's JSON starts, whitespace aside: the head
// node first, its call frame first.
const prefix = `{"head":{"callFrame":`

// Detect reports whether head is a V8 sampling heap profile: JSON whose
// first key is "head", whose first key is "callFrame".
func Detect(head []byte) bool {
	return parse.JSONStarts(head, prefix)
}

// callFrame is a node's frame, as the inspector protocol writes it
// (Runtime.CallFrame): lines and columns from 0.
type callFrame struct {
	FunctionName string `json:"functionName"`
	URL          string `json:"url"`
	LineNumber   int    `json:"lineNumber"`
	ColumnNumber int    `json:"columnNumber"`
}

// jsonNode is one node of the tree (SamplingHeapProfileNode).
type jsonNode struct {
	CallFrame callFrame  `json:"callFrame"`
	SelfSize  float64    `json:"selfSize"`
	ID        int64      `json:"id"`
	Children  []jsonNode `json:"children"`
}

// jsonSample is one sampled object (SamplingHeapProfileSample).
type jsonSample struct {
	Size   *float64 `json:"size"`
	NodeID *int64   `json:"nodeId"`
}

// node is a node of the tree, flattened: its parent's index (-1 for the
// root), its frame's name and V8's estimate of its bytes.
type node struct {
	parent   int32
	name     string
	selfSize float64
	// state marks a node of a V8 VM state ("(IDLE)", "(V8 API)",
	// "(GC)"), no JavaScript: allocations of the profile's own writing
	// land there after its selfSize was taken, so that it says nothing
	// of the interval (rate.go).
	state bool
}

// group is the samples of one value v (see rate.go) at one node.
type group struct {
	node int32
	v    int64
	n    int64
}

// Parse reads a V8 sampling heap profile and sends one in-use record per
// node and sample value (rate.go) to sink. opt.Rate, when set, is the
// sampling interval; otherwise it is found from the samples (findRate).
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	if bom, _ := r.Peek(3); string(bom) == "\xef\xbb\xbf" {
		r.Discard(3) // a byte-order mark, as an editor saving on Windows writes: no JSON
	}
	rd := &reader{name: name, opt: opt, byID: map[int64]int32{}, groups: map[[2]int64]int64{}}
	if err := rd.read(r); err != nil {
		return nil, err
	}
	return rd.send(sink)
}

type reader struct {
	name    string
	opt     parse.Options
	nodes   []node
	byID    map[int64]int32
	groups  map[[2]int64]int64 // (node index, value) -> samples
	samples int64
	orphans int64 // samples of nodes the tree lacks
	// held are samples read before the head, kept until it is.
	held       []jsonSample
	sawHead    bool
	sawSamples bool
}

func (rd *reader) errAt(off int64, err error, format string, args ...any) error {
	return &parse.Error{File: rd.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// read decodes the object's keys: the head whole, the samples one by one.
func (rd *reader) read(r io.Reader) error {
	dec := json.NewDecoder(r)
	if err := rd.delim(dec, '{', "the profile object"); err != nil {
		return err
	}
	for dec.More() {
		at := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return rd.errAt(at, err, "reading a key of the profile object")
		}
		switch tok {
		case "head":
			if err := rd.readHead(dec); err != nil {
				return err
			}
		case "samples":
			if err := rd.readSamples(dec); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return rd.errAt(dec.InputOffset(), err, "reading %v", tok)
			}
		}
	}
	if err := rd.delim(dec, '}', "the end of the profile object"); err != nil {
		return err
	}
	if err := parse.JSONEnd(dec); err != nil {
		return rd.errAt(-1, err, "V8 heap profile")
	}
	if !rd.sawHead {
		return rd.errAt(-1, nil, "no \"head\": not a V8 sampling heap profile")
	}
	return nil
}

func (rd *reader) delim(dec *json.Decoder, want json.Delim, what string) error {
	at := dec.InputOffset()
	tok, err := dec.Token()
	if err == nil && tok != want {
		err = fmt.Errorf("found %v", tok)
	}
	if err != nil {
		return rd.errAt(at, err, "expected %s (%q)", what, string(want))
	}
	return nil
}

// readHead decodes the tree and flattens it.
func (rd *reader) readHead(dec *json.Decoder) error {
	at := dec.InputOffset()
	if rd.sawHead {
		return rd.errAt(at, nil, "a second \"head\"")
	}
	var head jsonNode
	if err := dec.Decode(&head); err != nil {
		return rd.errAt(at, err, "reading the tree of call frames (\"head\")")
	}
	rd.sawHead = true
	if err := rd.flatten(&head, -1); err != nil {
		return rd.errAt(at, err, "the tree of call frames (\"head\")")
	}
	held := rd.held
	rd.held = nil
	for i, s := range held {
		if err := rd.add(s); err != nil {
			return rd.errAt(-1, err, "sample %d", i+1)
		}
	}
	return nil
}

// flatten adds n and its descendants to rd.nodes, depth first.
func (rd *reader) flatten(n *jsonNode, parent int32) error {
	if _, dup := rd.byID[n.ID]; dup {
		return fmt.Errorf("node id %d appears twice", n.ID)
	}
	if n.SelfSize < 0 {
		return fmt.Errorf("node %d: selfSize %v: want bytes ≥ 0", n.ID, n.SelfSize)
	}
	i := int32(len(rd.nodes))
	rd.byID[n.ID] = i
	name := frameName(n.CallFrame)
	if cf := n.CallFrame; rd.opt.Lines && cf.LineNumber >= 0 {
		// By line, an anonymous function is told by its line, not by
		// its position in its name too.
		name = parse.LineName(cmp.Or(cf.FunctionName, "(anonymous)"), cf.URL, int64(cf.LineNumber)+1)
	}
	rd.nodes = append(rd.nodes, node{parent: parent, name: name, selfSize: n.SelfSize, state: vmState(n.CallFrame)})
	for c := range n.Children {
		if err := rd.flatten(&n.Children[c], i); err != nil {
			return err
		}
	}
	return nil
}

// frameName names a frame as pprof-nodejs does: the function, or an
// anonymous one by its position, lines and columns from 1.
func frameName(cf callFrame) string {
	switch {
	case cf.FunctionName != "":
		return cf.FunctionName
	case cf.LineNumber < 0:
		return "(anonymous)" // no position either (-1)
	}
	return "(anonymous:L#" + strconv.Itoa(cf.LineNumber+1) + ":C#" + strconv.Itoa(cf.ColumnNumber+1) + ")"
}

// readSamples streams the samples array.
func (rd *reader) readSamples(dec *json.Decoder) error {
	if rd.sawSamples {
		return rd.errAt(dec.InputOffset(), nil, "a second \"samples\"")
	}
	rd.sawSamples = true
	if err := rd.delim(dec, '[', "the array of samples"); err != nil {
		return err
	}
	for i := 1; dec.More(); i++ {
		at := dec.InputOffset()
		var s jsonSample
		if err := dec.Decode(&s); err != nil {
			return rd.errAt(at, err, "reading sample %d", i)
		}
		if !rd.sawHead {
			rd.held = append(rd.held, s)
			continue
		}
		if err := rd.add(s); err != nil {
			return rd.errAt(at, err, "sample %d", i)
		}
	}
	return rd.delim(dec, ']', "the end of the samples")
}

// add counts one sampled object at its node and value.
func (rd *reader) add(s jsonSample) error {
	if s.Size == nil || s.NodeID == nil {
		return errors.New("want its size and nodeId")
	}
	size := *s.Size
	if !(size >= 1) || size != float64(int64(size)) || size > 1<<50 {
		return fmt.Errorf("size %v: want a whole number of bytes ≥ 1", size)
	}
	i, ok := rd.byID[*s.NodeID]
	if !ok {
		// V8 builds the tree, then lists the samples: an object the
		// writing itself allocated in between has a node the tree lacks
		// (seen in every node --heap-prof profile). It is the profiler's.
		rd.orphans++
		return nil
	}
	rd.groups[[2]int64{int64(i), int64(size)}]++
	rd.samples++
	return nil
}

// send finds the rate and sends the groups' records, by node and size.
func (rd *reader) send(sink parse.Sink) (*parse.Profile, error) {
	p := &parse.Profile{HasInUse: true}
	p.Source.Format = "heapprofile"
	groups := make([]group, 0, len(rd.groups))
	for k, n := range rd.groups {
		groups = append(groups, group{node: int32(k[0]), v: k[1], n: n})
	}
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.v, b.v))
	})
	if !rd.sawSamples {
		return rd.sendEstimates(p, sink), nil
	}
	rate, detail, warn, err := findRate(rd.nodes, groups, rd.opt.Rate)
	if err != nil {
		return nil, rd.errAt(-1, nil, "%s", err)
	}
	p.Source.Rate, p.Source.Samples = rate, float64(rd.samples)
	p.Source.Detail = detail
	if rd.orphans > 0 {
		p.Source.Detail += fmt.Sprintf("; %d %s of the profiler's own writing left out", rd.orphans, plural(rd.orphans, "sample"))
	}
	if warn != "" {
		p.Warnings = append(p.Warnings, warn)
	}
	unknown := rd.sendGroups(groups, rate, p, sink)
	if unknown > 0 {
		// The counts go to the source line, so that the warning reads the
		// same for every profile of a fleet, and is said once.
		p.Source.Detail += fmt.Sprintf("; %d of %d samples of an object size it does not tell", unknown, rd.samples)
		p.Warnings = append(p.Warnings, "some samples are of objects whose size the profile does not tell (it writes each as its estimated bytes, which objects of several sizes give): "+
			"their bytes have intervals; their object counts, as of the smallest size each allows, are the most they can be, without intervals")
	}
	return p, nil
}

// sendGroups sends each node's records at rate: per size, V8's own
// counts and bytes where its selfSize tells the sizes behind its values
// (resolve), else per value. It returns the samples of untold sizes.
func (rd *reader) sendGroups(groups []group, rate float64, p *parse.Profile, sink parse.Sink) (unknown int64) {
	st := rd.stacks()
	sv := newSolver(readBudget)
	rec := parse.Record{Scheme: parse.Bernoulli, Rate: rate}
	send := func(c parse.Counts) {
		rec.InUse = c
		p.Records++
		sink.Record(&rec)
	}
	eachNode(groups, func(gs []group) {
		self := rd.nodes[gs[0].node].selfSize
		res := resolve(gs, self, rate, sv, readTries)
		rec.Stack, rec.FrameIDs, rec.StackID = st.of(gs[0].node)
		if res.split == nil {
			share := untoldShare(gs, self)
			for _, g := range gs {
				send(untold(g, sv.sizes(g.v, rate), share))
				unknown += g.n
			}
			return
		}
		for i := range gs {
			for j, n := range res.split[i] {
				if n > 0 {
					b := res.sizes[i][j]
					k := scaled(n, b, rate)
					send(parse.Counts{Objects: float64(k), Bytes: float64(k * b), Samples: float64(n), Size: float64(b), Enc: parse.Scaled})
				}
			}
		}
	})
	return unknown
}

// untoldShare is what each byte of a node's sample values stands for in
// V8's own sum for the node (its selfSize). A sample's value rounds its
// scale alone, b·round(s(b)): 9 for objects of 4 KiB sampled every 32 KiB,
// whose s is 8.64, 4% too many; the node's sum rounds n·s(b) once. So a
// node whose sizes cannot be told gets V8's sum, shared among its values.
// A selfSize more than twice or under half its values' sum is no such
// rounding (the file is not V8's own): the values are taken as written.
func untoldShare(gs []group, self float64) float64 {
	var sum float64
	for _, g := range gs {
		sum += float64(g.n * g.v)
	}
	if share := self / sum; sum > 0 && share >= 0.5 && share <= 2 {
		return share
	}
	return 1
}

// untold are the counts of a value whose size is one of several: its
// bytes are V8's estimate whichever it is (share of its node's sum); its
// objects are counted as of the smallest size the value allows, the most
// they can be.
func untold(g group, sizes []int64, share float64) parse.Counts {
	bytes := float64(g.n*g.v) * share
	objects := float64(g.n)
	if len(sizes) > 0 {
		objects = bytes / float64(sizes[0])
	}
	return parse.Counts{Objects: objects, Bytes: bytes, Samples: float64(g.n), Enc: parse.Scaled}
}

// sendEstimates sends each node's selfSize as an estimate without an
// interval: a profile with no "samples" (written before the protocol had
// them) holds V8's estimates alone, not what they rest on.
func (rd *reader) sendEstimates(p *parse.Profile, sink parse.Sink) *parse.Profile {
	p.Warnings = append(p.Warnings, "the profile has no \"samples\" (a writer older than the protocol's samples): its sizes are V8's estimates, shown without intervals")
	p.Source.Detail = "V8's estimates only"
	st := rd.stacks()
	var rec parse.Record
	rec.Scheme = parse.Unknown
	for i := 1; i < len(rd.nodes); i++ {
		if rd.nodes[i].selfSize == 0 {
			continue
		}
		rec.Stack, rec.FrameIDs, rec.StackID = st.of(int32(i))
		rec.InUse = parse.Counts{Bytes: rd.nodes[i].selfSize, Enc: parse.Scaled}
		p.Records++
		sink.Record(&rec)
	}
	return p
}

func plural(n int64, what string) string {
	if n == 1 {
		return what
	}
	return what + "s"
}
