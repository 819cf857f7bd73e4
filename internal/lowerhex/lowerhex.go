// Package lowerhex writes bytes as lowercase hex, four bytes at a time:
// event ids, span ids and trace ids are written for every event, and
// encoding/hex's byte-by-byte table walk was a visible share of it.
package lowerhex

import "encoding/binary"

// Encode writes the lowercase hex of src into dst, which must hold
// 2*len(src) bytes, and returns that count, as encoding/hex.Encode does.
func Encode(dst, src []byte) int {
	n := 2 * len(src)
	_ = dst[:n]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		binary.BigEndian.PutUint64(dst[2*i:], Digits(binary.BigEndian.Uint32(src[i:])))
	}
	for ; i < len(src); i++ {
		dst[2*i], dst[2*i+1] = hexDigits[src[i]>>4], hexDigits[src[i]&0xF]
	}
	return n
}

const hexDigits = "0123456789abcdef"

// Digits is the eight lowercase hex digits of v as one big-endian word:
// its nibbles, most significant first, spread into the word's bytes, most
// significant first, each turned into its digit.
func Digits(v uint32) uint64 {
	x := uint64(v)
	x = (x&0xFFFF0000)<<16 | x&0xFFFF
	x = (x&0x0000FF000000FF00)<<8 | x&0x000000FF000000FF
	x = (x&0x00F000F000F000F0)<<4 | x&0x000F000F000F000F
	// A nibble above 9 is a letter: 'a' is 39 past '0'+10.
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*39
}
