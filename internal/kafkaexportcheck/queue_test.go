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

// TestExporterRefusesAQueueInFrontOfAuditLines: the kafka exporter's
// sending_queue is on by default, in memory: it answers the client before
// Kafka has the lines, so a crash of the edge loses what it held, and a
// message Kafka refuses (too large) is dropped after the client was told
// it was taken. With sandboxaudit_encoding it is refused when the
// exporter is created, naming the key.
func TestExporterRefusesAQueueInFrontOfAuditLines(t *testing.T) {
	f, set := guardedFactory()

	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	cfg.Logs.Encoding = "sandboxaudit_encoding"
	cfg.PartitionLogsByTraceID = true
	_, err := f.CreateLogs(context.Background(), set, cfg)
	require.Error(t, err)
	assert.Equal(t, "exporters::kafka::sending_queue::enabled: must be false (or wait_for_result true) when logs::encoding is sandboxaudit_encoding "+
		"(the queue answers the client before Kafka has the lines: a crash loses them, and a refusal never reaches the client)", err.Error())

	cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	e, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Shutdown(context.Background()))

	// Other encodings keep the contrib default.
	cfg = f.CreateDefaultConfig().(*kafkaexporter.Config)
	e, err = f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Shutdown(context.Background()))
}

// TestExporterTakesAQueueThatWaitsForTheResult: with wait_for_result the
// queue answers the client only once the export is done, with its error,
// so a crash loses nothing that was answered: it is not refused.
func TestExporterTakesAQueueThatWaitsForTheResult(t *testing.T) {
	f, set := guardedFactory()

	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	cfg.Logs.Encoding = "sandboxaudit_encoding"
	cfg.PartitionLogsByTraceID = true
	cfg.QueueBatchConfig.Get().WaitForResult = true
	e, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Shutdown(context.Background()))
}
