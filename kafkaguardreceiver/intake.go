package kafkaguardreceiver

import (
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
)

// checkAuditIntake refuses, for a signal read with the sandboxaudit_encoding
// extension, the two contrib defaults that leave gaps in an audit trail
// without a word: `initial_offset: latest` starts a group that has no
// commit (a new group, or one whose offsets expired) at the end of the
// topic, past the lines it already holds; `message_marking::after: false`
// commits a message before its lines are written, so a crash or a failed
// write loses them.
func checkAuditIntake(signal, encoding string, c *kafkareceiver.Config) error {
	if !isAuditEncoding(encoding) {
		return nil
	}
	var errs []error
	if c.ConsumerConfig.InitialOffset != "earliest" {
		errs = append(errs, fmt.Errorf("kafka receiver: initial_offset: must be earliest when %s::encoding is %s (%q starts a group without a commit past what the topic holds)",
			signal, encoding, c.ConsumerConfig.InitialOffset))
	}
	if !c.MessageMarking.After {
		errs = append(errs, fmt.Errorf("kafka receiver: message_marking::after: must be true when %s::encoding is %s (false commits a message before its lines are written: a crash or a failed write loses them)",
			signal, encoding))
	}
	return errors.Join(errs...)
}

// isAuditEncoding reports whether encoding names a sandboxaudit_encoding
// extension, under any name.
func isAuditEncoding(encoding string) bool {
	var id component.ID
	return id.UnmarshalText([]byte(encoding)) == nil && id.Type() == sandboxauditencoding.NewFactory().Type()
}

// checkSharedTopics refuses a signal that reads, with another encoding, a
// topic some other signal reads with sandboxaudit_encoding: each signal is
// a member of the same group, so the topic's partitions are split between
// them, and the messages the other member gets are refused and skipped.
func checkSharedTopics(signal string, c *kafkareceiver.Config) error {
	sections := map[string]kafkareceiver.TopicEncodingConfig{
		"logs": c.Logs, "traces": c.Traces, "metrics": c.Metrics, "profiles": c.Profiles,
	}
	own := sections[signal]
	if isAuditEncoding(own.Encoding) {
		return nil
	}
	for _, other := range []string{"logs", "traces", "metrics", "profiles"} {
		s := sections[other]
		if other == signal || !isAuditEncoding(s.Encoding) {
			continue
		}
		for _, topic := range own.Topics {
			if slices.Contains(s.Topics, topic) {
				return fmt.Errorf("kafka receiver: %s::encoding: %q reads topic %q, which %s reads with %s: "+
					"the topic's messages would be split between the two, and the ones read as %s refused and skipped",
					signal, own.Encoding, topic, other, s.Encoding, own.Encoding)
			}
		}
	}
	return nil
}
