package auditevent

import (
	"errors"
	"math"
	"strconv"
	"time"

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

var fieldNames = [numFields]string{
	"version", "event_id", "ts", "session_id", "seq", "op", "phase", "span_id",
	"parent_span_id", "trace_id", "data", "ok", "duration_ms", "error_code",
	"error_type", "error_message", "error_retryable", "stdout", "stderr",
}

func lookupField(k []byte) (field, bool) {
	switch string(k) {
	case "version":
		return fVersion, true
	case "event_id":
		return fEventID, true
	case "ts":
		return fTS, true
	case "session_id":
		return fSessionID, true
	case "seq":
		return fSeq, true
	case "op":
		return fOp, true
	case "phase":
		return fPhase, true
	case "span_id":
		return fSpanID, true
	case "parent_span_id":
		return fParentSpanID, true
	case "trace_id":
		return fTraceID, true
	case "data":
		return fData, true
	case "ok":
		return fOK, true
	case "duration_ms":
		return fDurationMS, true
	case "error_code":
		return fErrorCode, true
	case "error_type":
		return fErrorType, true
	case "error_message":
		return fErrorMessage, true
	case "error_retryable":
		return fErrorRetryable, true
	case "stdout":
		return fStdout, true
	case "stderr":
		return fStderr, true
	}
	return 0, false
}

// slot is where a known field's value sits in the input.
type slot struct {
	present    bool
	start, end int
}

// DecodeOptions controls the defaults the reference fills in.
type DecodeOptions struct {
	// Now supplies the default ts for events without one (the reference
	// uses the current UTC time). Nil means time.Now.
	Now func() time.Time
	// NewID supplies the default event_id (the reference uses uuid4).
	// Nil means uuid.NewRandom.
	NewID func() (uuid.UUID, error)
}

// Decode reads and validates one event from JSON: the body the Python
// HttpProxySink POSTs, or a canonical line (a trailing newline is fine).
// It accepts what the reference accepts for well-typed JSON and refuses the
// rest with a *FieldError naming the field (SPEC section 3). Unknown fields
// are ignored; a start event ignores the finish fields.
func Decode(b []byte) (Event, error) {
	var e Event
	err := DecodeOptions{}.DecodeInto(b, &e)
	return e, err
}

// DecodeInto is Decode with the given defaults, into e (which is reset).
func (o DecodeOptions) DecodeInto(b []byte, e *Event) error {
	*e = Event{}
	p := parser{buf: b}
	if c := p.peek(); c != '{' {
		if _, err := p.canonValue(nil); err != nil {
			return &FieldError{Type: "json_invalid", Msg: err.Error()}
		}
		return fieldErr("", "model_attributes_type", "an event must be a JSON object")
	}
	var slots [numFields]slot
	p.pos++
	p.depth = 1
	if p.peek() == '}' {
		p.pos++
	} else {
		for {
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
				// Canonicalize data in the same pass rather than twice.
				var canon []byte
				canon, err = p.canonObject(nil)
				e.Data = newData(canon)
			} else {
				err = p.skipValue()
			}
			if err != nil {
				// The scan cannot resume mid-value, so the first bad value
				// ends decoding.
				name := string(key)
				if known {
					name = fieldNames[f]
				}
				var se *syntaxError
				if errors.As(err, &se) {
					return &FieldError{Field: name, Type: "json_invalid", Msg: err.Error()}
				}
				return &FieldError{Field: name, Type: "value_error", Msg: err.Error()}
			}
			if known {
				slots[f] = slot{present: true, start: start, end: p.pos}
			}
			switch p.peek() {
			case ',':
				p.pos++
				continue
			case '}':
				p.pos++
			default:
				return &FieldError{Type: "json_invalid", Msg: p.fail("expected ',' or '}' in object").Error()}
			}
			break
		}
	}
	if err := p.finish(); err != nil {
		return &FieldError{Type: "json_invalid", Msg: err.Error()}
	}

	// The discriminator decides the variant first, as pydantic's tagged
	// union does.
	ph := slots[fPhase]
	if !ph.present {
		return fieldErr("", "union_tag_not_found", "phase: missing (must be \"start\" or \"finish\")")
	}
	switch v := b[ph.start:ph.end]; string(v) {
	case `"start"`:
		e.Phase = PhaseStart
	case `"finish"`:
		e.Phase = PhaseFinish
	default:
		return fieldErr("", "union_tag_invalid", "phase: must be \"start\" or \"finish\"")
	}
	d := decoder{buf: b, slots: &slots}
	var err error

	e.Version = 1
	if s := slots[fVersion]; s.present {
		if e.Version, err = d.int(fVersion); err != nil {
			return err
		}
	}
	if s := slots[fEventID]; s.present {
		if e.EventID, err = d.uuid(fEventID); err != nil {
			return err
		}
	} else {
		newID := o.NewID
		if newID == nil {
			newID = uuid.NewRandom
		}
		if e.EventID, err = newID(); err != nil {
			return fieldErr("event_id", "uuid_generation", "cannot generate a default event id: "+err.Error())
		}
	}
	if s := slots[fTS]; s.present {
		if e.TS, err = d.timestamp(fTS); err != nil {
			return err
		}
	} else {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		e.TS = TimestampFromTime(now())
	}
	if e.SessionID, err = d.uuid(fSessionID); err != nil {
		return err
	}
	if e.Seq, err = d.int(fSeq); err != nil {
		return err
	}
	opRaw, err := d.strBytes(fOp, "literal_error")
	if err != nil {
		return err
	}
	op, ok := internOp(opRaw)
	if !ok {
		return fieldErr("op", "literal_error", "not a sandbox operation: "+strconv.Quote(string(opRaw)))
	}
	e.Op = op
	if e.SpanID, err = d.str(fSpanID, "string_type"); err != nil {
		return err
	}
	if e.ParentSpanID, err = d.optStr(fParentSpanID, "string_type"); err != nil {
		return err
	}
	if e.TraceID, err = d.optStr(fTraceID, "string_type"); err != nil {
		return err
	}
	if s := slots[fData]; s.present {
		if b[s.start] != '{' {
			return fieldErr("data", "dict_type", "must be a JSON object")
		}
	}
	if e.Phase != PhaseFinish {
		return nil
	}

	if e.OK, err = d.bool(fOK); err != nil {
		return err
	}
	if e.DurationMS, err = d.float(fDurationMS); err != nil {
		return err
	}
	if s := slots[fErrorCode]; s.present && string(b[s.start:s.end]) != "null" {
		raw, err := d.strBytes(fErrorCode, "enum")
		if err != nil {
			return err
		}
		code, ok := internErrorCode(raw)
		if !ok {
			return fieldErr("error_code", "enum", "not a reference error code: "+strconv.Quote(string(raw)))
		}
		e.ErrorCode = &code
	}
	if e.ErrorType, err = d.optStr(fErrorType, "string_type"); err != nil {
		return err
	}
	if e.ErrorMessage, err = d.optStr(fErrorMessage, "string_type"); err != nil {
		return err
	}
	if s := slots[fErrorRetryable]; s.present && string(b[s.start:s.end]) != "null" {
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

// decoder reads typed values out of the slots found by DecodeInto.
type decoder struct {
	buf   []byte
	slots *[numFields]slot
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
	s := d.slots[f]
	if !s.present || string(d.buf[s.start:s.end]) == "null" {
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
	// pydantic takes a float with no fractional part as an int.
	fv, err := parseFloatTok(tok)
	if err != nil || fv != math.Trunc(fv) {
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
	tok, _, err := p.numberToken()
	if err != nil {
		return 0, fieldErr(name, "float_parsing", err.Error())
	}
	v, err := parseFloatTok(tok)
	if err != nil {
		return 0, fieldErr(name, "finite_number", "must be a finite number")
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
