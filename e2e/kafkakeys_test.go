package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// pythonSession returns what the Python HttpProxySink posts for ops read
// operations of session: a start and a finish each, with the SDK's own span
// ids and no trace id.
func pythonSession(session string, ops int) []string {
	const start = `{"data":{"path":"/workspace/a.txt"},"event_id":"%s","op":"read","parent_span_id":null,"phase":"start","seq":%d,"session_id":"%s","span_id":"%s","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`
	const finish = `{"data":{"path":"/workspace/a.txt"},"duration_ms":2.5,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"%s","ok":true,"op":"read","parent_span_id":null,"phase":"finish","seq":%d,"session_id":"%s","span_id":"%s","stderr":null,"stdout":null,"trace_id":null,"ts":"2026-03-14T15:09:26.538397Z","version":1}`
	id := func(name string) string { return uuid.NewSHA1(uuid.NameSpaceOID, []byte(session+"/"+name)).String() }
	var evs []string
	for i := range ops {
		span := fmt.Sprintf("sandbox_op_%032x", i+1)
		evs = append(evs,
			fmt.Sprintf(start, id(span+"/start"), 2*i+1, session, span),
			fmt.Sprintf(finish, id(span+"/finish"), 2*i+2, session, span))
	}
	return evs
}

// topicLines reads the topic from the start of every partition until it
// has seen every line of want, and returns the records read.
func topicLines(t *testing.T, brokers string, want map[string]int) []*kgo.Record {
	t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := range int32(kafkaPartitions) {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{kafkaTopic: parts}))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	missing := make(map[string]bool, len(want))
	for l := range want {
		missing[l] = true
	}
	var records []*kgo.Record
	for len(missing) > 0 {
		fetches := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "%d lines not in the topic after %s", len(missing), deliveryTimeout)
		require.Empty(t, fetches.Errors())
		for _, r := range fetches.Records() {
			records = append(records, r)
			for l := range strings.SplitSeq(strings.TrimSuffix(string(r.Value), "\n"), "\n") {
				delete(missing, l)
			}
		}
	}
	return records
}

// requireSessionsKeyed requires every message in records to be keyed by the
// trace id of its lines' spans, and each session to sit in one partition:
// what keeps a session's lines in order from edge to central. keys gives the
// expected key of some sessions, spelled out independently of spanmap.
func requireSessionsKeyed(t *testing.T, records []*kgo.Record, keys map[string]string) {
	t.Helper()
	partitions := map[string]map[int32]bool{}
	for _, r := range records {
		if len(r.Value) == 0 {
			continue // a batch without sandbox spans
		}
		require.NotEmpty(t, r.Key, "a message without a key: %.200s", r.Value)
		for l := range strings.SplitSeq(strings.TrimSuffix(string(r.Value), "\n"), "\n") {
			e, err := auditevent.Decode([]byte(l))
			require.NoError(t, err)
			s := e.SessionID.String()
			trace, _ := spanmap.EventTraceID(&e)
			assert.Equal(t, trace.String(), string(r.Key), "key of a message with a line of session %s", s)
			if want, ok := keys[s]; ok {
				assert.Equal(t, want, string(r.Key), "key of a message of session %s", s)
			}
			if partitions[s] == nil {
				partitions[s] = map[int32]bool{}
			}
			partitions[s][r.Partition] = true
		}
	}
	for s := range keys {
		require.Contains(t, partitions, s)
	}
	for s, ps := range partitions {
		assert.Len(t, ps, 1, "session %s spread over partitions %v", s, ps)
	}
}

// pythonSessionsOverKafka posts two Python sessions' events to the edge's
// sandboxaudit receiver, one per request as HttpProxySink does, and returns
// the expected message key of each session: its UUID as a trace id.
func pythonSessionsOverKafka(t *testing.T, k *kafkaTier) (map[string]string, int) {
	t.Helper()
	keys := map[string]string{}
	posted := 0
	for _, s := range []string{"44444444-5555-4666-8777-888888888888", "a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3"} {
		for _, ev := range pythonSession(s, 3) {
			postEvent(t, "http://"+k.edgeEvents+"/v1/sandbox/events", ev)
			posted++
		}
		keys[s] = strings.ReplaceAll(s, "-", "")
	}
	return keys, posted
}
