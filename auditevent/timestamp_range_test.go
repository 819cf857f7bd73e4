package auditevent

import (
	"math"
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

// A Go caller's time outside the years a line can spell keeps the year's
// last four digits, before year 0 as after 9999, so the line stays
// parseable rather than growing a fifth digit or a sign.
func TestTimestampOutsideFourDigitYearsKeepsLastFour(t *testing.T) {
	for _, c := range []struct {
		year int
		want string
	}{
		{10_000, "0000-06-01T12:00:00Z"},
		{12_345, "2345-06-01T12:00:00Z"},
		{0, "0000-06-01T12:00:00Z"},
		{-1, "9999-06-01T12:00:00Z"},
		{9_999, "9999-06-01T12:00:00Z"},
	} {
		ts := TimestampFromTime(time.Date(c.year, 6, 1, 12, 0, 0, 0, time.UTC))
		assert.Equal(t, c.want, ts.String(), "year %d", c.year)
	}
}

// TimestampFromUnixNano is TimestampFromTime of the same instant, before
// the epoch as after it, on and off whole microseconds.
func TestTimestampFromUnixNanoIsFromTime(t *testing.T) {
	for _, ns := range []int64{0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 1_700_000_000_123_456_789,
		-1_700_000_000_123_456_789, math.MaxInt64, math.MinInt64} {
		want := TimestampFromTime(time.Unix(0, ns))
		assert.Equal(t, want, TimestampFromUnixNano(ns), "%d ns", ns)
	}
}
