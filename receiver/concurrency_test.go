package sandboxauditreceiver

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestConcurrentClients has 16 clients post 200 events each (100
// operations, starts and finishes in different batches, then a replay of
// their first batch) while the pairing table is smaller than the number of
// operations in flight: no event is lost, none is duplicated, and the
// table never holds more than max_pending starts.
func TestConcurrentClients(t *testing.T) {
	const (
		clients    = 16
		ops        = 100 // per client: 200 events
		perBatch   = 10
		maxPending = 64
	)
	logs := new(consumertest.LogsSink)
	traces := new(consumertest.TracesSink)
	tr := startReceiver(t, logs, traces, func(c *Config) { c.MaxPending = maxPending })

	var maxSeen atomic.Int64
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if n := int64(tr.r.pairs.Len()); n > maxSeen.Load() {
				maxSeen.Store(n)
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan string, clients*20)
	for c := range clients {
		session := uuid.NewSHA1(testSession, []byte{byte(c)})
		wg.Go(func() {
			var first string
			// Batch i holds the starts of operations [i*10, i*10+10) and the
			// finishes of the batch before.
			for i := 0; i <= ops/perBatch; i++ {
				var b strings.Builder
				for n := i * perBatch; n < (i+1)*perBatch && n < ops; n++ {
					b.WriteString(sessionStartJSON(session, n) + "\n")
				}
				for n := (i - 1) * perBatch; n >= 0 && n < i*perBatch; n++ {
					b.WriteString(sessionFinishJSON(session, n) + "\n")
				}
				if i == 0 {
					first = b.String()
				}
				if status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(b.String())); status != http.StatusOK {
					errs <- body
				}
			}
			// The at-least-once replay of an exporter.
			status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(first))
			if status != http.StatusOK || !strings.Contains(body, `"accepted":0`) {
				errs <- "replay: " + body
			}
		})
	}
	wg.Wait()
	close(stopWatch)
	<-watched
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// Every event exactly once in the audit trail.
	bodies := logBodies(logs)
	require.Len(t, bodies, clients*ops*2)
	ids := make(map[string]bool, len(bodies))
	for _, b := range bodies {
		var ev struct {
			EventID string `json:"event_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(b), &ev))
		require.False(t, ids[ev.EventID], "duplicate %s", ev.EventID)
		ids[ev.EventID] = true
	}

	// Bounded memory.
	assert.LessOrEqual(t, maxSeen.Load(), int64(maxPending))
	assert.LessOrEqual(t, tr.r.pairs.Len(), maxPending)

	// Every event is in exactly one span: a complete span holds two, an
	// incomplete start or a start-missing finish one. What is still
	// pending holds the rest.
	events := 0
	for _, s := range allSpans(traces) {
		events += 2
		if hasTrueAttr(s, "sandbox.incomplete") || hasTrueAttr(s, "sandbox.event.start_missing") {
			events--
		}
	}
	assert.Equal(t, clients*ops*2, events+tr.r.pairs.Len())
}
