package lowerhex

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// Encode against encoding/hex on every length up to 40 and random bytes,
// and on every byte value at every position of a word.
func TestEncodeMatchesEncodingHex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	check := func(src []byte) {
		t.Helper()
		got := make([]byte, 2*len(src))
		if n := Encode(got, src); n != len(got) {
			t.Fatalf("Encode(%x) = %d, want %d", src, n, len(got))
		}
		if want := hex.EncodeToString(src); string(got) != want {
			t.Fatalf("Encode(%x) wrote %s, want %s", src, got, want)
		}
	}
	for n := range 41 {
		for range 200 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rng.IntN(256))
			}
			check(src)
		}
	}
	for pos := range 4 {
		for c := range 256 {
			src := []byte{0x5a, 0xa5, 0x0f, 0xf0}
			src[pos] = byte(c)
			check(src)
		}
	}
}

func BenchmarkEncode16(b *testing.B) {
	src := []byte("0123456789abcdef")
	dst := make([]byte, 32)
	for b.Loop() {
		Encode(dst, src)
	}
}
