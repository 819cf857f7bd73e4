package sandboxauditreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// canonLines is each line of an ndjson body as the canonical text a log
// record's body carries.
func canonLines(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		out = append(out, canonical(t, line))
	}
	return out
}

// ackOf parses the event intake's success body.
func ackOf(t *testing.T, body string) (accepted, duplicates int) {
	t.Helper()
	var ack struct{ Accepted, Duplicates int }
	require.NoError(t, json.Unmarshal([]byte(body), &ack), body)
	return ack.Accepted, ack.Duplicates
}

// TestLargeBatchIsDeliveredInPieces: an ndjson body of more than
// deliverPiece events reaches the logs pipeline in order, in calls of at
// most deliverPiece events, and is acknowledged as one batch.
func TestLargeBatchIsDeliveredInPieces(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	const n = 2*deliverPiece + 5
	body := ndjsonBody("pieces", n)
	status, _, answer := post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, http.StatusOK, status, answer)
	accepted, dups := ackOf(t, answer)
	assert.Equal(t, n, accepted)
	assert.Zero(t, dups)

	var sizes []int
	for _, ld := range logs.AllLogs() {
		sizes = append(sizes, ld.LogRecordCount())
	}
	assert.Equal(t, []int{deliverPiece, deliverPiece, 5}, sizes)
	want := canonLines(t, body)
	require.Len(t, want, n)
	assert.Equal(t, want, logBodies(logs), "every event, in the body's order")
}

// refuseCall is a logs consumer that refuses its call number refuse
// (counting from 1) with err and passes the others to the sink.
type refuseCall struct {
	consumertest.LogsSink
	calls  atomic.Int32
	refuse int32
	err    error
}

func (c *refuseCall) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if c.calls.Add(1) == c.refuse {
		return c.err
	}
	return c.LogsSink.ConsumeLogs(ctx, ld)
}

func (*refuseCall) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

// TestRefusedPieceKeepsEarlierPiecesOnce: when the pipeline refuses the
// second piece, the client gets the refusal; the first piece stays
// delivered, and the client's retry of the whole body delivers the rest
// and reports the first piece as duplicates. Every event ends up in the
// pipeline exactly once.
func TestRefusedPieceKeepsEarlierPiecesOnce(t *testing.T) {
	logs := &refuseCall{refuse: 2, err: consumererror.NewRetryableError(assert.AnError)}
	tr := startReceiver(t, logs, nil)
	const n = deliverPiece + 100
	body := ndjsonBody("refused", n)

	status, _, answer := post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, http.StatusServiceUnavailable, status, answer)
	assert.Equal(t, deliverPiece, logs.LogRecordCount(), "the piece before the refusal")

	status, _, answer = post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, http.StatusOK, status, answer)
	accepted, dups := ackOf(t, answer)
	assert.Equal(t, n-deliverPiece, accepted)
	assert.Equal(t, deliverPiece, dups)
	assert.Equal(t, canonLines(t, body), logBodies(&logs.LogsSink), "every event once, in order")
}

// TestRefusedPieceCountsEveryEvent: when the pipeline refuses the second
// of three pieces, every event of the batch is counted once: the first
// piece as accepted, the refused piece and the one never handed on as
// refused (the client was told the batch was). Also through the large-body
// path, whose later lines are not decoded when the refusal comes.
func TestRefusedPieceCountsEveryEvent(t *testing.T) {
	const n = 2*deliverPiece + 5
	tel := postToRefusing(t, 2, consumererror.NewRetryableError(assert.AnError),
		ndjsonBody("counted", n), http.StatusServiceUnavailable)
	assert.Equal(t, map[string]int64{"": deliverPiece}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_accepted"))
	assert.Equal(t, map[string]int64{"reason=refused_retryable": n - deliverPiece},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_refused"))
}

// postToRefusing posts body to a receiver whose pipeline refuses its
// call'th call with err, requires the answer's status, and returns the
// receiver's telemetry.
func postToRefusing(t *testing.T, call int32, err error, body []byte, status int) *componenttest.Telemetry {
	t.Helper()
	set, tel := recordingSettings(t)
	tr := startReceiverWith(t, set, &refuseCall{refuse: call, err: err}, nil)
	got, _, answer := post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, status, got, answer)
	return tel
}

// TestTooLongPieceCountsEveryEventPermanent: when the pipeline refuses the
// second piece for an event over the exporter's max_line_bytes, the client
// gets 413, which it does not retry, and the events of that piece and of
// those never handed on are all counted as refused for good.
func TestTooLongPieceCountsEveryEventPermanent(t *testing.T) {
	tooLong := consumererror.NewPermanent(&auditevent.TooLongError{Field: "data", Limit: 4096})
	const n = 3*deliverPiece + 5
	tel := postToRefusing(t, 2, tooLong, ndjsonBody("too-long", n), http.StatusRequestEntityTooLarge)
	assert.Equal(t, map[string]int64{"": deliverPiece}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_accepted"))
	assert.Equal(t, map[string]int64{"reason=refused_permanent": n - deliverPiece},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_refused"))
}

// TestLargeBatchBadLineRefusesAll: a bad line far past the first piece
// of a large body still refuses the whole batch, naming that line, and
// nothing of it is delivered.
func TestLargeBatchBadLineRefusesAll(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	lines := bytes.SplitAfter(ndjsonBody("bad", 3*deliverPiece), []byte("\n"))
	const bad = 2*deliverPiece + 7 // 1-based
	lines[bad-1] = []byte(`{"session_id":"nope"}` + "\n")
	status, _, answer := post(t, tr.eventsURL(), contentTypeNDJSON, bytes.Join(lines, nil))
	assert.Equal(t, http.StatusBadRequest, status, answer)
	assert.Contains(t, answer, fmt.Sprintf("line %d: ", bad))
	assert.Zero(t, logs.LogRecordCount())
}

// TestLargeBatchRepeatsAreDeliveredOnce: a large body that holds some
// events twice (the second copies in a later piece) delivers each once and
// counts the copies as duplicates.
func TestLargeBatchRepeatsAreDeliveredOnce(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	first := ndjsonBody("repeat", deliverPiece+10)
	again := bytes.SplitAfter(first, []byte("\n"))[:20] // the first 20 lines once more
	body := append(bytes.Clone(first), bytes.Join(again, nil)...)
	status, _, answer := post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, http.StatusOK, status, answer)
	accepted, dups := ackOf(t, answer)
	assert.Equal(t, deliverPiece+10, accepted)
	assert.Equal(t, 20, dups)
	assert.Equal(t, canonLines(t, first), logBodies(logs))
}

// BenchmarkMemoryLargeNDJSON is one ndjson body of small events, near the
// default 20 MiB limit, into a logs pipeline that keeps nothing: the peak
// heap while the receiver decodes and delivers it, per byte of body.
// Run with -benchtime 1x.
func BenchmarkMemoryLargeNDJSON(b *testing.B) {
	tr := startReceiver(b, consumertest.NewNop(), nil)
	body := ndjsonBody("memory", 60_000) // ≈ 20 MB
	m := heaptest.Start()
	for b.Loop() {
		status, _, answer := post(b, tr.eventsURL(), contentTypeNDJSON, body)
		if status != http.StatusOK {
			b.Fatal(status, answer)
		}
	}
	m.Report(b)
	b.ReportMetric(float64(len(body))/1e6, "body-MB")
}

// TestTooLargeNotPermanentCountsPermanent: a Kafka message over the size
// limit, as the pipeline returns it when not marked permanent (after an
// exporter's retries, say), gets the client a 413, which it does not
// retry; its events were counted refused_retryable, as if it would.
func TestTooLargeNotPermanentCountsPermanent(t *testing.T) {
	tooLarge := fmt.Errorf("error exporting to topic %q: %w", "sandbox-audit", kerr.MessageTooLarge)
	tel := postToRefusing(t, 1, tooLarge, ndjsonBody("kafka", 3), http.StatusRequestEntityTooLarge)
	assert.Equal(t, map[string]int64{"reason=refused_permanent": 3},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_refused"))
}
