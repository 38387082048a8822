package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// ehFrame builds an .eh_frame section loaded at base: one CIE with
// augmentation aug (its data augData), and an FDE per range, their
// addresses encoded as enc says (pcrel sdata4 or absolute udata8).
func ehFrame(base uint64, aug string, augData []byte, pcrel bool, ranges [][2]uint64) []byte {
	le := binary.LittleEndian
	var b []byte
	entry := func(body []byte) {
		for (len(body)+4)%8 != 0 {
			body = append(body, 0) // DW_CFA_nop padding
		}
		b = le.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
	}
	cie := le.AppendUint32(nil, 0)
	cie = append(cie, 1)
	cie = append(cie, aug...)
	cie = append(cie, 0, 1, 0x78, 16) // code align 1, data align -8, return address register 16
	cie = append(cie, byte(len(augData)))
	cie = append(cie, augData...)
	entry(cie)
	for _, r := range ranges {
		at := len(b) + 4 // where the FDE's body starts
		fde := le.AppendUint32(nil, uint32(at))
		if pcrel {
			field := base + uint64(at) + 4
			fde = le.AppendUint32(fde, uint32(int32(int64(r[0])-int64(field))))
			fde = le.AppendUint32(fde, uint32(r[1]-r[0]))
		} else {
			fde = le.AppendUint64(fde, r[0])
			fde = le.AppendUint64(fde, r[1]-r[0])
		}
		fde = append(fde, 0) // no augmentation data
		entry(fde)
	}
	return le.AppendUint32(b, 0) // the terminator
}

func TestEHFrameEncodings(t *testing.T) {
	const base = 0x20000
	ranges := [][2]uint64{{0x1200, 0x1280}, {0x1100, 0x1150}, {0x1300, 0x1310}}
	for _, c := range []struct {
		name    string
		aug     string
		augData []byte
		pcrel   bool
	}{
		{"zR pcrel sdata4", "zR", []byte{ehPCRel | ehSData4}, true},
		{"zPLR", "zPLR", []byte{ehUData4, 1, 2, 3, 4, ehUData4, ehPCRel | ehSData4}, true},
		{"zR udata8", "zR", []byte{ehUData8}, false},
		{"no augmentation", "", nil, false},
	} {
		e := ehReader{data: ehFrame(base, c.aug, c.augData, c.pcrel, ranges), base: base, order: binary.LittleEndian, ptr: 8}
		r, err := e.ranges()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := (funcRanges{{0x1100, 0x1150}, {0x1200, 0x1280}, {0x1300, 0x1310}}); !slices.Equal(r, want) {
			t.Errorf("%s: ranges %x, want %x", c.name, r, want)
		}
		for _, q := range []struct {
			vaddr, start uint64
			ok           bool
		}{{0x10ff, 0, false}, {0x1100, 0x1100, true}, {0x114f, 0x1100, true}, {0x1150, 0, false}, {0x127f, 0x1200, true}, {0x1310, 0, false}} {
			if start, ok := r.find(q.vaddr); start != q.start || ok != q.ok {
				t.Errorf("%s: find(%#x) = %#x, %v; want %#x, %v", c.name, q.vaddr, start, ok, q.start, q.ok)
			}
		}
	}
	// An augmentation of unknown size stops the reading: no ranges rather
	// than wrong ones.
	e := ehReader{data: ehFrame(base, "zX", []byte{1}, true, ranges), base: base, order: binary.LittleEndian, ptr: 8}
	if _, err := e.ranges(); err == nil {
		t.Error("augmentation zX read")
	}
}

// FuzzEHFrame feeds damaged unwind tables to the reader: ranges or an
// error, never a crash, and the ranges it returns are sorted and whole.
func FuzzEHFrame(f *testing.F) {
	f.Add(ehFrame(0x20000, "zR", []byte{ehPCRel | ehSData4}, true, [][2]uint64{{0x1200, 0x1280}, {0x1100, 0x1150}}))
	f.Add(ehFrame(0x20000, "zPLR", []byte{ehUData4, 1, 2, 3, 4, ehUData4, ehPCRel | ehSData4}, true, [][2]uint64{{0x1100, 0x1150}}))
	if _, err := exec.LookPath("gcc"); err == nil || os.Getenv("CI") == "true" {
		bin := build(f, "gcc", f.TempDir(), "prog", cProgram, "-O2")
		if ef, err := elf.Open(bin); err == nil {
			if s := ef.Section(".eh_frame"); s != nil {
				if data, err := s.Data(); err == nil {
					f.Add(data)
				}
			}
			ef.Close()
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := ehReader{data: data, base: 0x20000, order: binary.LittleEndian, ptr: 8}
		r, err := e.ranges()
		if err != nil {
			return
		}
		for i, c := range r {
			if c.end <= c.start || i > 0 && c.start < r[i-1].start {
				t.Fatalf("range %d: %#x-%#x after %#x", i, c.start, c.end, r[max(i-1, 0)].start)
			}
			r.find(c.start)
		}
	})
}
