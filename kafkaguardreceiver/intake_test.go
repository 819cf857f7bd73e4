package kafkaguardreceiver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// TestKafkaReceiverRefusesAnAuditIntakeThatSkipsMessages: read with
// sandboxaudit_encoding, the receiver's defaults leave gaps in the trail
// without a word: `initial_offset: latest` starts a group that has no
// commit at the end of the topic, past the lines it holds, and
// `message_marking::after: false` commits a message before its lines are
// written, so a crash or a failed write loses them. Both are refused when
// the receiver is created, naming the key; other encodings keep the
// contrib defaults.
func TestKafkaReceiverRefusesAnAuditIntakeThatSkipsMessages(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*kafkareceiver.Config)
		want string
	}{
		{"the defaults", func(*kafkareceiver.Config) {}, "kafka receiver: initial_offset: must be earliest when logs::encoding is sandboxaudit_encoding"},
		{"initial_offset latest", func(c *kafkareceiver.Config) { c.MessageMarking.After = true },
			"kafka receiver: initial_offset: must be earliest when logs::encoding is sandboxaudit_encoding"},
		{"message_marking::after false", func(c *kafkareceiver.Config) { c.ConsumerConfig.InitialOffset = "earliest" },
			"kafka receiver: message_marking::after: must be true when logs::encoding is sandboxaudit_encoding"},
		{"a named extension", func(c *kafkareceiver.Config) { c.Logs.Encoding = "sandboxaudit_encoding/central" },
			"kafka receiver: initial_offset: must be earliest when logs::encoding is sandboxaudit_encoding/central"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
			cfg.Logs.Encoding = "sandboxaudit_encoding"
			c.set(cfg)
			_, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}

	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.Logs.Encoding = "sandboxaudit_encoding"
	cfg.ConsumerConfig.InitialOffset = "earliest"
	cfg.MessageMarking.After = true
	r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(context.Background()))

	// Another encoding, or a signal no pipeline reads with the extension.
	cfg = f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.Traces.Encoding = "sandboxaudit_encoding"
	r, err = f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(context.Background()))
}

// TestKafkaReceiverRefusesAnotherEncodingOnTheAuditTopic: a central whose
// traces read sandbox-audit with the default otlp_proto beside logs read
// with sandboxaudit_encoding runs two members of one group on the topic:
// the messages given to the traces member are refused and skipped as bad
// OTLP, and their lines never reach the file. It is refused when the
// receiver is created, naming the key.
func TestKafkaReceiverRefusesAnotherEncodingOnTheAuditTopic(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.ConsumerConfig.InitialOffset = "earliest"
	cfg.MessageMarking.After = true
	cfg.Logs = kafkareceiver.TopicEncodingConfig{Topics: []string{"sandbox-audit"}, Encoding: "sandboxaudit_encoding"}
	cfg.Traces.Topics = []string{"other", "sandbox-audit"}
	_, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kafka receiver: traces::encoding: "otlp_proto" reads topic "sandbox-audit", which logs reads with sandboxaudit_encoding`)

	cfg.Traces.Topics = []string{"other"}
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(context.Background()))
}

// TestKafkaReceiverRefusesAnotherEncodingOnTheAuditTopicByRegex: a signal
// whose topics are regexes (one starts with ^) reads every topic one of
// them matches, the audit topic included unless exclude_topics leaves it
// out; the messages it gets of the audit topic are refused and skipped.
func TestKafkaReceiverRefusesAnotherEncodingOnTheAuditTopicByRegex(t *testing.T) {
	for _, c := range []struct {
		name          string
		audit, traces []string
		excludeTraces []string
		want          string
	}{
		{"the other signal's regex", []string{"sandbox-audit"}, []string{"^sandbox-.*"}, nil, `reads topic "sandbox-audit"`},
		{"the audit signal's regex", []string{"^sandbox-.*"}, []string{"sandbox-audit"}, nil, `reads topic "sandbox-audit"`},
		{"a regex left unanchored", []string{"sandbox-audit"}, []string{"^otlp_spans$", "audit"}, nil, `reads topic "sandbox-audit"`},
		{"excluded", []string{"sandbox-audit"}, []string{"^sandbox-.*"}, []string{"^sandbox-audit$"}, ""},
		{"no match", []string{"sandbox-audit"}, []string{"^otlp_.*"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
			cfg.ConsumerConfig.InitialOffset = "earliest"
			cfg.MessageMarking.After = true
			cfg.Logs = kafkareceiver.TopicEncodingConfig{Topics: c.audit, Encoding: "sandboxaudit_encoding"}
			cfg.Traces.Topics = c.traces
			cfg.Traces.ExcludeTopics = c.excludeTraces
			r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
			if c.want == "" {
				require.NoError(t, err)
				require.NoError(t, r.Shutdown(context.Background()))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), `kafka receiver: traces::encoding: "otlp_proto" `+c.want)
		})
	}
}

// TestKafkaReceiverRefusesAnAuditIntakeThatReordersAPartition: with
// partition_processing independent and max_in_flight::records above 1, the
// receiver runs a partition's messages side by side, so a later message of
// a session can be written before an earlier one (seq 2 before seq 1),
// where docs/scaling.md promises a session's lines in the order its edge
// produced them. It is refused when the receiver is created, naming the
// key; one record in flight, or records above 1 without independent (which
// the receiver then ignores), is taken.
func TestKafkaReceiverRefusesAnAuditIntakeThatReordersAPartition(t *testing.T) {
	f := NewFactory()
	for _, c := range []struct {
		independent bool
		records     int
		want        string
	}{
		{true, 4, "kafka receiver: partition_processing::max_in_flight::records: must be 1 when logs::encoding is sandboxaudit_encoding, got 4"},
		{true, 1, ""},
		{false, 4, ""},
	} {
		cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
		cfg.Logs.Encoding = "sandboxaudit_encoding"
		cfg.ConsumerConfig.InitialOffset = "earliest"
		cfg.MessageMarking.After = true
		cfg.PartitionProcessing.Independent = c.independent
		cfg.PartitionProcessing.MaxInFlight.Records = c.records
		r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
		if c.want == "" {
			require.NoError(t, err, "%+v", c)
			require.NoError(t, r.Shutdown(context.Background()))
			continue
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}
