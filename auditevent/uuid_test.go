package auditevent

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// parseUUID against google/uuid on hyphenated spellings in mixed case, each
// byte position corrupted with a random byte in turn.
func TestParseUUIDMatchesGoogleUUID(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	for range 2_000 {
		u := randomUUID(rng)
		text := []byte(u.String())
		if rng.IntN(2) == 0 {
			text = []byte(strings.ToUpper(string(text)))
		}
		got, ok := parseUUID(text)
		if !ok || got != u {
			t.Fatalf("parseUUID(%s) = %v, %v; want %v", text, got, ok, u)
		}
		for pos := range text {
			bad := append([]byte(nil), text...)
			bad[pos] = byte(rng.UintN(256))
			want, err := uuid.ParseBytes(bad)
			got, ok := parseUUID(bad)
			if ok != (err == nil) || (ok && got != want) {
				t.Fatalf("parseUUID(%q) = %v, %v; google/uuid: %v, %v", bad, got, ok, want, err)
			}
		}
	}
}

// BenchmarkParseUUID: every span carries its event ids and session id as
// hyphenated text.
func BenchmarkParseUUID(b *testing.B) {
	for b.Loop() {
		if _, err := ParseUUID("0b9d8c7e-6f5a-4b3c-8d2e-00000000002a"); err != nil {
			b.Fatal(err)
		}
	}
}

// appendUUID against google/uuid's String, quoted, after a prefix it must
// leave alone.
func TestAppendUUIDMatchesGoogleUUID(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for range 2_000 {
		u := randomUUID(rng)
		got := string(appendUUID([]byte("x:"), u))
		if want := `x:"` + u.String() + `"`; got != want {
			t.Fatalf("appendUUID = %s; want %s", got, want)
		}
	}
}

// randomUUID is sixteen random bytes, version and variant bits included.
func randomUUID(rng *rand.Rand) uuid.UUID {
	var u uuid.UUID
	for i := range u {
		u[i] = byte(rng.UintN(256))
	}
	return u
}
