package kafkaexportcheck

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
)

// checkKeyed refuses a signal that writes encoding, a known extension's
// (audit lines), in messages the producer does not place by session: with
// the contrib defaults (partition_traces_by_id, partition_logs_by_trace_id
// false) its messages have no key, and a round_robin or least_backup
// partitioner ignores the key. Either spreads one session's messages over
// the topic's partitions, so several central collectors write the session
// at once, each into its own file, out of order. A key taken from request
// metadata (message_key_from_metadata_key) is the user's choice.
func checkKeyed(id component.ID, signal, encoding string, cfg *kafkaexporter.Config) error {
	var errs []error
	key, keyed := "partition_logs_by_trace_id", cfg.PartitionLogsByTraceID || cfg.Logs.MessageKeyFromMetadataKey != ""
	if signal == "traces" {
		key, keyed = "partition_traces_by_id", cfg.PartitionTracesByID || cfg.Traces.MessageKeyFromMetadataKey != ""
	}
	if !keyed {
		errs = append(errs, fmt.Errorf("exporters::%s::%s: must be true when %s::encoding is %s "+
			"(without a key, the producer spreads a session's messages over the topic's partitions: "+
			"several central collectors write the session at once, out of order)", id, key, signal, encoding))
	}
	if p := keylessPartitioner(cfg.RecordPartitioner); p != "" {
		errs = append(errs, fmt.Errorf("exporters::%s::record_partitioner::%s: must not be set when %s::encoding is %s "+
			"(it ignores message keys, so a session's messages spread over the topic's partitions)", id, p, signal, encoding))
	}
	return errors.Join(errs...)
}

// keylessPartitioner names the configured partitioner that ignores message
// keys, if any.
func keylessPartitioner(p kafkaexporter.RecordPartitionerConfig) string {
	switch {
	case p.RoundRobin != nil:
		return "round_robin"
	case p.LeastBackup != nil:
		return "least_backup"
	}
	return ""
}
