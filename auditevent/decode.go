package auditevent

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"
)

// field indexes the event fields the decoder knows, in the model's order,
// which is the order validation errors are reported in.
type field uint8

const (
	fVersion field = iota
	fEventID
	fTS
	fSessionID
	fSeq
	fOp
	fPhase
	fSpanID
	fParentSpanID
	fTraceID
	fData
	fOK
	fDurationMS
	fErrorCode
	fErrorType
	fErrorMessage
	fErrorRetryable
	fStdout
	fStderr
	numFields
)

// fieldNames is the one table of field names, indexed by field;
// lookupField is derived from it, so a new field is one constant and one
// entry here.
var fieldNames = [numFields]string{
	fVersion:        "version",
	fEventID:        "event_id",
	fTS:             "ts",
	fSessionID:      "session_id",
	fSeq:            "seq",
	fOp:             "op",
	fPhase:          "phase",
	fSpanID:         "span_id",
	fParentSpanID:   "parent_span_id",
	fTraceID:        "trace_id",
	fData:           "data",
	fOK:             "ok",
	fDurationMS:     "duration_ms",
	fErrorCode:      "error_code",
	fErrorType:      "error_type",
	fErrorMessage:   "error_message",
	fErrorRetryable: "error_retryable",
	fStdout:         "stdout",
	fStderr:         "stderr",
}

// IsField reports whether name is a field of the version-1 event. A
// *FieldError may name an unknown key of the input instead (an invalid value
// under a key the event ignores); callers that log errors use this to keep
// input text out of their logs.
func IsField(name string) bool {
	_, ok := lookupField([]byte(name))
	return ok
}

func lookupField(k []byte) (field, bool) {
	// A scan of 19 names, most rejected on length alone, beats hashing
	// the key (BenchmarkDecode).
	for f := range fieldNames {
		if fieldNames[f] == string(k) {
			return field(f), true
		}
	}
	return 0, false
}

// slot is where a known field's value sits in the input.
type slot struct {
	present    bool
	plain      bool // a string of printable ASCII without escapes (ScanLine)
	start, end int
}

// DecodeOptions controls the defaults the reference fills in.
type DecodeOptions struct {
	// MaxDataBytes bounds data's canonical text (0: no bound): past it,
	// decoding stops with a *TooLongError before that text is written.
	MaxDataBytes int

	// Now supplies the default ts for events without one (the reference
	// uses the current UTC time). Nil means time.Now.
	Now func() time.Time
	// NewID supplies the default event_id (the reference uses uuid4).
	// Nil means uuid.NewRandom.
	NewID func() (uuid.UUID, error)

	// NoIDDefaults refuses an event without event_id or ts (a "missing"
	// *FieldError) instead of making them up: for lines that are read
	// again, as from a Kafka topic, where each read must give the same
	// event.
	NoIDDefaults bool
}

// Decode reads and validates one event from JSON: the body the Python
// HttpProxySink POSTs, or a canonical line (a trailing newline is fine). It
// accepts what the reference accepts for well-typed JSON and refuses the
// rest with a *FieldError naming the field (docs/format.md, "What the intake
// accepts"). Unknown fields are ignored; a start event ignores the finish
// fields.
func Decode(b []byte) (Event, error) {
	var e Event
	err := DecodeOptions{}.DecodeInto(b, &e)
	return e, err
}

// DecodeString is Decode for text held in a string, such as a log
// record's body: the text is not copied, and data that is already
// canonical (what AppendJSON wrote) is kept as a view of it, as
// ParseDataString keeps it; a string's bytes never change.
func DecodeString(s string) (Event, error) {
	var e Event
	err := DecodeOptions{}.DecodeStringInto(s, &e)
	return e, err
}

// DecodeStringInto is DecodeString with the given defaults, into e.
func (o DecodeOptions) DecodeStringInto(s string, e *Event) error {
	return o.decodeInto(unsafe.Slice(unsafe.StringData(s), len(s)), e, true)
}

// DecodeInto is Decode with the given defaults, into e (which is reset).
// It finds the known fields in one scan, then decodes them in the model's
// order: the phase first, then the common fields, then the finish fields.
func (o DecodeOptions) DecodeInto(b []byte, e *Event) error {
	return o.decodeInto(b, e, false)
}

// decodeInto is DecodeInto; with keepData, data already canonical is kept
// as a view of b, which must then never change.
func (o DecodeOptions) decodeInto(b []byte, e *Event, keepData bool) error {
	*e = Event{}
	var slots [numFields]slot
	if err := scanObject(b, &slots, e, keepData, o.MaxDataBytes); err != nil {
		return err
	}
	d := decoder{buf: b, slots: &slots}
	if err := d.phase(e); err != nil {
		return d.alsoMissing(err, e.Phase)
	}
	if err := o.decodeCommon(&d, e); err != nil {
		return d.alsoMissing(err, e.Phase)
	}
	if e.Phase != PhaseFinish {
		return nil
	}
	return d.alsoMissing(d.finishFields(e), e.Phase)
}

// requiredFields have no default: an event without one is refused.
var requiredFields = [...]field{fPhase, fSessionID, fSeq, fOp, fSpanID}

// requiredFinishFields are the further fields a finish event needs.
var requiredFinishFields = [...]field{fOK, fDurationMS}

// alsoMissing adds to a missing-field error the names of the other
// required fields that are missing, so that a client fixes them all at
// once. Other errors are returned as they are.
func (d *decoder) alsoMissing(err error, phase Phase) error {
	fe, ok := err.(*FieldError)
	if !ok || fe.Type != "missing" && fe.Type != "union_tag_not_found" {
		return err
	}
	first := fe.Field
	if fe.Type == "union_tag_not_found" {
		first = fieldNames[fPhase]
	}
	fields := requiredFields[:]
	if phase == PhaseFinish {
		fields = append(fields[:len(fields):len(fields)], requiredFinishFields[:]...)
	}
	var others []string
	for _, f := range fields {
		if !d.slots[f].present && fieldNames[f] != first {
			others = append(others, fieldNames[f])
		}
	}
	if len(others) == 0 {
		return err
	}
	return &FieldError{Field: fe.Field, Type: fe.Type, Msg: fe.Msg + "; also missing: " + strings.Join(others, ", ")}
}

// scanObject checks b is one JSON object and records where each known
// field's value sits. data is canonicalized into e in the same pass.
func scanObject(b []byte, slots *[numFields]slot, e *Event, keepData bool, maxData int) error {
	// Only data is written while scanning, so the parser's limit is data's.
	p := parser{buf: b, limit: maxData}
	if c := p.peek(); c != '{' {
		if _, err := p.canonValue(nil); err != nil {
			return &FieldError{Type: "json_invalid", Msg: err.Error()}
		}
		return fieldErr("", "model_attributes_type", "an event must be a JSON object")
	}
	p.pos++
	p.depth = 1
	if p.peek() == '}' {
		p.pos++
		return finishScan(&p)
	}
	for {
		if err := scanMember(&p, slots, e, keepData); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case '}':
			p.pos++
			return finishScan(&p)
		}
		return &FieldError{Type: "json_invalid", Msg: p.fail("expected ',' or '}' in object").Error()}
	}
}

func finishScan(p *parser) error {
	if err := p.finish(); err != nil {
		return &FieldError{Type: "json_invalid", Msg: err.Error()}
	}
	return nil
}

// scanMember reads one "key": value member and records a known key's slot.
func scanMember(p *parser, slots *[numFields]slot, e *Event, keepData bool) error {
	if p.peek() != '"' {
		return &FieldError{Type: "json_invalid", Msg: p.fail("expected a string key").Error()}
	}
	key, err := p.readString()
	if err != nil {
		return &FieldError{Type: "json_invalid", Msg: err.Error()}
	}
	if p.peek() != ':' {
		return &FieldError{Type: "json_invalid", Msg: p.fail("expected ':' after key").Error()}
	}
	p.pos++
	f, known := lookupField(key)
	p.skipWS()
	start := p.pos
	if known && f == fData && p.peek() == '{' {
		e.Data, err = scanData(p, keepData)
	} else {
		err = p.skipValue()
	}
	if tl, ok := errors.AsType[*TooLongError](err); ok {
		return &TooLongError{Field: fieldNames[fData], Limit: tl.Limit}
	}
	if err != nil {
		// The scan cannot resume mid-value, so the first bad value ends
		// decoding.
		name := displayKey(key)
		if known {
			name = fieldNames[f]
		}
		var se *syntaxError
		var de *DepthError
		if errors.As(err, &se) || errors.As(err, &de) {
			return &FieldError{Field: name, Type: "json_invalid", Msg: err.Error()}
		}
		return &FieldError{Field: name, Type: "value_error", Msg: err.Error()}
	}
	if known {
		slots[f] = slot{present: true, start: start, end: p.pos}
	}
	return nil
}

// scanData reads the data object at p: kept as it is when keepData and it
// is canonical already, else canonicalized in the same pass rather than
// checked first.
func scanData(p *parser, keepData bool) (Data, error) {
	start, depth := p.pos, p.depth
	if keepData {
		if err := p.skipValue(); err == nil && isCanonicalObject(p.buf[start:p.pos]) {
			return newData(p.buf[start:p.pos:p.pos]), nil
		}
		p.pos, p.depth = start, depth // a failed skip may have left it deeper
	}
	canon, err := p.canonObject(nil)
	if err == nil && p.limit > 0 && len(canon) > p.limit {
		err = &TooLongError{Limit: p.limit}
	}
	return newData(canon), err
}

// displayKey is an unknown key as an error names it: as is when it is a
// short run of printable ASCII, else JSON-quoted in ASCII and cut, so that
// a client's error body or log never carries its control bytes (a terminal
// escape) or an unbounded key.
func displayKey(key []byte) string {
	const maxShown = 64
	plain := len(key) <= maxShown
	for _, c := range key {
		plain = plain && c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		return string(key)
	}
	cut := key
	if len(cut) > maxShown {
		cut = cut[:maxShown]
	}
	q := string(appendQuoted(nil, string(cut)))
	if len(cut) < len(key) {
		q = q[:len(q)-1] + `..."`
	}
	return q
}

// phase reads the discriminator, which decides the variant first, as
// pydantic's tagged union does.
func (d *decoder) phase(e *Event) error {
	ph := d.slots[fPhase]
	if !ph.present {
		return fieldErr("", "union_tag_not_found", "phase: missing (must be \"start\" or \"finish\")")
	}
	phase, ok := phaseOf(d.buf[ph.start:ph.end])
	if !ok {
		return fieldErr("", "union_tag_invalid", "phase: must be \"start\" or \"finish\"")
	}
	e.Phase = phase
	return nil
}

// phaseOf reads a raw phase value. Its escapes are undone first: to
// pydantic's discriminator "st\u0061rt" is the same string as "start".
func phaseOf(v []byte) (Phase, bool) {
	switch string(v) {
	case `"start"`:
		return PhaseStart, true
	case `"finish"`:
		return PhaseFinish, true
	}
	if v[0] != '"' || bytes.IndexByte(v, '\\') < 0 {
		return 0, false
	}
	p := parser{buf: v}
	s, err := p.readString()
	if err != nil || bytes.IndexByte(s, '\\') >= 0 {
		return 0, false
	}
	return phaseOf(append(append([]byte{'"'}, s...), '"'))
}

// decodeCommon reads the fields both phases have, filling the defaults.
func (o DecodeOptions) decodeCommon(d *decoder, e *Event) error {
	var err error
	e.Version = 1
	if d.slots[fVersion].present {
		if e.Version, err = d.int(fVersion); err != nil {
			return err
		}
	}
	if e.EventID, err = o.eventID(d); err != nil {
		return err
	}
	if e.TS, err = o.ts(d); err != nil {
		return err
	}
	if e.SessionID, err = d.uuid(fSessionID); err != nil {
		return err
	}
	if e.Seq, err = d.int(fSeq); err != nil {
		return err
	}
	if e.Op, err = d.op(); err != nil {
		return err
	}
	if e.SpanID, err = d.str(fSpanID, "string_type"); err != nil {
		return err
	}
	if e.ParentSpanID, err = d.optStr(fParentSpanID, "string_type"); err != nil {
		return err
	}
	if e.TraceID, err = d.optStr(fTraceID, "string_type"); err != nil {
		return err
	}
	if s := d.slots[fData]; s.present && d.buf[s.start] != '{' {
		return fieldErr("data", "dict_type", "must be a JSON object")
	}
	return nil
}

// eventID reads event_id, or makes the default one.
func (o DecodeOptions) eventID(d *decoder) (uuid.UUID, error) {
	if d.slots[fEventID].present || o.NoIDDefaults {
		return d.uuid(fEventID)
	}
	newID := o.NewID
	if newID == nil {
		newID = uuid.NewRandom
	}
	id, err := newID()
	if err != nil {
		return uuid.Nil, fieldErr("event_id", "uuid_generation", "cannot generate a default event id: "+err.Error())
	}
	return id, nil
}

// ts reads ts, or takes the current time.
func (o DecodeOptions) ts(d *decoder) (Timestamp, error) {
	if d.slots[fTS].present || o.NoIDDefaults {
		return d.timestamp(fTS)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return TimestampFromTime(now()), nil
}

// op reads op as one of the interned operation names.
func (d *decoder) op() (string, error) {
	raw, err := d.strBytes(fOp, "literal_error")
	if err != nil {
		return "", err
	}
	op, ok := internOp(raw)
	if !ok {
		// The value is not repeated: the message reaches clients and logs.
		return "", fieldErr("op", "literal_error", "not a sandbox operation (must be one of: "+strings.Join(opNames[:], ", ")+")")
	}
	return op, nil
}

// finishFields reads the fields only a finish event has.
func (d *decoder) finishFields(e *Event) error {
	var err error
	if e.OK, err = d.bool(fOK); err != nil {
		return err
	}
	if e.DurationMS, err = d.float(fDurationMS); err != nil {
		return err
	}
	if e.ErrorCode, err = d.errorCode(); err != nil {
		return err
	}
	if e.ErrorType, err = d.optStr(fErrorType, "string_type"); err != nil {
		return err
	}
	if e.ErrorMessage, err = d.optStr(fErrorMessage, "string_type"); err != nil {
		return err
	}
	if d.present(fErrorRetryable) {
		v, err := d.bool(fErrorRetryable)
		if err != nil {
			return err
		}
		e.ErrorRetryable = &v
	}
	if e.Stdout, err = d.optStr(fStdout, "string_type"); err != nil {
		return err
	}
	if e.Stderr, err = d.optStr(fStderr, "string_type"); err != nil {
		return err
	}
	return nil
}

// errorCode reads error_code as one of the interned reference codes.
func (d *decoder) errorCode() (*string, error) {
	if !d.present(fErrorCode) {
		return nil, nil
	}
	raw, err := d.strBytes(fErrorCode, "enum")
	if err != nil {
		return nil, err
	}
	code, ok := internErrorCode(raw)
	if !ok {
		// The value is not repeated: the message reaches clients and logs.
		return nil, fieldErr("error_code", "enum", "not a reference error code"+
			" (must be null or one of the Python SDK's codes, such as exec_nonzero or exec_timeout; docs/format.md)")
	}
	return &code, nil
}

// decoder reads typed values out of the slots found by DecodeInto.
type decoder struct {
	buf   []byte
	slots *[numFields]slot
}

// present says the field is there and not null.
func (d *decoder) present(f field) bool {
	s := d.slots[f]
	return s.present && string(d.buf[s.start:s.end]) != "null"
}

func (d *decoder) raw(f field) ([]byte, error) {
	s := d.slots[f]
	if !s.present {
		return nil, fieldErr(fieldNames[f], "missing", "missing")
	}
	return d.buf[s.start:s.end], nil
}

func (d *decoder) str(f field, typ string) (string, error) {
	s, err := d.strBytes(f, typ)
	return string(s), err
}

// strBytes returns the decoded string value, often a sub-slice of the input.
func (d *decoder) strBytes(f field, typ string) ([]byte, error) {
	raw, err := d.raw(f)
	if err != nil {
		return nil, err
	}
	if raw[0] != '"' {
		return nil, fieldErr(fieldNames[f], typ, "must be a string")
	}
	p := parser{buf: raw}
	s, err := p.readString()
	if err != nil {
		return nil, fieldErr(fieldNames[f], "string_type", err.Error())
	}
	return s, nil
}

func (d *decoder) optStr(f field, typ string) (*string, error) {
	if !d.present(f) {
		return nil, nil
	}
	v, err := d.str(f, typ)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (d *decoder) uuid(f field) (uuid.UUID, error) {
	raw, err := d.raw(f)
	if err != nil {
		return uuid.Nil, err
	}
	if raw[0] != '"' {
		return uuid.Nil, fieldErr(fieldNames[f], "uuid_type", "must be a UUID string")
	}
	p := parser{buf: raw}
	s, err := p.readString()
	if err != nil {
		return uuid.Nil, fieldErr(fieldNames[f], "uuid_parsing", err.Error())
	}
	u, ok := parseUUID(s)
	if !ok {
		return uuid.Nil, fieldErr(fieldNames[f], "uuid_parsing", "not a UUID")
	}
	return u, nil
}

func (d *decoder) timestamp(f field) (Timestamp, error) {
	raw, err := d.raw(f)
	if err != nil {
		return Timestamp{}, err
	}
	if raw[0] != '"' {
		return Timestamp{}, fieldErr(fieldNames[f], "datetime_type", "must be an ISO 8601 datetime string")
	}
	p := parser{buf: raw}
	s, err := p.readString()
	if err != nil {
		return Timestamp{}, fieldErr(fieldNames[f], "datetime_parsing", err.Error())
	}
	t, err := parseTimestampBytes(s)
	if err != nil {
		fe := err.(*FieldError)
		fe.Field = fieldNames[f]
		return Timestamp{}, fe
	}
	return t, nil
}

func (d *decoder) int(f field) (int64, error) {
	raw, err := d.raw(f)
	if err != nil {
		return 0, err
	}
	name := fieldNames[f]
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, fieldErr(name, "int_type", "must be an integer")
	}
	p := parser{buf: raw}
	tok, isFloat, err := p.numberToken()
	if err != nil {
		return 0, fieldErr(name, "int_type", err.Error())
	}
	if !isFloat {
		v, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return 0, fieldErr(name, "int_parsing_size", "integer out of the 64-bit range")
		}
		return v, nil
	}
	// pydantic takes a float with no fractional part as an int; Python
	// reads one past the float range as inf, which it calls not finite.
	fv, err := parseFloatTok(tok)
	if err != nil {
		return 0, fieldErr(name, "finite_number", "must be a finite number")
	}
	if fv != math.Trunc(fv) {
		return 0, fieldErr(name, "int_from_float", "must be an integer, got a number with a fractional part")
	}
	if fv < -(1<<63) || fv >= 1<<63 {
		return 0, fieldErr(name, "int_parsing_size", "integer out of the 64-bit range")
	}
	return int64(fv), nil
}

func (d *decoder) float(f field) (float64, error) {
	raw, err := d.raw(f)
	if err != nil {
		return 0, err
	}
	name := fieldNames[f]
	switch c := raw[0]; {
	case c == '"':
		return 0, fieldErr(name, "float_parsing", "must be a JSON number, not a string")
	case c != '-' && (c < '0' || c > '9'):
		return 0, fieldErr(name, "float_type", "must be a number")
	}
	p := parser{buf: raw}
	tok, isFloat, err := p.numberToken()
	if err != nil {
		return 0, fieldErr(name, "float_parsing", err.Error())
	}
	v, err := parseFloatTok(tok)
	if err != nil {
		return 0, fieldErr(name, "finite_number", "must be a finite number")
	}
	if !isFloat && v == 0 {
		v = 0 // the integer -0 is 0, so 0.0, not -0.0 (docs/decisions.md)
	}
	return v, nil
}

func (d *decoder) bool(f field) (bool, error) {
	raw, err := d.raw(f)
	if err != nil {
		return false, err
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if raw[0] == '"' {
		return false, fieldErr(fieldNames[f], "bool_parsing", "must be true or false")
	}
	return false, fieldErr(fieldNames[f], "bool_type", "must be true or false")
}
