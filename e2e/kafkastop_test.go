package e2e

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStopEndsWhileKafkaIsDown: a Kafka edge whose broker died holds a
// request in its kafka exporter, which waits for the broker to return
// whatever its deadline; SIGTERM then still ends the collector, once the
// shutdown bound has passed, with exit 1 and a line saying why, instead
// of a collector that never stops. The event acknowledged before is in
// the edge's file.
func TestStopEndsWhileKafkaIsDown(t *testing.T) {
	requireE2E(t)
	k := edgeOnly(t)
	edge := k.startEdge(t)
	url := "http://" + k.edgeEvents + "/v1/sandbox/events"
	events := pythonSession("77777777-8888-4999-8aaa-bbbbbbbbbbbb", 1)
	status, body := postStatus(t, url, events[0])
	require.Equal(t, http.StatusOK, status, body)

	k.cluster.Close()
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		client := &http.Client{Timeout: 3 * time.Minute}
		if resp, err := client.Post(url, "application/json", strings.NewReader(events[1])); err == nil {
			_ = resp.Body.Close()
		}
	}()
	time.Sleep(2 * time.Second) // the request reaches the kafka exporter
	time.Sleep(time.Until(edge.readyAt.Add(signalGrace)))
	require.NoError(t, edge.cmd.Process.Signal(syscall.SIGTERM))
	const bound = 2 * time.Minute // the shutdown bound is 30s
	select {
	case <-edge.done:
	case <-time.After(bound):
		t.Fatalf("the edge still runs %s after SIGTERM, with the broker down", bound)
	}
	require.Error(t, edge.err, "the bound ends the process with exit 1")
	assert.Contains(t, string(mustRead(t, edge.log)), "otelcol-sandboxaudit: the shutdown has not finished after 30s")
	<-posted
	assert.Contains(t, string(mustRead(t, k.edgeRef)), `"seq":1,`)
}
