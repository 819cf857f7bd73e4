package auditevent

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// LineFields are the fields of one event line that a reading tool lists,
// read without building the event. The byte slices are views of the line.
type LineFields struct {
	Phase      Phase
	EventID    uuid.UUID
	TS         []byte // the canonical spelling, as written
	TSMicros   int64
	SessionID  uuid.UUID
	Seq        int64
	Op         string // one of Ops()
	SpanID     []byte
	TraceID    []byte // nil for null or absent
	Data       []byte // the canonical data object
	OK         bool   // a finish's; false for a start
	DurationMS float64
	ErrorCode  string // "" for null; one of ErrorCodes()

	// Where TS, SpanID, TraceID and Data begin in the line, for a caller
	// that keeps the line and stores a position rather than a copy.
	TSAt, SpanIDAt, TraceIDAt, DataAt int

	slots [numFields]slot // here rather than on ScanLine's stack, which they would leave
	data  memberIndex     // where data's members sit in the line
	read  uint32          // 1<<field for each field canonicalMembers read in place
}

// DataMember is where the value of data's top-level member key sits in
// Data, from what ScanLine recorded as it checked data: ok reports that
// data has the member; known is false when data has more members than
// ScanLine records, and the caller must look for itself.
func (f *LineFields) DataMember(key string) (from, to int, ok, known bool) {
	x := &f.data
	if x.over {
		return 0, 0, false, false
	}
	for _, m := range x.m[:x.n] {
		value := int(m.value) - f.DataAt
		k := f.Data[int(m.key)-f.DataAt : value-2]
		if string(k) == key {
			return value, int(m.end) - f.DataAt, true, true
		}
		if string(k) > key {
			break // canonical keys are sorted
		}
	}
	return 0, 0, false, true
}

// ScanLine reads a line written in canonical form (what AppendJSON writes,
// with or without its newline) into f. It checks the whole line as strictly
// as the canonical checker does, which is stricter than DecodeString: every
// line it accepts, DecodeString accepts with the same values. It answers
// false for anything else, valid or not, which DecodeString must then judge
// (and word the error). Reading tools use it for the lines the collector
// writes, which it accepts at a fraction of a full decode's cost.
func ScanLine(line []byte, f *LineFields) bool {
	line = bytes.TrimSuffix(line, []byte("\n"))
	*f = LineFields{}
	if !canonicalMembers(line, f) {
		return false
	}
	d := decoder{buf: line, slots: &f.slots}
	switch string(d.rawOr(fPhase)) {
	case `"start"`:
		f.Phase = PhaseStart
	case `"finish"`:
		f.Phase = PhaseFinish
	default:
		return false
	}
	return scanCommon(&d, f) && (f.Phase != PhaseFinish || scanFinish(&d, f))
}

// scanCommon reads the fields both phases have, as decodeCommon does but
// refusing what it would default (a missing event_id, ts or data).
func scanCommon(d *decoder, f *LineFields) bool {
	if d.slots[fVersion].present && f.read&(1<<fVersion) == 0 {
		if _, ok := d.smallInt(fVersion); !ok {
			return false
		}
	}
	ok := true
	if f.read&(1<<fEventID) == 0 {
		f.EventID, ok = d.plainUUID(fEventID)
	}
	if f.read&(1<<fSessionID) == 0 && ok {
		f.SessionID, ok = d.plainUUID(fSessionID)
	}
	if f.read&(1<<fTS) == 0 && ok {
		f.TS, f.TSMicros, ok = d.plainTimestamp(fTS)
	}
	if !ok {
		return false
	}
	f.TSAt = d.slots[fTS].start + 1
	if f.read&(1<<fSeq) == 0 {
		if f.Seq, ok = d.smallInt(fSeq); !ok {
			return false
		}
	}
	op, ok := d.plain(fOp)
	if !ok {
		return false
	}
	if f.Op, ok = internOp(op); !ok {
		return false
	}
	if f.SpanID, ok = d.plain(fSpanID); !ok {
		return false
	}
	f.SpanIDAt = d.slots[fSpanID].start + 1
	if !d.optString(fParentSpanID) {
		return false
	}
	if d.present(fTraceID) {
		if f.TraceID, ok = d.plain(fTraceID); !ok {
			return false
		}
		f.TraceIDAt = d.slots[fTraceID].start + 1
	}
	f.Data, f.DataAt = d.rawOr(fData), d.slots[fData].start
	return len(f.Data) > 0 && f.Data[0] == '{'
}

// scanFinish reads the fields only a finish has, as finishFields does.
func scanFinish(d *decoder, f *LineFields) bool {
	var err error
	if f.OK, err = d.bool(fOK); err != nil {
		return false
	}
	if v, ok := shortDecimal(d.rawOr(fDurationMS)); ok {
		f.DurationMS = v
	} else if f.DurationMS, err = d.float(fDurationMS); err != nil {
		return false
	}
	if d.present(fErrorCode) {
		code, ok := d.plain(fErrorCode)
		if !ok {
			return false
		}
		if f.ErrorCode, ok = internErrorCode(code); !ok {
			return false
		}
	}
	if d.present(fErrorRetryable) {
		if _, err := d.bool(fErrorRetryable); err != nil {
			return false
		}
	}
	return d.optString(fErrorType) && d.optString(fErrorMessage) && d.optString(fStdout) && d.optString(fStderr)
}

// smallInt reads an integer field as d.int does, written as at most 18
// digits (every seq and version in practice) without a conversion.
func (d *decoder) smallInt(f field) (int64, bool) {
	raw := d.rawOr(f)
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		v, err := d.int(f)
		return v, err == nil
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			v, err := d.int(f)
			return v, err == nil
		}
		v = v*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		v = -v
	}
	return v, true
}

// rawOr is a field's raw value, or nil when it is absent.
func (d *decoder) rawOr(f field) []byte {
	s := d.slots[f]
	if !s.present {
		return nil
	}
	return d.buf[s.start:s.end]
}

// plain is a string field's text when it holds no escape (so the text is
// the value), with false when it is absent, not a string, or escaped.
func (d *decoder) plain(f field) ([]byte, bool) {
	if s := d.slots[f]; s.plain {
		return d.buf[s.start+1 : s.end-1], true
	}
	raw := d.rawOr(f)
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	return s, bytes.IndexByte(s, '\\') < 0
}

// optString reports whether an optional string field is absent, null or a
// string (already checked as one by canonicalMembers).
func (d *decoder) optString(f field) bool {
	raw := d.rawOr(f)
	return raw == nil || raw[0] == '"' || string(raw) == "null"
}

func (d *decoder) plainUUID(f field) (uuid.UUID, bool) {
	s, ok := d.plain(f)
	if !ok {
		return uuid.Nil, false
	}
	return parseUUID(s)
}

// plainTimestamp reads ts when it is spelled as the canonical form spells
// it, so that the text as written is the timestamp's String.
func (d *decoder) plainTimestamp(f field) ([]byte, int64, bool) {
	s, ok := d.plain(f)
	if !ok {
		return nil, 0, false
	}
	if micros, ok := parseUTCSpelling(s); ok {
		return s, micros, true
	}
	t, ok := parseTimestamp(s)
	if !ok {
		return nil, 0, false
	}
	var spell [maxTimestampLen]byte
	return s, t.micros, string(t.appendText(spell[:0])) == string(s)
}

// parseUTCSpelling reads the timestamp appendText writes for a UTC time,
// YYYY-MM-DDTHH:MM:SS[.ffffff]Z with a fraction that is not zero, at fixed
// places: every line the collector writes has one. It refuses anything
// else, which parseTimestamp then reads; what it accepts, parseTimestamp
// accepts with the same instant, and appendText spells as it is.
func parseUTCSpelling(s []byte) (int64, bool) {
	var frac int64
	switch len(s) {
	case 20:
		if s[19] != 'Z' {
			return 0, false
		}
	case 27:
		if s[19] != '.' || s[26] != 'Z' {
			return 0, false
		}
		f0, ok0 := twoDigitsAt(s, 20)
		f1, ok1 := twoDigitsAt(s, 22)
		f2, ok2 := twoDigitsAt(s, 24)
		frac = int64(f0*10_000 + f1*100 + f2)
		if !ok0 || !ok1 || !ok2 || frac == 0 {
			return 0, false
		}
	default:
		return 0, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	y0, ok0 := twoDigitsAt(s, 0)
	y1, ok1 := twoDigitsAt(s, 2)
	mo, ok2 := twoDigitsAt(s, 5)
	d, ok3 := twoDigitsAt(s, 8)
	h, ok4 := twoDigitsAt(s, 11)
	mi, ok5 := twoDigitsAt(s, 14)
	sec, ok6 := twoDigitsAt(s, 17)
	y := y0*100 + y1
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	return (civilDays(y, mo, d)*86_400+int64(h*3600+mi*60+sec))*1_000_000 + frac, true
}

// twoDigitsAt reads the two decimal digits at s[at:at+2].
func twoDigitsAt(s []byte, at int) (int, bool) {
	hi, lo := s[at]-'0', s[at+1]-'0'
	return int(hi)*10 + int(lo), hi <= 9 && lo <= 9
}

// canonicalMembers checks that b is one JSON object in canonical form, as
// isCanonicalObject does, nested as deep as the decoder allows under a
// top-level object, and records where each known field's value sits and
// where data's members do.
// Canonical keys are plain and strictly increasing, so each key is matched
// against the known names in their order, and a plain string value (most
// of a line's) is checked eight bytes at a time.
func canonicalMembers(b []byte, f *LineFields) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	slots := &f.slots
	c := canonChecker{buf: b, depth: 1}
	i, next := 1, 0 // next: the first known name not yet passed, in sortedFields
	// The previous key is b[prevFrom:prevTo] (prevTo 0 before the first).
	prevFrom, prevTo, prevKnown := 0, 0, true
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		// The next known name, quoted and followed by its colon, is the
		// usual key; it follows a known key (or none) in order. Anything
		// else is read and compared in full.
		var keyTo int // the key's text is b[i+1:keyTo]
		known := false
		var j int
		if next < len(sortedTokens) && len(b)-i > tokenRoom && sortedTokens[next].at((*[tokenRoom]byte)(b[i:])) {
			j = next // the usual key, checked without a call
		} else {
			j = knownAt(b, i, next)
		}
		if j >= 0 {
			// Names between next and j are absent: each is less than this
			// one, as the loop below would find.
			known, next, keyTo = true, j, i+sortedTokenLen[j]-2
		} else {
			keyTo = plainEnd(b, i+1)
			if keyTo+1 >= len(b) || b[keyTo] != '"' || b[keyTo+1] != ':' {
				return false // an escaped key, no closing quote, or no colon
			}
		}
		if !known || !prevKnown {
			key := b[i+1 : keyTo]
			if prevTo > 0 && string(b[prevFrom:prevTo]) >= string(key) {
				return false
			}
			for !known && next < len(sortedFields) && fieldNames[sortedFields[next]] < string(key) {
				next++
			}
			known = known || next < len(sortedFields) && fieldNames[sortedFields[next]] == string(key)
		}
		prevFrom, prevTo, prevKnown = i+1, keyTo, known
		start := keyTo + 2
		fld := field(numFields) // none
		if known {
			fld = sortedFields[next]
		}
		c.top = nil
		if fld == fData {
			c.top = &f.data
		}
		var ok, plain bool
		switch {
		case inPlace&(1<<fld) != 0 && readInPlace(b, start, fld, f):
			i, plain, ok = slots[fld].end, slots[fld].plain, true
		case start < len(b) && b[start] == '"':
			if end := plainEnd(b, start+1); end < len(b) && b[end] == '"' {
				i, plain, ok = end+1, true, true
				break
			}
			i, ok = c.value(start)
		case start+4 <= len(b) && string(b[start:start+4]) == "null":
			i, ok = start+4, true
		default:
			i, ok = c.value(start)
		}
		if !ok || i >= len(b) {
			return false
		}
		if known {
			slots[fld] = slot{present: true, plain: plain, start: start, end: i}
			next++
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i+1 == len(b)
		default:
			return false
		}
	}
}

// inPlace are the fields readInPlace reads.
const inPlace = 1<<fEventID | 1<<fSessionID | 1<<fTS | 1<<fSeq | 1<<fVersion

// shortDecimal reads a JSON number that canonicalMembers checked, when it
// is written with a point and at most 15 digits, as the float ParseFloat
// reads: the digits as an integer and the power of ten are both exact in a
// float64, so one division rounds as ParseFloat does. It answers false for
// anything else.
func shortDecimal(raw []byte) (float64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var mant uint64
	point, digits := -1, 0
	for k, c := range raw {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = k
		default:
			return 0, false
		}
	}
	if point <= 0 || point == len(raw)-1 || digits > 15 {
		return 0, false
	}
	v := float64(mant) / pow10[len(raw)-1-point]
	if neg {
		v = -v
	}
	return v, true
}

// pow10[k] is 10^k, exact in a float64.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// readInPlace reads the value at b[start:] of a field that the canonical
// form spells as a fixed-shape string (the UUIDs, the timestamp as UTC)
// into f, and marks it read, when it is spelled so: its checks leave no
// quote or escape inside the quotes, so such a value is a plain string
// that scanCommon would read the same way. It records the field's slot.
func readInPlace(b []byte, start int, fld field, f *LineFields) bool {
	end := 0
	switch fld {
	case fEventID, fSessionID:
		if start+uuidQuotedLen > len(b) || b[start] != '"' || b[start+uuidQuotedLen-1] != '"' {
			return false
		}
		u, ok := parseHyphenated(b[start+1 : start+uuidQuotedLen-1])
		if !ok {
			return false
		}
		if fld == fEventID {
			f.EventID = u
		} else {
			f.SessionID = u
		}
		end = start + uuidQuotedLen
	case fSeq, fVersion:
		// A canonical integer of at most 18 digits, as plainInt and
		// smallInt read it.
		j, v := start, int64(0)
		for j < len(b) && j-start < 19 && b[j] >= '0' && b[j] <= '9' {
			v = v*10 + int64(b[j]-'0')
			j++
		}
		if j == start || j-start > 18 || j-start > 1 && b[start] == '0' ||
			j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
			return false
		}
		if fld == fSeq {
			f.Seq = v
		}
		f.read |= 1 << fld
		f.slots[fld] = slot{present: true, start: start, end: j}
		return true
	case fTS:
		// 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.000001Z, quoted.
		switch {
		case start+22 <= len(b) && b[start+21] == '"':
			end = start + 22
		case start+29 <= len(b) && b[start+28] == '"':
			end = start + 29
		default:
			return false
		}
		if b[start] != '"' {
			return false
		}
		micros, ok := parseUTCSpelling(b[start+1 : end-1])
		if !ok {
			return false
		}
		f.TS, f.TSMicros = b[start+1:end-1], micros
	default:
		return false
	}
	f.read |= 1 << fld
	f.slots[fld] = slot{present: true, plain: true, start: start, end: end}
	return true
}

// tokenWords is a member token as little-endian words and the masks of
// its bytes, to compare eight bytes at a time.
type tokenWords struct {
	w, mask [3]uint64
}

// sortedTokens[j] is memberTokens[sortedFields[j]] as words.
var sortedTokens = func() (t [numFields]tokenWords) {
	for j, f := range sortedFields {
		var pad [tokenRoom]byte
		if copy(pad[:], memberTokens[f]) != len(memberTokens[f]) {
			panic("auditevent: a field name longer than sortedTokens holds")
		}
		for k := range 3 {
			t[j].w[k] = binary.LittleEndian.Uint64(pad[8*k:])
			for x := range 8 {
				if 8*k+x < len(memberTokens[f]) {
					t[j].mask[k] |= 0xff << (8 * x)
				}
			}
		}
	}
	return t
}()

// knownAt is the first j from next on whose member token (the quoted name
// and its colon) is at b[i:] with a byte after it, or -1.
func knownAt(b []byte, i, next int) int {
	if len(b)-i <= tokenRoom {
		for j := next; j < len(sortedFields); j++ {
			if tok := memberTokens[sortedFields[j]]; len(b)-i > len(tok) && string(b[i:i+len(tok)]) == tok {
				return j
			}
		}
		return -1
	}
	w := (*[tokenRoom]byte)(b[i:])
	for j := next; j < len(sortedTokens); j++ {
		if sortedTokens[j].at(w) {
			return j
		}
	}
	return -1
}

// at reports whether the token opens w.
func (t *tokenWords) at(w *[tokenRoom]byte) bool {
	return binary.LittleEndian.Uint64(w[:8])&t.mask[0] == t.w[0] && binary.LittleEndian.Uint64(w[8:16])&t.mask[1] == t.w[1] &&
		binary.LittleEndian.Uint64(w[16:])&t.mask[2] == t.w[2]
}

// tokenRoom is the longest member token sortedTokens holds.
const tokenRoom = 24

// memberTokens[f] opens f's member: its quoted name and the colon.
var memberTokens = func() (t [numFields]string) {
	for f, name := range fieldNames {
		t[f] = `"` + name + `":`
	}
	return t
}()

// sortedTokenLen[j] is len(memberTokens[sortedFields[j]]).
var sortedTokenLen = func() (n [numFields]int) {
	for j, f := range sortedFields {
		n[j] = len(memberTokens[f])
	}
	return n
}()

// sortedFields are the known fields in their names' code-point order, the
// order a canonical line writes them in.
var sortedFields = func() [numFields]field {
	var s [numFields]field
	for f := range s {
		s[f] = field(f)
	}
	slices.SortFunc(s[:], func(a, b field) int { return strings.Compare(fieldNames[a], fieldNames[b]) })
	return s
}()
