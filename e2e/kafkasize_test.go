package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestKafkaEdgeAnswers413ForAMessageOverTheBrokerLimit: at a Kafka edge,
// an event whose message the broker refuses as too large is answered 413,
// which clients do not retry, rather than a 500, which the HTTP sinks
// retry for ever; the events around it are taken.
func TestKafkaEdgeAnswers413ForAMessageOverTheBrokerLimit(t *testing.T) {
	requireE2E(t)
	k := edgeOnly(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "4000"}))
	k.startEdge(t)
	url := "http://" + k.edgeEvents + "/v1/sandbox/events"

	small := pythonSession("55555555-6666-4777-8888-999999999999", 1)
	status, body := postStatus(t, url, small[0])
	require.Equal(t, http.StatusOK, status, body)

	big := strings.Replace(pythonSession("66666666-7777-4888-8999-aaaaaaaaaaaa", 1)[0],
		`"path":"/workspace/a.txt"`, `"path":"/workspace/`+strings.Repeat("a", 6000)+`"`, 1)
	for range 2 { // the retry gets the same answer
		status, body = postStatus(t, url, big)
		require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
		assert.Contains(t, body, "Kafka message size limit")
	}
	status, body = postStatus(t, url, small[1])
	require.Equal(t, http.StatusOK, status, body)
}

// edgeOnly is a kfake broker, with the topic in one partition, and the
// addresses of an edge collector (kafka-edge.yaml) for it; no central.
func edgeOnly(t *testing.T, opts ...kfake.Opt) *kafkaTier {
	t.Helper()
	cluster, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, kafkaTopic)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	return &kafkaTier{cluster: cluster, brokers: cluster.ListenAddrs()[0], edgeDir: filepath.Join(dir, "edge"),
		edgeOTLP: addrs[0], edgeEvents: addrs[1], edgeRef: filepath.Join(dir, "edge", "reference", "events.jsonl")}
}

// postStatus posts one JSON event and returns the status and body.
func postStatus(t *testing.T, url, event string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(url, "application/json", strings.NewReader(event))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
