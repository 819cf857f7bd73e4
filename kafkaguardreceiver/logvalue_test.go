package kafkaguardreceiver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// TestKafkaReceiverNeverLogsAMessageValue: at debug level the contrib
// receiver logs every message's value, which holds exec output and file
// content, or whatever a foreign producer wrote; the entry is left out,
// and the receiver's other debug entries stay.
func TestKafkaReceiverNeverLogsAMessageValue(t *testing.T) {
	const secret = "s3cr3t-token-do-not-log"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "sandbox-audit"))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	produce(t, cluster.ListenAddrs(), `{"note":"`+secret+`"}`, validLine)

	core, logs := observer.New(zapcore.DebugLevel)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.ClientConfig.Brokers = cluster.ListenAddrs()
	cfg.Logs = kafkareceiver.TopicEncodingConfig{Topics: []string{"sandbox-audit"}, Encoding: "sandboxaudit_encoding"}
	cfg.ConsumerConfig.InitialOffset = "earliest"
	cfg.MessageMarking = kafkareceiver.MessageMarking{After: true, OnPermanentError: true}
	set := receivertest.NewNopSettings(f.Type())
	set.Logger = zap.New(core)
	sink := new(consumertest.LogsSink)
	r, err := f.CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	host := hostWith{Host: componenttest.NewNopHost(), ids: []component.ID{component.MustNewID("sandboxaudit_encoding")}}
	require.NoError(t, r.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	deadline := time.Now().Add(30 * time.Second)
	for sink.LogRecordCount() == 0 {
		if !time.Now().Before(deadline) {
			for _, e := range logs.All() {
				t.Log(e.Message, e.ContextMap())
			}
			t.Fatal("the valid message was not consumed in 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	debug := 0
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		assert.NotContains(t, line, secret)
		assert.NotContains(t, line, "/workspace/a.txt", "a valid line's value reached the log")
		if e.Level == zapcore.DebugLevel {
			debug++
		}
	}
	assert.Positive(t, debug, "the receiver's other debug entries")
}

// validLine is one canonical audit line.
const validLine = `{"data":{"path":"/workspace/a.txt"},"event_id":"7d4c1b2a-0000-4000-8000-000000000001","op":"read","parent_span_id":null,"phase":"start","seq":1,"session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`

func produce(t *testing.T, brokers []string, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "sandbox-audit", Value: []byte(v)}).FirstErr())
	}
}
