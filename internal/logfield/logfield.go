// Package logfield renders why a span or a log record did not become an
// audit event as a log field that names the attribute or event field at
// fault and the problem, never a value: spans and records may carry exec
// output and file content. The exporter and the sandboxaudit_encoding
// extension log their skips through it.
package logfield

import (
	"errors"

	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// SpanAttr renders a span mapping error (*spanmap.AttrError) as the
// attribute and its problem; spanmap's messages quote no value. A nil
// error is no field.
func SpanAttr(key string, err error) zap.Field {
	if err == nil {
		return zap.Skip()
	}
	return zap.String(key, SpanAttrText(err))
}

// SpanAttrText is SpanAttr's text, for an error answered to a client.
func SpanAttrText(err error) string {
	var ae *spanmap.AttrError
	if errors.As(err, &ae) {
		// A size carries numbers only, never the attribute's text.
		if tl, ok := errors.AsType[*auditevent.TooLongError](ae.Err); ok {
			return ae.Attr + ": " + tl.Error()
		}
		return ae.Attr + ": " + ae.Msg
	}
	return "unknown error"
}

// EventField renders an event decode error (*auditevent.FieldError) as the
// field and the error type. A field the event does not have is an unknown
// key of the input, which is input text, so it is not named. A nil error is
// no field.
func EventField(key string, err error) zap.Field {
	if err == nil {
		return zap.Skip()
	}
	return zap.String(key, EventFieldText(err))
}

// EventFieldText is EventField's text, for an error answered to a client.
func EventFieldText(err error) string {
	if tl, ok := errors.AsType[*auditevent.TooLongError](err); ok {
		return tl.Error() // a field name and numbers only
	}
	var fe *auditevent.FieldError
	if !errors.As(err, &fe) {
		return "undecodable record"
	}
	field := fe.Field
	switch {
	case field == "":
		field = "body"
	case !auditevent.IsField(field):
		field = "(unknown field)"
	}
	return field + ": " + fe.Type
}
