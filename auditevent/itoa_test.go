package auditevent

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendIntMatchesStrconv(t *testing.T) {
	values := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 99999999, 100000000,
		-1, -9, -10, -100, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		values = append(values, p-1, p, p+1, -p)
	}
	for _, v := range values {
		got := string(appendInt([]byte("x"), v))
		if want := "x" + strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}

func FuzzAppendInt(f *testing.F) {
	f.Add(int64(7))
	f.Add(int64(-123456789))
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
	})
}
