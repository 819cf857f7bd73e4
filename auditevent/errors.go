package auditevent

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
