package logfield

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
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

func TestStatsLogOneLineEachAndNoValues(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(core)
	SpanStats(logger, spanmap.Stats{Spans: 3, Events: 2})
	RecordStats(logger, logmap.Stats{Records: 3, Events: 3})
	SeqEvictions(logger, 0)
	assert.Zero(t, logs.Len(), "nothing skipped, nothing logged")

	bad := &auditevent.FieldError{Field: "op", Type: "literal_error", Msg: `not a sandbox operation: "secret"`}
	attr := &spanmap.AttrError{Attr: "sandbox.exec.stdout_bytes", Msg: "output dropped"}
	SpanStats(logger, spanmap.Stats{Invalid: 2, FirstInvalid: attr, LastInvalid: attr, Ignored: 1, LastIgnored: attr})
	RecordStats(logger, logmap.Stats{Invalid: 2, FirstInvalid: bad, LastInvalid: bad, Dropped: 1, LastDropped: attr})
	SeqEvictions(logger, 4)
	var levels []zapcore.Level
	for _, e := range logs.All() {
		levels = append(levels, e.Level)
		for _, f := range e.Context {
			assert.NotContains(t, f.String, "secret")
		}
	}
	assert.Equal(t, []zapcore.Level{zapcore.WarnLevel, zapcore.DebugLevel, zapcore.WarnLevel, zapcore.DebugLevel, zapcore.WarnLevel}, levels)
	assert.Equal(t, "op: literal_error", logs.All()[2].ContextMap()["first"])
	assert.Equal(t, int64(4), logs.All()[4].ContextMap()["sessions"])
}
