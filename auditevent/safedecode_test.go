package auditevent_test

import (
	"math"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A limit near the int range is legal config (max_stdout_chars only has
// to be >= 0) and means "no cut"; it once overflowed a size computation
// and panicked the collector.
func TestSafeDecodeHugeLimit(t *testing.T) {
	b := []byte("out\xffput é")
	for _, limit := range []int{math.MaxInt, 1 << 61, 1<<62 + 1, math.MaxInt / 4} {
		if got, want := auditevent.SafeDecode(b, limit), "out\uFFFDput é"; got != want {
			t.Errorf("SafeDecode(%q, %d) = %q, want %q", b, limit, got, want)
		}
	}
	if got, want := auditevent.SafeDecode(b, 3), "out…"; got != want {
		t.Errorf("SafeDecode(%q, 3) = %q, want %q", b, got, want)
	}
}
