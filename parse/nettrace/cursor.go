package nettrace

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
)

// ---- cursor over one block in memory ----

// cursor reads little-endian values from bytes held in memory. A read past
// the end sets bad and returns zeros, so decoding code checks bad once per
// unit and never acts on a value read after the failure.
type cursor struct {
	b    []byte
	pos  int
	base int64 // file offset of b[0]
	bad  bool
	why  string
	at   int
}

func (c *cursor) fail(why string) {
	if !c.bad {
		c.bad, c.why, c.at = true, why, c.pos
	}
}

func (c *cursor) need(n int) bool {
	if c.bad {
		return false
	}
	if n < 0 || len(c.b)-c.pos < n {
		c.fail(fmt.Sprintf("needs %d bytes, %d remain", n, len(c.b)-c.pos))
		return false
	}
	return true
}

func (c *cursor) left() int   { return len(c.b) - c.pos }
func (c *cursor) off() int64  { return c.base + int64(c.pos) }
func (c *cursor) skip(n int)  { c.bytes(n) }
func (c *cursor) u8() byte    { return c.fixed(1)[0] }
func (c *cursor) u16() uint16 { return binary.LittleEndian.Uint16(c.fixed(2)) }
func (c *cursor) u32() uint32 { return binary.LittleEndian.Uint32(c.fixed(4)) }
func (c *cursor) u64() uint64 { return binary.LittleEndian.Uint64(c.fixed(8)) }

var zeros [16]byte

// fixed returns n ≤ 16 bytes, or zeros after a failure.
func (c *cursor) fixed(n int) []byte {
	if !c.need(n) {
		return zeros[:n]
	}
	c.pos += n
	return c.b[c.pos-n : c.pos]
}

func (c *cursor) bytes(n int) []byte {
	if !c.need(n) {
		return nil
	}
	c.pos += n
	return c.b[c.pos-n : c.pos]
}

// sub returns a cursor over the next n bytes and moves past them.
func (c *cursor) sub(n int) *cursor {
	base := c.off()
	b := c.bytes(n)
	s := &cursor{b: b, base: base}
	if c.bad {
		s.bad, s.why = true, c.why
	}
	return s
}

func (c *cursor) uvarint() uint64 {
	if c.bad {
		return 0
	}
	if c.pos < len(c.b) && c.b[c.pos] < 0x80 {
		c.pos++
		return uint64(c.b[c.pos-1])
	}
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 {
		if n == 0 {
			c.fail("variable-length integer runs past the end")
		} else {
			c.fail("variable-length integer overflows 64 bits")
		}
		return 0
	}
	c.pos += n
	return v
}

func (c *cursor) uvarint32() uint32 {
	v := c.uvarint()
	if v > 1<<32-1 {
		c.pos-- // point into the integer
		c.fail(fmt.Sprintf("variable-length integer %d does not fit 32 bits", v))
		return 0
	}
	return uint32(v)
}

// str8 reads a varuint-length-prefixed UTF-8 string (V6).
func (c *cursor) str8() string {
	n := c.uvarint()
	if n > uint64(c.left()) {
		c.fail(fmt.Sprintf("string of %d bytes, %d remain", n, c.left()))
		return ""
	}
	return string(c.bytes(int(n)))
}

// str16 reads a NUL-terminated UTF-16LE string (V4/V5 metadata, payloads).
func (c *cursor) str16() string {
	raw, ok := utf16z(c.b[min(c.pos, len(c.b)):])
	if !ok || c.bad {
		c.fail("UTF-16 string without its NUL terminator")
		return ""
	}
	c.pos += len(raw) + 2
	return decodeUTF16(raw)
}

// err turns a failed cursor into a located error.
func (c *cursor) err(d *decoder, what string) error {
	return d.errAt(c.base+int64(c.at), nil, "malformed %s: %s", what, c.why)
}

// utf16z returns the code units of a NUL-terminated UTF-16LE string at the
// start of b (without the terminator).
func utf16z(b []byte) ([]byte, bool) {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return b[:i], true
		}
	}
	return nil, false
}

func decodeUTF16(raw []byte) string {
	ascii := true
	for i := 1; i < len(raw); i += 2 {
		if raw[i] != 0 || raw[i-1] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		s := make([]byte, len(raw)/2)
		for i := range s {
			s[i] = raw[2*i]
		}
		return string(s)
	}
	u := make([]uint16, len(raw)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return string(utf16.Decode(u))
}
