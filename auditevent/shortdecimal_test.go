package auditevent

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// shortDecimal against strconv.ParseFloat on decimals of up to 15 digits
// with the point anywhere, and refusals past 15 digits or without a point.
func TestShortDecimalMatchesParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for range 200_000 {
		n := 1 + rng.IntN(16)
		digits := make([]byte, n)
		for k := range digits {
			digits[k] = byte('0' + rng.IntN(10))
		}
		point := 1 + rng.IntN(n) // digits before the point; may be all of them
		s := string(digits[:point]) + "." + string(digits[point:])
		if rng.IntN(4) == 0 {
			s = "-" + s
		}
		got, ok := shortDecimal([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		switch {
		case point == n || n > 15:
			if ok {
				t.Fatalf("shortDecimal(%q) = %v, want a refusal", s, got)
			}
		case !ok || err != nil || math.Float64bits(got) != math.Float64bits(want):
			t.Fatalf("shortDecimal(%q) = %v, %v; ParseFloat: %v, %v", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"", "-", "12", "1e5", "1.5e3", ".5", "5."} {
		if v, ok := shortDecimal([]byte(s)); ok {
			t.Errorf("shortDecimal(%q) = %v, want a refusal", s, v)
		}
	}
}
