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

// civilDays against time.Date on every day of Python's years 1 to 9999,
// and back through civilDate.
func TestCivilDaysEveryDay(t *testing.T) {
	for day := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() <= 9999; day = day.AddDate(0, 0, 1) {
		got := civilDays(day.Year(), int(day.Month()), day.Day())
		if want := day.Unix() / 86_400; got != want {
			t.Fatalf("civilDays(%s) = %d, want %d", day.Format(time.DateOnly), got, want)
		}
		if y, m, d := civilDate(got); int(y) != day.Year() || m != int(day.Month()) || d != day.Day() {
			t.Fatalf("civilDate(civilDays(%s)) = %d-%d-%d", day.Format(time.DateOnly), y, m, d)
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

// parseUTCSpelling against parseTimestamp and utcSpelling, which ScanLine
// otherwise uses: on UTC spellings over Python's range, and on each of them
// with one byte changed to every value.
func TestParseUTCSpellingMatchesParseTimestamp(t *testing.T) {
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC).UnixMicro()
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(s []byte) {
		got, ok := parseUTCSpelling(s)
		ts, want := parseTimestamp(s)
		want = want && utcSpelling(s)
		if ok != want || ok && got != ts.micros {
			t.Fatalf("parseUTCSpelling(%q) = %d, %v; parseTimestamp and utcSpelling: %d, %v", s, got, ok, ts.micros, want)
		}
	}
	for i := range 3_000 {
		micros := lo + rng.Int64N(hi-lo)
		if i%3 == 0 {
			micros -= micros % 1_000_000
		}
		s := Timestamp{micros: micros, kind: tsUTC}.appendText(nil)
		check(s)
		for at := range s {
			for v := range 256 {
				m := append([]byte(nil), s...)
				m[at] = byte(v)
				check(m)
			}
		}
	}
	for _, s := range []string{"2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "2026-03-14T15:00:00.000000Z"} {
		check([]byte(s))
	}
}

// utcSpelling reports whether a timestamp parseTimestamp accepted has the
// shape appendText gives a UTC time, YYYY-MM-DDTHH:MM:SS[.ffffff]Z with a
// fraction that is not zero, in which case appendText spells it so. The
// digits need no look: parseTimestamp took them all before the Z.
func utcSpelling(s []byte) bool {
	switch {
	case len(s) == 20:
		return s[10] == 'T' && s[16] == ':' && s[19] == 'Z'
	case len(s) == 27:
		return s[10] == 'T' && s[16] == ':' && s[19] == '.' && s[26] == 'Z' && string(s[20:26]) != "000000"
	}
	return false
}
