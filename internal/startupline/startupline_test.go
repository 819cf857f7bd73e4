package startupline

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestPrinterPrintsOnceRunning: the line of the last configuration
// resolved is printed when the collector logs that it runs, once; nothing
// before.
func TestPrinterPrintsOnceRunning(t *testing.T) {
	var out strings.Builder
	p := New(&out)
	conv := p.ConverterFactory().Create(confmap.ConverterSettings{})
	core, _ := observer.New(zapcore.InfoLevel)
	logger := zap.New(core, p.LoggingOption())

	require.NoError(t, conv.Convert(context.Background(), conf(t, "service:\n  telemetry:\n    metrics:\n      level: none\n")))
	logger.Info("Starting extensions...")
	assert.Empty(t, out.String(), "printed before the collector runs")

	logger.Info(readyMessage)
	assert.Equal(t, "sandboxaudit: self-metrics off\n", out.String())
	logger.Info(readyMessage)
	assert.Equal(t, "sandboxaudit: self-metrics off\n", out.String(), "printed twice for one configuration")

	// A reload: a new configuration, a new line.
	require.NoError(t, conv.Convert(context.Background(), conf(t, "receivers:\n  sandboxaudit: {}\nservice:\n  telemetry:\n    metrics:\n      level: none\n  pipelines:\n    logs:\n      receivers: [sandboxaudit]\n")))
	logger.Info(readyMessage)
	assert.Equal(t, "sandboxaudit: self-metrics off\nsandboxaudit: intake events http://localhost:8088/v1/sandbox/events; self-metrics off\n", out.String())
}
