package logfield

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

func TestEventField(t *testing.T) {
	for want, err := range map[string]error{
		"op: literal_error":             &auditevent.FieldError{Field: "op", Type: "literal_error", Msg: `not a sandbox operation: "secret"`},
		"(unknown field): json_invalid": &auditevent.FieldError{Field: "secret_key", Type: "json_invalid"},
		"body: model_attributes_type":   fmt.Errorf("wrapped: %w", &auditevent.FieldError{Type: "model_attributes_type"}),
		"undecodable record":            fmt.Errorf("other secret"),
	} {
		f := EventField("first", err)
		assert.Equal(t, zapcore.StringType, f.Type)
		assert.Equal(t, want, f.String)
		assert.NotContains(t, f.String, "secret")
	}
	assert.Equal(t, zap.Skip(), EventField("first", nil))
}

func TestSpanAttr(t *testing.T) {
	f := SpanAttr("last", fmt.Errorf("span: %w", &spanmap.AttrError{Attr: "sandbox.operation", Msg: "missing"}))
	assert.Equal(t, "sandbox.operation: missing", f.String)
	assert.Equal(t, "unknown error", SpanAttr("last", fmt.Errorf("x")).String)
	assert.Equal(t, zap.Skip(), SpanAttr("last", nil))
}
