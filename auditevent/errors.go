package auditevent

import "fmt"

// FieldError is a validation failure of one event field. Field is the
// field's name as in the JSON (empty for the body as a whole); Type is the
// pydantic error type the reference reports for the same input, so callers
// and tests can compare with the conformance vectors' loc and error.
type FieldError struct {
	Field string
	Type  string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func fieldErr(field, typ, msg string) *FieldError {
	return &FieldError{Field: field, Type: typ, Msg: msg}
}

// TooLongError is an event, or its data, whose canonical line would pass a
// limit. Field names the field that does, when known.
type TooLongError struct {
	Field string
	Size  int // the line's bytes; 0 when counting stopped at the limit
	Limit int
}

func (e *TooLongError) Error() string {
	msg := fmt.Sprintf("the event's line would be over max_line_bytes (%d bytes)", e.Limit)
	if e.Size > 0 {
		msg = fmt.Sprintf("the event's line would be %d bytes, over max_line_bytes (%d bytes)", e.Size, e.Limit)
	}
	if e.Field != "" {
		msg = e.Field + ": " + msg + "; send it smaller"
	}
	return msg
}

// DepthError is JSON nested deeper than the decoder takes.
type DepthError struct {
	Off int // byte offset of the bracket past the limit
	Max int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nesting depth over %d levels at byte %d; nest objects and arrays at most %d deep", e.Max, e.Off, e.Max)
}
