package auditevent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A time anywhere in the years a line may hold (1 to 9999) converts
// exactly, beyond the ±292 years int64 nanoseconds span: serve labels its
// timelines with it, whatever the trail's ts.
func TestTimestampFromTimeOverTheWholeRange(t *testing.T) {
	for _, s := range []string{"0001-01-01T00:00:00Z", "1677-09-21T00:12:43.145224Z", "2262-04-11T23:47:16.854776Z",
		"9999-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z", "2026-03-14T15:09:26.535897Z"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		assert.NoError(t, err)
		got := TimestampFromTime(want)
		assert.Equal(t, s, got.String())
		assert.True(t, want.Equal(got.Time()), s)
	}
}
