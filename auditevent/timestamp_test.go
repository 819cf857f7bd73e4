package auditevent

import (
	"math/rand/v2"
	"testing"
	"time"
)

// appendText against the standard library's formatting of the same wall
// clock, over the whole range of Python's datetime and a spread of offsets.
func TestTimestampTextMatchesTimeFormat(t *testing.T) {
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC).UnixMicro()
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 200_000 {
		micros := lo + rng.Int64N(hi-lo)
		if i%4 == 0 {
			micros -= micros % 1_000_000 // whole seconds: no fraction written
		}
		offset := 0
		kind := tsUTC
		if i%3 == 0 {
			offset, kind = rng.IntN(2*18*60+1)-18*60, tsOffset
		}
		ts := Timestamp{micros: micros, offsetMin: int16(offset), kind: kind}
		wall := time.UnixMicro(micros).In(time.FixedZone("", offset*60))
		if y := wall.Year(); y < 1 || y > 9999 {
			continue
		}
		layout := "2006-01-02T15:04:05.999999Z07:00"
		if kind == tsOffset {
			layout = "2006-01-02T15:04:05.999999-07:00"
		}
		want := wall.Format(layout)
		// Go trims trailing zeros of the fraction; Python writes all six.
		if frac := micros % 1_000_000; frac < 0 || frac > 0 {
			want = wall.Format(layout[:20] + "000000" + layout[26:])
		}
		if got := ts.String(); got != want {
			t.Fatalf("Timestamp{%d µs, %+d min}.String() = %s, want %s", micros, offset, got, want)
		}
	}
}

func TestCivilDateAroundEpochAndLeapDays(t *testing.T) {
	for days := int64(-800_000); days <= 800_000; days++ {
		y, m, d := civilDate(days)
		want := time.Unix(days*86_400, 0).UTC()
		if int(y) != want.Year() || time.Month(m) != want.Month() || d != want.Day() {
			t.Fatalf("civilDate(%d) = %d-%d-%d, want %s", days, y, m, d, want.Format(time.DateOnly))
		}
	}
}

// The intake's verdict on timestamp spellings matches pydantic 2.13's
// (checked with the reference's model, datetime field): what it accepts,
// and the instant it reads.
func TestParseTimestampAcceptsWhatPydanticAccepts(t *testing.T) {
	accepted := map[string]string{
		"2026-03-14T15:09:26,5Z":            "2026-03-14T15:09:26.500000Z",
		"2026-03-14T15:09:26.1234567Z":      "2026-03-14T15:09:26.123456Z",
		"2026-03-14T15:09+05:30":            "2026-03-14T15:09:00+05:30",
		"2026-03-14T15:09:26+23:59":         "2026-03-14T15:09:26+23:59",
		"2026-03-14T15:09:26z":              "2026-03-14T15:09:26Z",
		"2026-03-14T15:09:26.5+0530":        "2026-03-14T15:09:26.500000+05:30",
		"2026-03-14T15:09:26.000000000001Z": "2026-03-14T15:09:26Z",
		"2026-03-14 15:09:26-00:00":         "2026-03-14T15:09:26Z",
	}
	for in, want := range accepted {
		ts, err := ParseTimestamp(in)
		if err != nil || ts.String() != want {
			t.Errorf("ParseTimestamp(%q) = %s, %v; want %s", in, ts, err, want)
		}
	}
	for _, in := range []string{
		"2026-03-14T15:09:26+05", "2026-03-14T15:09:26-00", "2026-03-14T15:09:26+00",
		"2026-03-14T15:09:26.Z", "2026-03-14T15:09:26+24:00", "2026-03-14T15:09:60Z",
		"2026-03-14T15:09:26+05:3", "2026-03-14T15:09:26 +05:00", "2026-03-14T15:09:26+05:30:00",
		"2026-03-14T15:9:26Z", "2026-03-14T15:09:26UTC", "2026-03-14T15:09:26+5:30",
	} {
		if ts, err := ParseTimestamp(in); err == nil {
			t.Errorf("ParseTimestamp(%q) = %s, want a refusal (pydantic refuses it)", in, ts)
		}
	}
}
