package kafkaexportcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
)

// TestExporterRefusesAnotherEncodingOnTheAuditTopic: an edge that sets
// logs to sandboxaudit_encoding on sandbox-audit and forgets the traces
// encoding writes OTLP protobuf to the same topic; the central collector
// refuses each of those messages as a bad line and skips it, so every
// span's lines are lost while the edge answers success. It is refused when
// the exporter is created, naming the key.
func TestExporterRefusesAnotherEncodingOnTheAuditTopic(t *testing.T) {
	f, set := guardedFactory()

	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	cfg.Logs = kafkaexporter.SignalConfig{Topic: "sandbox-audit", Encoding: "sandboxaudit_encoding"}
	cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.PartitionTracesByID, cfg.PartitionLogsByTraceID = true, true
	cfg.Traces.Topic = "sandbox-audit" // encoding left at otlp_proto
	_, err := f.CreateTraces(context.Background(), set, cfg)
	require.Error(t, err)
	assert.Equal(t, `exporters::kafka::traces::encoding: "otlp_proto" writes to topic "sandbox-audit", where logs writes sandboxaudit_encoding lines: a collector reading the topic with the extension refuses every such message`, err.Error())

	// The audit signal itself, and each signal on its own topic, are fine.
	e, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Shutdown(context.Background()))
	cfg.Traces.Topic = "otlp_spans"
	tr, err := f.CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Shutdown(context.Background()))

	// Two audit signals on one topic are the documented edge.
	cfg.Traces = kafkaexporter.SignalConfig{Topic: "sandbox-audit", Encoding: "sandboxaudit_encoding/edge"}
	tr, err = f.CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Shutdown(context.Background()))
}
