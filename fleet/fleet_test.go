package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/heapest/heapest/parse"
)

func TestNameProcess(t *testing.T) {
	for _, c := range []struct {
		path, proc string
		seq        Seq
		ok         bool
	}{
		{"d/jeprof.1234.0.m0.heap", "d/jeprof.1234", Seq{0, 0}, true},
		{"d/jeprof.1234.7.i12.heap", "d/jeprof.1234", Seq{7, 12}, true},
		{"d/jeprof.1234.8.f.heap.gz", "d/jeprof.1234", Seq{8, 0}, true},
		{"/var/x/my.prefix.99.1.u3.heap", "/var/x/my.prefix.99", Seq{1, 3}, true},
		{"d/heap.pb.gz", "", Seq{}, false},
		{"d/jeprof.123.heap", "", Seq{}, false},
		// gperftools: PREFIX.%04d.heap, the prefix one process's.
		{"d/hp.0001.heap", "d/hp", Seq{1, 0}, true},
		{"/tmp/app.4242.0012.heap", "/tmp/app.4242", Seq{12, 0}, true},
		{"d/hp.12345.heap.gz", "d/hp", Seq{12345, 0}, true},
		{"d/hp.001.heap", "", Seq{}, false},
		{"d/jeprof.1234.0.x0.heap", "", Seq{}, false},
	} {
		proc, seq, ok := NameProcess(c.path)
		if proc != c.proc || seq != c.seq || ok != c.ok {
			t.Errorf("NameProcess(%q) = %q %v %v, want %q %v %v", c.path, proc, seq, ok, c.proc, c.seq, c.ok)
		}
	}
}

func TestLatestAndNameDuplicates(t *testing.T) {
	paths := []string{
		"a/jeprof.1.0.f.heap", "a/jeprof.1.10.f.heap", "a/jeprof.1.9.i2.heap",
		"a/jeprof.2.0.f.heap", "b/jeprof.1.0.f.heap", "b/other.heap",
	}
	kept, dropped := Latest(paths)
	if want := []string{"a/jeprof.1.10.f.heap", "a/jeprof.2.0.f.heap", "b/jeprof.1.0.f.heap", "b/other.heap"}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if want := []string{"a/jeprof.1.0.f.heap", "a/jeprof.1.9.i2.heap"}; !reflect.DeepEqual(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	groups := NameDuplicates(paths)
	want := [][]string{{"a/jeprof.1.0.f.heap", "a/jeprof.1.9.i2.heap", "a/jeprof.1.10.f.heap"}}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("NameDuplicates = %v, want %v (oldest first)", groups, want)
	}
	msg := (&DuplicateError{Groups: groups, How: "names"}).Error()
	for _, s := range []string{"3 inputs", "one process", "--latest-per-process", "--allow-duplicates", "a/jeprof.1.10.f.heap"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
}

func TestMapsProcess(t *testing.T) {
	proc1 := "55d0c0000000-55d0c0001000 r-xp 00000000 08:01 12 /usr/bin/server\n" +
		"55d0c1000000-55d0c1200000 rw-p 00000000 00:00 0 [heap]\n" +
		"7f11a0000000-7f11a0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"
	grown := strings.Replace(proc1, "55d0c1200000", "55d0c1900000", 1) // its heap grew
	other := strings.Replace(proc1, "7f11a", "7f22b", -1)              // another process: other addresses
	if MapsProcess([]byte(proc1)) == "" || MapsProcess([]byte(proc1)) != MapsProcess([]byte(grown)) {
		t.Error("one process's maps, its heap grown, should be one process")
	}
	if MapsProcess([]byte(proc1)) == MapsProcess([]byte(other)) {
		t.Error("libraries at other addresses should be another process")
	}
	if MapsProcess([]byte("7f-80 rw-p 0 00:00 0 [stack]\n")) != "" || MapsProcess(nil) != "" {
		t.Error("maps naming no file say nothing")
	}
	static := "00400000-00402000 r-xp 00000000 08:01 12 /usr/bin/server\n"
	if MapsProcess([]byte(static)) != "" {
		t.Error("a non-PIE program with no library at a randomized address says nothing: every process looks alike")
	}
	pie := []parse.Mapping{{Start: 0x400000, Limit: 0x500000, File: "/bin/go-server"}, {Start: 0x7f11a0000000, Limit: 0x7f11a0020000, File: "/lib/libc.so.6"}}
	moved := []parse.Mapping{pie[0], {Start: 0x7f22b0000000, Limit: 0x7f22b0020000, File: "/lib/libc.so.6"}}
	if MappingsProcess(pie) == "" || MappingsProcess(pie) == MappingsProcess(moved) || MappingsProcess(pie[:1]) != "" {
		t.Error("MappingsProcess: a library at other addresses is another process; a static binary alone says nothing")
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"h1/a.heap", "h1/sub/b.heap", "h2/c.heap", "h2/.hidden", ".git/x", "top.heap"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(s ...string) []string {
		for i := range s {
			s[i] = filepath.Join(dir, s[i])
		}
		return s
	}
	for _, c := range []struct {
		name   string
		args   []string
		stdin  string
		listed bool
		want   []string
		err    string
	}{
		{"dir recursive, hidden skipped", j("."), "", false, j("h1/a.heap", "h1/sub/b.heap", "h2/c.heap", "top.heap"), ""},
		{"glob", j("h*/*.heap"), "", false, j("h1/a.heap", "h2/c.heap"), ""},
		{"sorted and unique", j("top.heap", "h2", "top.heap"), "", false, j("h2/c.heap", "top.heap"), ""},
		{"missing kept for the reader", j("nope.heap"), "", false, j("nope.heap"), ""},
		{"stdin list", []string{"-"}, dir + "/top.heap\n\n" + dir + "/h2/c.heap\r\n", true, j("h2/c.heap", "top.heap"), ""},
		{"stdin list, NUL-ended", []string{"-"}, dir + "/top.heap\x00" + dir + "/h2/c.heap\x00", true, j("h2/c.heap", "top.heap"), ""},
		{"stdin binary, not a list", []string{"-"}, "\x01\x02\x00\x03", true, nil, "binary data"},
		{"stdin list, NUL-ended, a missing path first", []string{"-"}, dir + "/gone.heap\x00" + dir + "/top.heap\x00", true, j("gone.heap", "top.heap"), ""},
		{"stdin profile", []string{"-"}, "", false, []string{"-"}, ""},
		{"glob matching nothing", j("*.nothing"), "", false, nil, "no file matches"},
	} {
		got, err := Expand(c.args, strings.NewReader(c.stdin), c.listed)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	// One file spelled two ways, or through a link, is one input.
	other := t.TempDir()
	link := filepath.Join(other, "link.heap")
	if err := os.Symlink(filepath.Join(dir, "top.heap"), link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{filepath.Join(dir, "top.heap"), filepath.Join(dir, "h1", "..", "top.heap")},
		{filepath.Join(dir, "top.heap"), link},
	} {
		got, err := Expand(args, nil, false)
		if err != nil || len(got) != 1 {
			t.Errorf("%q: %q %v, want one of them", args, got, err)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Expand([]string{empty}, nil, false); err == nil || !strings.Contains(err.Error(), "holds no profile") {
		t.Errorf("empty directory: %v", err)
	}
}

func TestExpandKeepsURLs(t *testing.T) {
	// Glob characters and a path-like tail do not make a URL a pattern
	// or a file: it passes through as given, sorted with the rest.
	args := []string{
		"http://127.0.0.1:6060/debug/pprof/heap?seconds=30",
		"https://host/heap*?[x]",
		"ftp://host/heap",
	}
	got, err := Expand(args, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ftp://host/heap", "http://127.0.0.1:6060/debug/pprof/heap?seconds=30", "https://host/heap*?[x]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Expand(%q) = %q, want %q", args, got, want)
	}
}

// Forked processes keep their parent's mappings: the pids in their dumps'
// names tell them apart; a dump copied elsewhere keeps its pid.
func TestNamedProcess(t *testing.T) {
	maps := MapsProcess([]byte("7f11a0000000-7f11a0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	a, b := NamedProcess(maps, "d/jeprof.100.0.m0.heap"), NamedProcess(maps, "d/jeprof.101.0.m0.heap")
	if a == b {
		t.Errorf("workers 100 and 101: both %q", a)
	}
	if c := NamedProcess(maps, "copy/jeprof.100.3.f.heap"); c != a {
		t.Errorf("a copy of worker 100's dump: %q, want %q", c, a)
	}
	if c := NamedProcess(maps, "d/heap.prof"); c != maps {
		t.Errorf("a name with no pid: %q, want the maps' %q", c, maps)
	}
	if c := NamedProcess("", "d/jeprof.100.0.m0.heap"); c != "" {
		t.Errorf("maps that say nothing: %q, want nothing", c)
	}
}

// TestCorrelated: the largest group of inputs of one process but for the
// pids in their names (forked workers, and dumps of one process), first
// in input order among equals; unknown processes are in no group.
func TestCorrelated(t *testing.T) {
	host1 := MapsProcess([]byte("7f11a0000000-7f11a0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	host2 := MapsProcess([]byte("7f22b0000000-7f22b0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	for _, c := range []struct {
		name  string
		procs [][2]string // path, its contents' process
		want  string
	}{
		{"independent", [][2]string{{"a/jeprof.1.0.m0.heap", host1}, {"b/jeprof.1.0.m0.heap", host2}}, ""},
		{"two families", [][2]string{
			{"h1/jeprof.10.0.m0.heap", host1}, {"h2/jeprof.20.0.m0.heap", host2}, {"h1/jeprof.11.0.m0.heap", host1},
			{"h2/jeprof.21.0.m0.heap", host2}, {"h2/jeprof.22.0.m0.heap", host2}},
			"h2/jeprof.20.0.m0.heap h2/jeprof.21.0.m0.heap h2/jeprof.22.0.m0.heap"},
		{"ties: the first", [][2]string{{"x/jeprof.2.0.m0.heap", host2}, {"x/jeprof.1.0.m0.heap", host1}, {"x/jeprof.3.0.m0.heap", host2}, {"x/jeprof.4.0.m0.heap", host1}},
			"x/jeprof.2.0.m0.heap x/jeprof.3.0.m0.heap"},
		{"one process, no pids", [][2]string{{"a.heap", host1}, {"b.heap", host1}}, "a.heap b.heap"},
		{"unknown", [][2]string{{"a/jeprof.1.0.m0.heap", ""}, {"a/jeprof.2.0.m0.heap", ""}}, ""},
	} {
		paths := make([]string, len(c.procs))
		for i, p := range c.procs {
			paths[i] = p[0]
		}
		got := Correlated(paths, func(i int) []string { return []string{NamedProcess(c.procs[i][1], paths[i])} })
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A refusal says how the processes were told apart, and for JFR
// recordings and copies of .NET traces what to give instead of
// --latest-per-process.
func TestContentsDuplicates(t *testing.T) {
	maps, jfr := MapsProcess([]byte("7f11a0000000-7f11a0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n")), RecordingProcess("jfr", "1700000000123456789")
	trace := RecordingProcess("nettrace", "4242@981234567890")
	for _, c := range []struct {
		keys       []string
		how, hint  string
		notInError string
	}{
		{[]string{maps}, "libraries mapped", "--latest-per-process cannot tell which is newest", "use --latest-per-process"},
		{[]string{jfr}, "2 inputs are dumps of one recording (by their JFR chunks", "use --latest-per-process to keep the last dump of each recording", ""},
		{[]string{maps, jfr}, "libraries mapped at identical addresses, JFR", "--latest-per-process cannot tell it for all of them", "use --latest-per-process"},
		{[]string{trace}, "2 inputs are copies of one trace (by their .NET traces' process id and start counter", "give each trace once", "--latest-per-process"},
		{[]string{trace, RecordingProcess("nettrace", "4242@981299999999")}, "4 inputs are copies of 2 traces", "give each trace once", "successive"},
	} {
		// Two inputs per process.
		var paths, procs []string
		for _, k := range c.keys {
			paths, procs = append(paths, k+"/a", k+"/b"), append(procs, k, k)
		}
		e := ContentsDuplicates(paths, func(i int) []string { return []string{procs[i]} }, func(int) int64 { return 0 })
		msg := e.Error()
		if !strings.Contains(msg, c.how) || !strings.Contains(msg, c.hint) || c.notInError != "" && strings.Contains(msg, c.notInError) {
			t.Errorf("keys %q: %q", c.keys, msg)
		}
	}
}

// TestOlder: of inputs told apart by their contents, those another of
// their group supersedes. Of dumps of one process, all but the one taken
// last, when each says when; of dumps of one recording, all but the one
// that holds every chunk of the others (when a recording dropped its
// oldest chunks, none does). Recordings of one JVM and copies of a trace
// are not chosen among, nor is any group when one of them is not.
func TestOlder(t *testing.T) {
	maps := func(at string) string {
		return MapsProcess([]byte(at + "0000000-" + at + "0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	}
	p, q := maps("7f11a"), maps("7f22b")
	c1, c2, c3 := RecordingProcess("jfr", "1700000000000000001"), RecordingProcess("jfr", "1700000000000000002"), RecordingProcess("jfr", "1700000000000000003")
	heap, trace := heapPrefix+"4242@1700000000000", RecordingProcess("nettrace", "4242@981234567890")
	k := func(keys ...string) []string { return keys }
	for _, c := range []struct {
		name  string
		keys  [][]string
		times []int64
		want  []int // nil: not ok
		hint  string
	}{
		{"newest last", [][]string{k(p), k(p), k(p)}, []int64{1, 2, 3}, []int{0, 1}, "use --latest-per-process"},
		{"newest first", [][]string{k(p), k(p)}, []int64{9, 2}, []int{1}, "use --latest-per-process"},
		{"two processes", [][]string{k(p), k(q), k(q), k(p), k("other")}, []int64{5, 7, 6, 4, 0}, []int{2, 3}, "use --latest-per-process"},
		{"copies of one profile: the last stays", [][]string{k(p), k(p)}, []int64{5, 5}, []int{0}, "use --latest-per-process"},
		{"one undated", [][]string{k(p), k(q), k(q), k(p)}, []int64{5, 7, 6, 0}, nil, "cannot tell which is newest"},
		{"dumps of one recording", [][]string{k(c1, c2), k(c1), k(c1, c2, c3)}, []int64{1, 1, 1}, []int{0, 1}, "use --latest-per-process to keep the last dump"},
		{"copies of a dump", [][]string{k(c1, c2), k(c2, c1)}, []int64{1, 1}, []int{0}, "use --latest-per-process to keep the last dump"},
		{"chunks dropped (maxage)", [][]string{k(c1, c2), k(c2, c3)}, []int64{1, 1}, nil, "unless maxage or maxsize dropped them"},
		{"one JVM's recordings, read live", [][]string{k(c1, heap), k(c3, heap)}, []int64{1, 3}, nil, "give only the newest recording of each JVM"},
		{"one JVM's recordings and a dump", [][]string{k(c1, heap), k(c1, c2, heap), k(c3, heap)}, []int64{1, 1, 3}, nil, "unless maxage"},
		{"copies of a trace", [][]string{k(trace), k(trace)}, []int64{0, 0}, nil, "give each trace once"},
		{"a recording and a process", [][]string{k(c1), k(p), k(c1, c2), k(p)}, []int64{1, 5, 1, 6}, []int{0, 1}, "use --latest-per-process"},
		{"a recording and an undated process", [][]string{k(c1), k(p), k(c1, c2), k(p)}, []int64{1, 0, 1, 0}, nil, "cannot tell it for all of them"},
	} {
		paths := make([]string, len(c.keys))
		for i := range paths {
			paths[i] = fmt.Sprintf("in%d", i)
		}
		e := ContentsDuplicates(paths, func(i int) []string { return c.keys[i] }, func(i int) int64 { return c.times[i] })
		got, ok := e.Older()
		if ok != (c.want != nil) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Older() = %v, %v; want %v", c.name, got, ok, c.want)
		}
		if msg := e.Error(); !strings.Contains(msg, c.hint) {
			t.Errorf("%s: message %q lacks %q", c.name, msg, c.hint)
		}
	}
}

// TestLink: inputs with several keys (a JFR dump's chunks) are one
// group when they share one, directly or through another input: the
// dumps of a recording that drops its oldest chunks share none with the
// dumps far from them, and are still of one recording.
func TestLink(t *testing.T) {
	keys := map[string][]string{
		"d1": {"jfr:1", "jfr:1", "jfr:2"},
		"x":  {"maps:a"},
		"d2": {"jfr:2", "jfr:3"},
		"y":  {"", "maps:b"},
		"d3": {"jfr:3", "jfr:4"},
		"z":  {"maps:a"},
		"w":  nil,
		// Forked workers, told apart by their pids, and a dump of one of
		// them under a name without its pid (before and after them).
		"p1": {"maps:c pid:1"},
		"p2": {"maps:c pid:2"},
		"p3": {"maps:d pid:3"},
		"q":  {"maps:d"},
		"p4": {"maps:d pid:4"},
	}
	paths := []string{"d1", "x", "d2", "y", "d3", "z", "w", "p1", "p2", "p3", "q", "p4"}
	all, labels := link(len(paths), func(i int) []string { return keys[paths[i]] })
	var groups [][]string
	for g, members := range all {
		groups = append(groups, append(pathsOf(paths, members), labels[g]))
	}
	got := fmt.Sprint(groups)
	if want := "[[d1 d2 d3 jfr:1] [x z maps:a] [y maps:b] [w ] [p1 maps:c pid:1] [p2 maps:c pid:2] [p3 q p4 maps:d pid:3]]"; got != want {
		t.Errorf("groups, each with its first key, %s, want %s", got, want)
	}
}

// TestFamiliesOf: a merge's families count with the inputs of those
// families beside it (and in other merges); the largest family's inputs
// are those that hold some of it, raw or merged.
func TestFamiliesOf(t *testing.T) {
	host1 := MapsProcess([]byte("7f11a0000000-7f11a0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	host2 := MapsProcess([]byte("7f22b0000000-7f22b0020000 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n"))
	type in struct {
		path, proc string
		merged     map[string]int
	}
	inputs := []in{
		{"h1/jeprof.10.0.m0.heap", host1, nil},
		{"part1.pb.gz", "heapest:merge-1", map[string]int{host1: 2, host2: 1}},
		{"h2/jeprof.20.0.m0.heap", host2, nil},
		{"part2.pb.gz", "heapest:merge-2", map[string]int{host1: 2}},
		{"old.pb.gz", "", nil},
	}
	paths := make([]string, len(inputs))
	for i, x := range inputs {
		paths[i] = x.path
	}
	f := FamiliesOf(paths, func(i int) []string { return []string{NamedProcess(inputs[i].proc, paths[i])} },
		func(i int) map[string]int { return inputs[i].merged })
	want := Families{Counts: map[string]int{host1: 5, host2: 2}, K: 5, Paths: []string{"h1/jeprof.10.0.m0.heap", "part1.pb.gz", "part2.pb.gz"}}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("FamiliesOf = %+v, want %+v", f, want)
	}
}

// TestHeldDuplicates: a merge given beside an input it holds, or beside
// another merge that holds some of the same, is refused with them; merges
// of other inputs, and inputs that are no merges, are not.
func TestHeldDuplicates(t *testing.T) {
	paths := []string{"fleet.pb.gz", "a.heap", "b.heap", "c.heap", "eu.pb.gz", "us.pb.gz"}
	keys := [][]string{{"merge:1"}, {"maps:a+pid:1"}, {"maps:b+pid:2"}, {"maps:c+pid:3"}, {"merge:2"}, {"merge:3"}}
	held := [][]string{{"maps:a+pid:1", "maps:b+pid:2"}, nil, nil, nil, {"maps:b+pid:2"}, {"maps:d+pid:4"}}
	for _, c := range []struct {
		inputs []int
		want   [][]string // nil: no refusal
	}{
		{[]int{0, 3}, nil},
		{[]int{0, 1}, [][]string{{"fleet.pb.gz", "a.heap"}}},
		{[]int{1, 0, 2, 3}, [][]string{{"a.heap", "fleet.pb.gz", "b.heap"}}},
		{[]int{0, 4}, [][]string{{"fleet.pb.gz", "eu.pb.gz"}}},
		{[]int{4, 2, 5}, [][]string{{"eu.pb.gz", "b.heap"}}},
		{[]int{0, 5, 3}, nil},
	} {
		var ps []string
		for _, i := range c.inputs {
			ps = append(ps, paths[i])
		}
		e := HeldDuplicates(ps, func(i int) []string { return keys[c.inputs[i]] }, func(i int) []string { return held[c.inputs[i]] })
		switch {
		case c.want == nil && e != nil:
			t.Errorf("%q: refused %q", ps, e.Groups)
		case c.want != nil && (e == nil || !reflect.DeepEqual(e.Groups, c.want)):
			t.Errorf("%q: refusal %v, want groups %q", ps, e, c.want)
		case e != nil && !strings.Contains(e.Error(), "a merge and inputs it holds already"):
			t.Errorf("%q: %q", ps, e.Error())
		}
	}
}

// A directory under the one given that cannot be read is an input of its
// own, which its reader reports (and --keep-going skips and names), not
// an error that stops the walk. Root reads any directory: the test needs
// another user.
func TestExpandUnreadableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory: run as another user to test this")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.heap"), []byte("x"), 0o644)
	locked := filepath.Join(dir, "locked")
	os.Mkdir(locked, 0o755)
	os.WriteFile(filepath.Join(locked, "b.heap"), []byte("x"), 0o644)
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o755)
	got, err := Expand([]string{dir}, nil, false)
	if want := []string{filepath.Join(dir, "a.heap"), locked}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Expand = %q, %v; want %q", got, err, want)
	}
}

// The limit on open files is no fault of an input: --keep-going must not
// skip inputs for it, whatever wraps the error.
func TestOutOfFiles(t *testing.T) {
	emfile := &os.PathError{Op: "open", Path: "a.heap", Err: syscall.EMFILE}
	if !OutOfFiles(fmt.Errorf("reading: %w", emfile)) || !OutOfFiles(syscall.ENFILE) {
		t.Error("EMFILE or ENFILE not told")
	}
	if OutOfFiles(&os.PathError{Op: "open", Path: "a.heap", Err: syscall.EACCES}) {
		t.Error("EACCES told as the limit on open files")
	}
}
