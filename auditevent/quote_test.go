package auditevent

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// safeRun against a byte-at-a-time scan, on strings of plain text with a
// byte from the edges of the safe range dropped in at random.
func TestSafeRunMatchesByteScan(t *testing.T) {
	edges := []byte{0x00, 0x1F, 0x20, 0x21, '"', '\\', 0x7E, 0x7F, 0x80, 0xC3, 0xFF}
	rng := rand.New(rand.NewPCG(17, 19))
	for range 100_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5F))
			if rng.IntN(16) == 0 {
				b[i] = edges[rng.IntN(len(edges))]
			}
		}
		want := 0
		for want < len(b) && b[want] < utf8.RuneSelf && safeASCII[b[want]] {
			want++
		}
		if got := safeRun(b); got != want {
			t.Fatalf("safeRun(%q) = %d, want %d", b, got, want)
		}
		if got := safeRun(string(b)); got != want {
			t.Fatalf("safeRun(string %q) = %d, want %d", b, got, want)
		}
	}
}

// FuzzPlainRun: the word-at-a-time scan stops where the byte-at-a-time one
// does, from every start.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`"abcdefgh\"ijklmnop\\qrstuvwx\x7fyz0123456789\x1f~ \xff\x80"`))
	f.Add([]byte(`plain text that runs past one word, then a quote" and more`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range len(b) + 1 {
			if got, want := plainRun(b, i), plainEnd(b, i); got != want {
				t.Fatalf("plainRun(%q, %d) = %d, plainEnd %d", b, i, got, want)
			}
		}
	})
}

func TestPlainRunEveryByte(t *testing.T) {
	for c := range 256 {
		for at := range 16 {
			b := []byte("abcdefghijklmnopqrstuvwxyz")
			b[at] = byte(c)
			for i := range len(b) + 1 {
				if got, want := plainRun(b, i), plainEnd(b, i); got != want {
					t.Fatalf("byte 0x%02x at %d, from %d: plainRun %d, plainEnd %d", c, at, i, got, want)
				}
			}
		}
	}
}
