package report

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/unbias"
)

// namedInput is an input's name and bytes.
type namedInput struct {
	name string
	data []byte
}

// duplicatesOf reads the inputs into a Builder of opt and returns its
// refusal.
func duplicatesOf(t *testing.T, opt Options, inputs ...namedInput) *fleet.DuplicateError {
	t.Helper()
	b := NewBuilder(opt)
	for _, in := range inputs {
		if _, _, err := b.AddReader(in.name, bytes.NewReader(in.data), Input{}); err != nil {
			t.Fatal(err)
		}
	}
	return b.Duplicates()
}

// dupCase is a set of inputs, the one group of them a refusal must hold
// ("" for no refusal), and words its message must and must not have,
// for a Builder of opt (the zero Options read inuse_space).
type dupCase struct {
	name       string
	inputs     []namedInput
	group      string
	say, never string
	opt        Options
}

func checkDuplicates(t *testing.T, cases []dupCase) {
	t.Helper()
	for _, c := range cases {
		dup := duplicatesOf(t, c.opt, c.inputs...)
		if c.group == "" {
			if dup != nil {
				t.Errorf("%s: refused: %v", c.name, dup)
			}
			continue
		}
		if dup == nil || len(dup.Groups) != 1 || strings.Join(dup.Groups[0], " ") != c.group {
			t.Errorf("%s: duplicates %+v, want %s as one", c.name, dup, c.group)
			continue
		}
		if msg := dup.Error(); !strings.Contains(msg, c.say) || c.never != "" && strings.Contains(msg, c.never) {
			t.Errorf("%s: message %q: want %q said, and not %q", c.name, msg, c.say, c.never)
		}
	}
}

// Two dumps of one JFR recording (jcmd JFR.dump, twice) both begin with
// its first chunk: summing them would count that chunk's allocations
// twice, and they are refused as one recording. Another recording is
// not. A recording with maxage or maxsize drops its oldest chunks: a
// later dump begins with another chunk, yet shares the chunks between
// with the dump before. Dumps that share no chunk hold different events,
// and sum.
func TestJFRDumpsOfOneRecording(t *testing.T) {
	both := testfile.Gunzip(t, "../parse/jfr/testdata/jdk17-2chunks.jfr.gz")
	size := binary.BigEndian.Uint64(both[8:16]) // the first chunk's header: magic, version, size
	if string(both[:4]) != "FLR\x00" || size == 0 || size >= uint64(len(both)) {
		t.Fatalf("not a recording of two chunks: magic %q, first chunk %d of %d bytes", both[:4], size, len(both))
	}
	d1, d2, d3 := namedInput{"d1.jfr", both[:size]}, namedInput{"d2.jfr", both}, namedInput{"d3.jfr", both[size:]}
	other := namedInput{"other.jfr", testfile.Gunzip(t, "../parse/jfr/testdata/first-sample-jdk17.jfr.gz")}
	// The dump that holds both chunks holds the others' events:
	// --latest-per-process keeps it.
	const latest = "use --latest-per-process to keep the last dump of each recording"
	checkDuplicates(t, []dupCase{
		{"the first chunk and both", []namedInput{d1, d2, other}, "d1.jfr d2.jfr", latest, "", Options{}},
		{"two recordings", []namedInput{d2, other}, "", "", "", Options{}},
		{"both and the second chunk", []namedInput{d2, d3}, "d2.jfr d3.jfr", latest, "", Options{}},
		{"no chunk shared", []namedInput{d1, d3}, "", "", "", Options{}},
	})
	for _, c := range []struct {
		name   string
		inputs []namedInput
		older  []int
	}{
		{"the first chunk, other, both", []namedInput{d1, other, d2}, []int{0}},
		{"both and the second chunk", []namedInput{d2, d3}, []int{1}},
		{"all three", []namedInput{d3, d2, d1}, []int{0, 2}},
	} {
		if older, ok := duplicatesOf(t, Options{}, c.inputs...).Older(); !ok || !slices.Equal(older, c.older) {
			t.Errorf("%s: Older() = %v, %v; want %v", c.name, older, ok, c.older)
		}
	}
}

// Two recordings of one JVM, one after the other, share no chunk: their
// allocations sum. But the leak profiler's objects are the JVM's, and the
// second lists again those of the first still alive (parse.Source.Heap):
// read for an in-use value, or for pprof output, which has every value,
// they are refused; read for allocations, or by default (allocations, for
// JFR), they are not.
func TestJFRRecordingsOfOneJVM(t *testing.T) {
	r0 := namedInput{"r0.jfr", testfile.Gunzip(t, "../parse/jfr/testdata/jdk17-one-jvm-0.jfr.gz")}
	r1 := namedInput{"r1.jfr", testfile.Gunzip(t, "../parse/jfr/testdata/jdk17-one-jvm-1.jfr.gz")}
	other := namedInput{"other.jfr", testfile.Gunzip(t, "../parse/jfr/testdata/jdk17-old-objects-2chunks.jfr.gz")}
	const say = "2 inputs are recordings of one JVM (by their JVM's pid and start time (jdk.JVMInformation))"
	checkDuplicates(t, []dupCase{
		{"inuse_objects", []namedInput{r0, other, r1}, "r0.jfr r1.jfr", say, "--latest-per-process", Options{Value: unbias.InUseObjects}},
		{"every value", []namedInput{r0, r1}, "r0.jfr r1.jfr", "alloc_space", "", Options{AllValues: true}},
		{"alloc_space", []namedInput{r0, r1}, "", "", "", Options{Value: unbias.AllocSpace}},
		{"the default", []namedInput{r0, r1}, "", "", "", Options{DefaultValue: true}},
		// A copy shares its chunks too, which say more: one recording.
		{"a copy", []namedInput{r0, {"r0b.jfr", r0.data}}, "r0.jfr r0b.jfr", "dumps of one recording", "JVM", Options{Value: unbias.InUseObjects}},
	})
}
