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

// TestExporterRefusesAuditLinesWithoutASessionKey: with the contrib
// defaults (partition_traces_by_id and partition_logs_by_trace_id false)
// the exporter writes audit lines in messages without a key, and the
// producer spreads one session's messages over every partition of the
// topic: several central collectors then write the session at once, out
// of order, each into its own file. round_robin and least_backup
// partitioners ignore the key. Each is refused when the exporter is
// created, naming the key; a key from request metadata is the user's
// choice and is taken.
func TestExporterRefusesAuditLinesWithoutASessionKey(t *testing.T) {
	f, set := guardedFactory()
	keyed := func() *kafkaexporter.Config {
		cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
		cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		cfg.Traces = kafkaexporter.SignalConfig{Topic: "sandbox-audit", Encoding: "sandboxaudit_encoding"}
		cfg.Logs = kafkaexporter.SignalConfig{Topic: "sandbox-audit", Encoding: "sandboxaudit_encoding"}
		cfg.PartitionTracesByID = true
		cfg.PartitionLogsByTraceID = true
		return cfg
	}
	const spread = "without a key, the producer spreads a session's messages over the topic's partitions"
	for _, c := range []struct {
		name   string
		signal string
		set    func(*kafkaexporter.Config)
		want   string
	}{
		{"traces unkeyed", "traces", func(c *kafkaexporter.Config) { c.PartitionTracesByID = false },
			"exporters::kafka::partition_traces_by_id: must be true when traces::encoding is sandboxaudit_encoding (" + spread},
		{"logs unkeyed", "logs", func(c *kafkaexporter.Config) { c.PartitionLogsByTraceID = false },
			"exporters::kafka::partition_logs_by_trace_id: must be true when logs::encoding is sandboxaudit_encoding (" + spread},
		{"logs by resource", "logs", func(c *kafkaexporter.Config) {
			c.PartitionLogsByTraceID = false
			c.PartitionLogsByResourceAttributes = true
		}, "exporters::kafka::partition_logs_by_trace_id: must be true when logs::encoding is sandboxaudit_encoding ("},
		{"round_robin", "traces", func(c *kafkaexporter.Config) {
			c.RecordPartitioner = kafkaexporter.RecordPartitionerConfig{RoundRobin: &struct{}{}}
		}, "exporters::kafka::record_partitioner::round_robin: must not be set when traces::encoding is sandboxaudit_encoding (it ignores message keys"},
		{"least_backup", "logs", func(c *kafkaexporter.Config) {
			c.RecordPartitioner = kafkaexporter.RecordPartitionerConfig{LeastBackup: &struct{}{}}
		}, "exporters::kafka::record_partitioner::least_backup: must not be set when logs::encoding is sandboxaudit_encoding (it ignores message keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := keyed()
			c.set(cfg)
			_, err := create(f, set, c.signal, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	for _, ok := range []func(*kafkaexporter.Config){
		func(*kafkaexporter.Config) {},
		func(c *kafkaexporter.Config) {
			c.PartitionTracesByID, c.PartitionLogsByTraceID = false, false
			c.Traces.MessageKeyFromMetadataKey, c.Logs.MessageKeyFromMetadataKey = "tenant", "tenant"
		},
		func(c *kafkaexporter.Config) {
			c.RecordPartitioner = kafkaexporter.RecordPartitionerConfig{StickyKey: &kafkaexporter.StickyKeyPartitionerConfig{Hasher: "murmur2"}}
		},
	} {
		cfg := keyed()
		ok(cfg)
		for _, signal := range []string{"traces", "logs"} {
			e, err := create(f, set, signal, cfg)
			require.NoError(t, err, signal)
			require.NoError(t, e.Shutdown(context.Background()))
		}
	}
	// Other encodings keep the contrib defaults.
	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	e, err := f.CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Shutdown(context.Background()))
}
