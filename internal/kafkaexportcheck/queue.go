package kafkaexportcheck

import (
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
)

// checkQueue refuses the contrib default of an in-memory sending_queue for
// a signal that writes encoding, a known extension's (audit lines): the
// queue answers the client before Kafka has the lines, so a crash of the
// collector loses what it held, and a message Kafka refuses (too large)
// is dropped after the client was told it was taken. With wait_for_result
// the client waits for the export's result, so the queue is taken.
func checkQueue(id component.ID, signal string, encoding string, cfg *kafkaexporter.Config) error {
	if !cfg.QueueBatchConfig.HasValue() || cfg.QueueBatchConfig.Get().WaitForResult {
		return nil
	}
	return fmt.Errorf("exporters::%s::sending_queue::enabled: must be false (or wait_for_result true) when %s::encoding is %s "+
		"(the queue answers the client before Kafka has the lines: a crash loses them, and a refusal never reaches the client)",
		id, signal, encoding)
}
