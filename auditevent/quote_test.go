package auditevent

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// safeRun and plainEnd against a byte-at-a-time scan, on strings of plain text with a
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
		from := rng.IntN(len(b) + 1)
		want = from
		for want < len(b) && safeASCII[b[want]] {
			want++
		}
		if got := plainEnd(b, from); got != want {
			t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, from, got, want)
		}
	}
}

// Every byte value at every position of a word, after plain text and
// before any other byte: plainEnd stops exactly at the first unsafe one.
func TestPlainEndEveryByte(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			for _, after := range []byte{'a', 0x00, 0xFF, '"'} {
				b := []byte("abcdefghijklmnop")
				b[pos] = byte(c)
				for i := pos + 1; i < len(b); i++ {
					b[i] = after
				}
				want := pos
				if safeASCII[c] {
					want++
					for want < len(b) && safeASCII[b[want]] {
						want++
					}
				}
				if got := plainEnd(b, 0); got != want {
					t.Fatalf("plainEnd(%q) = %d, want %d", b, got, want)
				}
				if got := safeRun(string(b)); got != want {
					t.Fatalf("safeRun(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// plainEndByByte is plainEnd's definition, one byte at a time.
func plainEndByByte(b []byte, i int) int {
	for i < len(b) && safeASCII[b[i]] {
		i++
	}
	return i
}

// FuzzPlainEnd: the word-at-a-time scans (plainEnd, plainTo) stop where
// the byte-at-a-time one does, from every start.
func FuzzPlainEnd(f *testing.F) {
	f.Add([]byte(`"abcdefgh\"ijklmnop\\qrstuvwx\x7fyz0123456789\x1f~ \xff\x80"`))
	f.Add([]byte(`plain text that runs past one word, then a quote" and more`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range len(b) + 1 {
			want := plainEndByByte(b, i)
			if got := plainEnd(b, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, byte by byte %d", b, i, got, want)
			}
			if got := plainTo(b, i); got != want {
				t.Fatalf("plainTo(%q, %d) = %d, byte by byte %d", b, i, got, want)
			}
		}
	})
}

func TestPlainEndFromEveryStart(t *testing.T) {
	for c := range 256 {
		for at := range 16 {
			b := []byte("abcdefghijklmnopqrstuvwxyz")
			b[at] = byte(c)
			for i := range len(b) + 1 {
				if got, want := plainEnd(b, i), plainEndByByte(b, i); got != want {
					t.Fatalf("byte 0x%02x at %d, from %d: plainEnd %d, byte by byte %d", c, at, i, got, want)
				}
			}
		}
	}
}
