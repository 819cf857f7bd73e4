package auditevent

import (
	"slices"
	"time"
)

// Timestamp is an event time as the reference keeps it: an instant with
// microsecond precision plus the UTC offset it was written with, so that
// "+05:30" round-trips. UTC is spelled "Z". A timestamp without an offset
// (a naive datetime, which pydantic accepts) stays naive on output.
type Timestamp struct {
	micros    int64 // microseconds since the Unix epoch, as UTC (naive: as if UTC)
	offsetMin int16 // offset east of UTC in minutes
	kind      tsKind
}

type tsKind uint8

const (
	tsUnset tsKind = iota
	tsUTC
	tsOffset
	tsNaive
)

// TimestampFromUnixNano is TimestampFromTime of the instant ns nanoseconds
// after the Unix epoch, without building a time.Time: every span's two
// times come as such counts.
func TimestampFromUnixNano(ns int64) Timestamp {
	return Timestamp{micros: floorDiv(ns, 1000), kind: tsUTC}
}

// TimestampFromTime converts t to a UTC timestamp truncated (not rounded) to
// microseconds, which is how span times map to event times.
func TimestampFromTime(t time.Time) Timestamp {
	// Seconds and microseconds apart: UnixNano overflows outside the
	// years 1678 to 2262, and a line's ts runs from year 1 to 9999.
	return Timestamp{micros: t.Unix()*1_000_000 + int64(t.Nanosecond()/1000), kind: tsUTC}
}

// Time returns the instant. A naive timestamp is read as UTC.
func (t Timestamp) Time() time.Time {
	tt := time.UnixMicro(t.micros).UTC()
	if t.kind == tsOffset {
		return tt.In(time.FixedZone("", int(t.offsetMin)*60))
	}
	return tt
}

// IsZero reports whether t was never set.
func (t Timestamp) IsZero() bool { return t.kind == tsUnset }

// UnixMicro returns the instant in microseconds since the epoch.
func (t Timestamp) UnixMicro() int64 { return t.micros }

// String returns the canonical spelling.
func (t Timestamp) String() string { return string(t.appendText(nil)) }

// appendText writes YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM) with the wall
// clock of the kept offset; the fraction is omitted when zero, as Python's
// isoformat does.
func (t Timestamp) appendText(dst []byte) []byte {
	wall := t.micros + int64(t.offsetMin)*60_000_000
	sec := floorDiv(wall, 1_000_000)
	frac := int(wall - sec*1_000_000)
	days := floorDiv(sec, 86_400)
	sod := int(sec - days*86_400)
	y, mo, d := civilDate(days)
	// Python's years are 1 to 9999; a Go caller's time outside them keeps
	// its last four digits rather than breaking the line.
	if y < 0 || y >= 10_000 {
		y = (y%10_000 + 10_000) % 10_000
	}
	// Every event writes one: fixed offsets in room grown once, rather
	// than an append (and its capacity check) per field.
	n := len(dst)
	dst = slices.Grow(dst, maxTimestampLen)
	b := (*[maxTimestampLen]byte)(dst[n : n+maxTimestampLen])
	put2(b, 0, int(y/100))
	put2(b, 2, int(y%100))
	b[4], b[7], b[10], b[13], b[16] = '-', '-', 'T', ':', ':'
	put2(b, 5, mo)
	put2(b, 8, d)
	put2(b, 11, sod/3600)
	put2(b, 14, sod/60%60)
	put2(b, 17, sod%60)
	k := 19
	if frac != 0 {
		b[19] = '.'
		put2(b, 20, frac/10_000)
		put2(b, 22, frac/100%100)
		put2(b, 24, frac%100)
		k = 26
	}
	switch t.kind {
	case tsUTC, tsUnset:
		b[k] = 'Z'
		k++
	case tsOffset:
		off := int(t.offsetMin)
		b[k] = '+'
		if off < 0 {
			b[k] = '-'
			off = -off
		}
		b[k+3] = ':'
		put2(b, k+1, off/60)
		put2(b, k+4, off%60)
		k += 6
	}
	return dst[:n+k]
}

// maxTimestampLen is the longest spelling appendText writes:
// YYYY-MM-DDTHH:MM:SS.ffffff+HH:MM.
const maxTimestampLen = 32

// put2 writes v, 0..99, as two digits at b[at:at+2].
func put2(b *[maxTimestampLen]byte, at, v int) {
	b[at], b[at+1] = twoDigits[2*v], twoDigits[2*v+1]
}

// civilDate is the proleptic Gregorian date of a day count since
// 1970-01-01 (Howard Hinnant's days-to-civil): every event is written with
// one, and time.Time's Date and Clock cost more than this arithmetic.
func civilDate(days int64) (year int64, month, day int) {
	z := days + 719_468 // days since 0000-03-01
	era := floorDiv(z, 146_097)
	doe := z - era*146_097                                    // day of the 400-year era
	yoe := (doe - doe/1_460 + doe/36_524 - doe/146_096) / 365 // year of the era
	doy := doe - (365*yoe + yoe/4 - yoe/100)                  // day of the March-based year
	mp := (5*doy + 2) / 153                                   // month, March = 0
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// civilDays is the day count since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's days-from-civil), the inverse of civilDate: every
// line read has a timestamp, and time.Date costs several times this.
func civilDays(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400                     // year of the era
	mp := int64(month+9) % 12              // month, March = 0
	doy := (153*mp+2)/5 + int64(day) - 1   // day of the March-based year
	doe := yoe*365 + yoe/4 - yoe/100 + doy // day of the era
	return era*146_097 + doe - 719_468
}

const twoDigits = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ParseTimestamp parses an RFC 3339-style datetime the way the intake does:
// YYYY-MM-DD, a 'T' (or 't' or ' '), HH:MM[:SS[.fraction]], then Z, ±HH:MM,
// ±HHMM or nothing (naive); a bare ±HH is refused, as pydantic refuses it. Fractions finer than microseconds are truncated.
// Date-only strings and Unix numbers are refused on purpose.
func ParseTimestamp(s string) (Timestamp, error) { return parseTimestampBytes([]byte(s)) }

func parseTimestampBytes(s []byte) (Timestamp, error) {
	t, ok := parseTimestamp(s)
	if !ok {
		if len(s) == 10 && isDate(s) {
			return Timestamp{}, fieldErr("", "datetime_parsing", "a date without a time is not a timestamp")
		}
		return Timestamp{}, fieldErr("", "datetime_from_date_parsing", "not an ISO 8601 datetime (YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM))")
	}
	return t, nil
}

func isDate(s []byte) bool {
	_, ok1 := digits(s[0:4])
	_, ok2 := digits(s[5:7])
	_, ok3 := digits(s[8:10])
	return ok1 && ok2 && ok3 && s[4] == '-' && s[7] == '-'
}

func digits(s []byte) (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func parseTimestamp(s []byte) (Timestamp, bool) {
	if len(s) < 16 || s[4] != '-' || s[7] != '-' || s[13] != ':' {
		return Timestamp{}, false
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return Timestamp{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || year < 1 || month < 1 || month > 12 ||
		day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 {
		return Timestamp{}, false
	}
	rest := s[16:]
	second, micros := 0, 0
	if len(rest) > 0 && rest[0] == ':' {
		if len(rest) < 3 {
			return Timestamp{}, false
		}
		sec, ok := digits(rest[1:3])
		if !ok || sec > 59 {
			return Timestamp{}, false
		}
		second = sec
		rest = rest[3:]
		if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
			n := 1
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			fracDigits := rest[1:n]
			if len(fracDigits) == 0 {
				return Timestamp{}, false
			}
			for i := 0; i < 6; i++ {
				micros *= 10
				if i < len(fracDigits) {
					micros += int(fracDigits[i] - '0')
				}
			}
			rest = rest[n:]
		}
	}
	ts := Timestamp{}
	switch {
	case len(rest) == 0:
		ts.kind = tsNaive
	case string(rest) == "Z" || string(rest) == "z":
		ts.kind = tsUTC
	case rest[0] == '+' || rest[0] == '-':
		var oh, om int
		var ok bool
		switch len(rest) {
		case 6:
			if rest[3] != ':' {
				return Timestamp{}, false
			}
			oh, ok = digits(rest[1:3])
			if ok {
				om, ok = digits(rest[4:6])
			}
		case 5:
			oh, ok = digits(rest[1:3])
			if ok {
				om, ok = digits(rest[3:5])
			}
		}
		if !ok || oh > 23 || om > 59 {
			return Timestamp{}, false
		}
		off := oh*60 + om
		if rest[0] == '-' {
			off = -off
		}
		if off == 0 {
			ts.kind = tsUTC
		} else {
			ts.kind = tsOffset
			ts.offsetMin = int16(off)
		}
	default:
		return Timestamp{}, false
	}
	wall := civilDays(year, month, day)*86_400 + int64(hour*3600+minute*60+second)
	ts.micros = (wall-int64(ts.offsetMin)*60)*1_000_000 + int64(micros)
	return ts, true
}

func daysIn(year, month int) int {
	switch month {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}
