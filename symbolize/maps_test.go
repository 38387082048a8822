package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

func TestParseMapsLines(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []parse.Mapping
		wantErr string
	}{
		{
			name: "pie executable",
			text: "55c282113000-55c2831c8000 r-xp 00181000 00:11 4891588                    /usr/local/bin/testbinary\n",
			want: []parse.Mapping{{Start: 0x55c282113000, Limit: 0x55c2831c8000, Offset: 0x181000, File: "/usr/local/bin/testbinary", Dev: "00:11"}},
		},
		{
			name: "non-executable and anonymous lines skipped",
			text: "562bc259a000-562bc259b000 r--p 00000000 fe:00 9986962 /opt/heaplab/t\n" +
				"7fc3fc800000-7fc3fe600000 rw-p 00000000 00:00 0 \n" +
				"7f5328021000-7f532c000000 ---p 00000000 00:00 0\n",
		},
		{
			name: "pseudo files skipped",
			text: "7fc401e32000-7fc401e34000 r-xp 00000000 00:00 0                          [vdso]\n" +
				"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n",
		},
		{
			name:    "repeated line read once",
			text:    strings.Repeat("400000-401000 r-xp 00000000 08:01 12 /bin/x\n", 3) + "402000-403000 r-xp 00002000 08:01 12 /bin/x\n",
			want:    []parse.Mapping{{Start: 0x400000, Limit: 0x401000, File: "/bin/x", Dev: "08:01"}, {Start: 0x402000, Limit: 0x403000, Offset: 0x2000, File: "/bin/x", Dev: "08:01"}},
			wantErr: "2 line(s) repeat the mapping before them: read once",
		},
		{
			name: "execute-only mapping kept",
			text: "400000-401000 --xp 00000000 08:01 12 /bin/xonly\n",
			want: []parse.Mapping{{Start: 0x400000, Limit: 0x401000, File: "/bin/xonly", Dev: "08:01"}},
		},
		{
			name: "path with blanks and deleted mark, CRLF",
			text: "7f0000001000-7f0000002000 r-xp 00001000 08:01 99 /tmp/my lib.so (deleted)\r\n",
			want: []parse.Mapping{{Start: 0x7f0000001000, Limit: 0x7f0000002000, Offset: 0x1000, File: "/tmp/my lib.so", Deleted: true, Dev: "08:01"}},
		},
		{
			name: "section header and blank lines",
			text: "\nMAPPED_LIBRARIES:\n\n00400000-00401000 r-xp 00000000 08:01 1 /bin/a\n\n",
			want: []parse.Mapping{{Start: 0x400000, Limit: 0x401000, File: "/bin/a", Dev: "08:01"}},
		},
		{
			name: "macOS synthesized lines",
			text: "0000000100000000-0000000100004000: /Users/me/a.out\n",
			want: []parse.Mapping{{Start: 0x100000000, Limit: 0x100004000, File: "/Users/me/a.out"}},
		},
		{
			name: "FreeBSD map lines",
			text: "0x200000 0x201000 1 0 0xfffff8000 r-- 1 0 0x1000 COW NC vnode /usr/bin/app NCH -1\n" +
				"0x201000 0x203000 2 0 0xfffff8000 r-x 1 0 0x1000 COW NC vnode /usr/bin/app NCH -1\n" +
				"0x203000 0x204000 1 0 0xfffff8000 rw- 1 0 0x1000 COW NC default - NCH -1\n",
			want: []parse.Mapping{{Start: 0x201000, Limit: 0x203000, Offset: 0x1000, File: "/usr/bin/app"}},
		},
		{
			name:    "garbage reported, good lines kept",
			text:    "hello world\n00400000-00401000 r-xp 00000000 08:01 1 /bin/a\nzz-yy r-xp 0 0 0 /x\n",
			want:    []parse.Mapping{{Start: 0x400000, Limit: 0x401000, File: "/bin/a", Dev: "08:01"}},
			wantErr: "maps line 1: expected",
		},
		{
			name:    "inverted range",
			text:    "00401000-00400000 r-xp 00000000 08:01 1 /bin/a\n",
			wantErr: "maps line 1",
		},
		{
			name:    "bad offset",
			text:    "00400000-00401000 r-xp 0000zz00 08:01 1 /bin/a\n",
			wantErr: "maps line 1",
		},
		{
			name:    "short permissions",
			text:    "00400000-00401000 rx 00000000 08:01 1 /bin/a\n",
			wantErr: "maps line 1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMaps([]byte(tc.text))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("no error, want one containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d mappings %+v, want %+v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i].Line < 1 || got[i].Line > strings.Count(tc.text, "\n")+1 {
					t.Errorf("mapping %d: line %d is outside the text", i, got[i].Line)
				}
				got[i].Line = 0 // checked above; the table lists the mappings
				if got[i] != tc.want[i] {
					t.Errorf("mapping %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// execLines counts the lines of a Linux maps text that are executable and
// name a file, with a plain field split: the reference the parser must
// agree with.
func execLines(text string) (n int) {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && len(f[1]) == 4 && f[1][2] == 'x' && strings.HasPrefix(f[5], "/") {
			n++
		}
	}
	return n
}

func TestParseMapsProcSelf(t *testing.T) {
	text, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("skipping: no /proc/self/maps: %v", err)
	}
	got, err := ParseMaps(text)
	if err != nil {
		t.Fatalf("real maps: %v", err)
	}
	if want := execLines(string(text)); len(got) != want {
		t.Errorf("%d mappings, want %d", len(got), want)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range got {
		if m.Limit <= m.Start {
			t.Errorf("empty mapping %+v", m)
		}
		if m.File == exe {
			found = true
		}
	}
	if !found {
		t.Errorf("the test binary %s is not among the mappings %+v", exe, got)
	}
}

func TestParseMapsSamples(t *testing.T) {
	// The first executable mapping of each sample, read off the files.
	first := map[string]parse.Mapping{
		"google-pprof-pr690_jemalloc.heap":        {Start: 0x55c282113000, Limit: 0x55c2831c8000, Offset: 0x181000, File: "/usr/local/bin/testbinary", Dev: "00:11"},
		"generated/je530_mixed_unbias-on.heap":    {Start: 0x562bc259b000, Limit: 0x562bc259c000, Offset: 0x1000, File: "/opt/heaplab/t", Dev: "fe:00"},
		"generated/je530_mixed_unbias-off.heap":   {},
		"generated/je530_threads_unbias-on.heap":  {Start: 0x55b612bf6000, Limit: 0x55b612bf7000, Offset: 0x1000, File: "/opt/heaplab/t2", Dev: "fe:00"},
		"generated/je530_threads_unbias-off.heap": {},
	}
	for name, want := range first {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(samplesDir(), "jemalloc", name))
			if err != nil {
				t.Skipf("skipping: sample not readable: %v", err)
			}
			_, maps, ok := bytes.Cut(data, []byte("MAPPED_LIBRARIES:\n"))
			if !ok {
				t.Fatal("no MAPPED_LIBRARIES section")
			}
			got, err := ParseMaps(maps)
			if err != nil {
				t.Fatal(err)
			}
			if n := execLines(string(maps)); len(got) != n || n == 0 {
				t.Fatalf("%d mappings, want %d", len(got), n)
			}
			if !strings.Contains(strings.Split(string(maps), "\n")[got[0].Line-1], want.File) {
				t.Errorf("first mapping's line %d does not hold %s", got[0].Line, want.File)
			}
			got[0].Line = 0
			if want.File != "" && got[0] != want {
				t.Errorf("first mapping %+v, want %+v", got[0], want)
			}
		})
	}
}

func TestParseMapsTestdata(t *testing.T) {
	tests := []struct {
		file    string
		files   []string // the mapped files, in order
		wantErr bool
	}{
		{"linux_threads.maps", []string{"/opt/heaplab/t2", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
			"/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", "/usr/lib/x86_64-linux-gnu/libm.so.6",
			"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/x86_64-linux-gnu/libc.so.6",
			"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}, false},
		{"freebsd.map", []string{"/usr/local/bin/app", "/libexec/ld-elf.so.1"}, false},
		{"macos.maps", []string{"/Users/dev/heaplab/t2", "/usr/lib/system/libsystem_malloc.dylib", "/usr/lib/libjemalloc.2.dylib"}, false},
		{"garbage.maps", []string{"/usr/local/bin/testbinary"}, true},
	}
	for _, tc := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", "maps", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseMaps(data)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.file, err, tc.wantErr)
		}
		var files []string
		for _, m := range got {
			files = append(files, m.File)
		}
		if strings.Join(files, ",") != strings.Join(tc.files, ",") {
			t.Errorf("%s: mapped files %q, want %q", tc.file, files, tc.files)
		}
	}
}

func FuzzParseMaps(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "maps", "*"))
	for _, name := range seeds {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("-\n0x 0x 0 0 0 0\n\r\n- r-xp\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		maps, err := ParseMaps(text)
		for _, m := range maps {
			if m.Limit <= m.Start || m.File == "" {
				t.Fatalf("bad mapping %+v", m)
			}
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
		// Whatever the mappings (overlapping, inverted order, huge), using
		// them must not panic. Their files are renamed to paths that do
		// not exist, keeping the base name (libjemalloc…): the fuzz input
		// must not make the test read this machine's files.
		for i := range maps {
			maps[i].File = "/nonexistent/" + filepath.Base(maps[i].File)
		}
		var stack []parse.Frame
		for _, m := range maps {
			stack = append(stack, parse.Frame{Addr: m.Start}, parse.Frame{Addr: m.Limit - 1})
		}
		p := &testProfile{Records: []parse.Record{{Stack: stack}}, Mappings: maps}
		if _, err := Symbolize(p, Options{DropAllocator: true}); err != nil {
			t.Fatalf("Symbolize: %v", err)
		}
	})
}

// mappingFor remembers the mapping it found last; what it returns must be
// what the search of the sorted mappings gives, overlapping ones included
// (the last one starting at or before the address), in any order of asks.
func TestMappingForLast(t *testing.T) {
	s := newSession(&parse.Profile{}, Options{})
	for _, m := range []parse.Mapping{
		{Start: 0x1000, Limit: 0x9000, File: "/a"}, // holds b
		{Start: 0x2000, Limit: 0x3000, File: "/b"},
		{Start: 0xa000, Limit: 0xb000, File: "/c"},
	} {
		s.maps = append(s.maps, mapState{Mapping: m})
	}
	want := map[uint64]string{0x0fff: "", 0x1000: "/a", 0x1fff: "/a", 0x2000: "/b", 0x2fff: "/b",
		0x3000: "", 0x8fff: "", 0x9000: "", 0xa000: "/c", 0xafff: "/c", 0xb000: ""}
	// 0x3000 lies in /a but after /b's start: the search finds /b, which
	// ends before it, so no mapping (as before the last one was kept).
	for _, order := range [][]uint64{
		{0x1000, 0x2000, 0x1fff, 0x2fff, 0x3000, 0x8fff, 0x1000, 0xa000, 0xafff, 0xb000, 0x0fff},
		{0x1fff, 0x2000, 0x1000, 0x3000, 0x2fff, 0x9000, 0xafff, 0x1000, 0xa000},
	} {
		s.last = 0
		for _, addr := range order {
			got := ""
			if m := s.mappingFor(addr); m != nil {
				got = m.File
			}
			if got != want[addr] {
				t.Errorf("mappingFor(%#x) = %q, want %q (order %x)", addr, got, want[addr], order)
			}
		}
	}
}
