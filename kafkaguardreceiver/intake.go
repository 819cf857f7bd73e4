package kafkaguardreceiver

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
)

// checkAuditIntake refuses, for a signal read with the sandboxaudit_encoding
// extension, the two contrib defaults that leave gaps in an audit trail
// without a word: `initial_offset: latest` starts a group that has no
// commit (a new group, or one whose offsets expired) at the end of the
// topic, past the lines it already holds; `message_marking::after: false`
// commits a message before its lines are written, so a crash or a failed
// write loses them. It also refuses more than one message of a partition
// in flight (partition_processing independent with max_in_flight::records
// above 1): the receiver then runs a partition's messages side by side, and
// a session's later lines can reach the file before its earlier ones.
func checkAuditIntake(signal, encoding string, c *kafkareceiver.Config) error {
	if !sandboxauditencoding.Names(encoding) {
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
	if pp := c.PartitionProcessing; pp.Independent && pp.MaxInFlight.Records > 1 {
		errs = append(errs, fmt.Errorf("kafka receiver: partition_processing::max_in_flight::records: must be 1 when %s::encoding is %s, got %d "+
			"(more runs a partition's messages side by side: a session's later lines can be written before its earlier ones)",
			signal, encoding, pp.MaxInFlight.Records))
	}
	return errors.Join(errs...)
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
	if sandboxauditencoding.Names(own.Encoding) {
		return nil
	}
	for _, other := range []string{"logs", "traces", "metrics", "profiles"} {
		s := sections[other]
		if other == signal || !sandboxauditencoding.Names(s.Encoding) {
			continue
		}
		if topic, ok := sharedTopic(own, s); ok {
			return fmt.Errorf("kafka receiver: %s::encoding: %q reads topic %q, which %s reads with %s: "+
				"the topic's messages would be split between the two, and the ones read as %s refused and skipped",
				signal, own.Encoding, topic, other, s.Encoding, own.Encoding)
		}
	}
	return nil
}

// sharedTopic is a topic both a and b read. A signal whose topics are
// regexes (one starts with ^, as the receiver takes them) reads each topic
// one of them matches anywhere in its name and no exclude_topics entry
// matches; two regex signals share a topic when they list the same regex.
func sharedTopic(a, b kafkareceiver.TopicEncodingConfig) (string, bool) {
	switch {
	case !isRegex(b.Topics):
		return firstRead(a, b.Topics)
	case !isRegex(a.Topics):
		return firstRead(b, a.Topics)
	}
	for _, t := range a.Topics {
		if slices.Contains(b.Topics, t) {
			return t, true
		}
	}
	return "", false
}

// firstRead is the first of names that c reads.
func firstRead(c kafkareceiver.TopicEncodingConfig, names []string) (string, bool) {
	regex := isRegex(c.Topics)
	for _, name := range names {
		if regex && matchesAny(c.Topics, name) && !matchesAny(c.ExcludeTopics, name) ||
			!regex && slices.Contains(c.Topics, name) {
			return name, true
		}
	}
	return "", false
}

// isRegex reports whether the receiver takes topics as regexes.
func isRegex(topics []string) bool {
	return slices.ContainsFunc(topics, func(t string) bool { return strings.HasPrefix(t, "^") })
}

// matchesAny reports whether one of patterns matches name; one that does
// not compile is the Kafka client's to refuse at start.
func matchesAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		re, err := regexp.Compile(p)
		return err == nil && re.MatchString(name)
	})
}
