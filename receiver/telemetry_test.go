package sandboxauditreceiver

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// counterValues maps each data point's attributes (as "k=v,k=v") to its value.
func counterValues(t *testing.T, tel *componenttest.Telemetry, name string) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int sum", name)
	assert.True(t, sum.IsMonotonic)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		key := ""
		for i, kv := range dp.Attributes.ToSlice() {
			if i > 0 {
				key += ","
			}
			key += string(kv.Key) + "=" + kv.Value.String()
		}
		out[key] = dp.Value
	}
	return out
}

func TestTelemetry(t *testing.T) {
	set, tel := recordingSettings(t)
	logs := new(switchableLogs)
	tr := startReceiverWith(t, set, logs, nil)

	post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+finishJSON(1)+"\n"))
	post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))                    // duplicate
	post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(2)+"\n{}\n\n{}\n")) // 3 lines refused
	post(t, tr.eventsURL(), "text/plain", []byte(startJSON(2)))
	logs.setErr(errors.New("busy"))
	post(t, tr.eventsURL(), "application/json", []byte(startJSON(3)))
	logs.setErr(nil)
	post(t, tr.tracesURL(), "application/x-protobuf", marshalTraces(t, sandboxTraces(), "application/x-protobuf"))

	assert.Equal(t, map[string]int64{
		"endpoint=events,http.response.status_code=200,outcome=accepted":               2,
		"endpoint=events,http.response.status_code=400,outcome=malformed":              1,
		"endpoint=events,http.response.status_code=415,outcome=unsupported_media_type": 1,
		"endpoint=events,http.response.status_code=503,outcome=refused_retryable":      1,
		"endpoint=traces,http.response.status_code=200,outcome=accepted":               1,
	}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_requests"))
	assert.Equal(t, map[string]int64{"": 4}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_accepted"))
	assert.Equal(t, map[string]int64{"reason=invalid": 3, "reason=refused_retryable": 1},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_refused"))
	assert.Equal(t, map[string]int64{"": 1}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_duplicates_dropped"))
	assert.Equal(t, map[string]int64{"": 1}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_spans_skipped"))

	// The standard receiver metrics come from receiverhelper.ObsReport.
	accepted := counterValues(t, tel, "otelcol_receiver_accepted_log_records")
	var total int64
	for _, v := range accepted {
		total += v
	}
	assert.Equal(t, int64(4), total)
}

// A receiver in a traces pipeline alone counts the events it took as it
// counts them for a logs pipeline: what the client was answered 200 for is
// accepted, what the traces pipeline refused is refused.
func TestTelemetryTracesPipelineAlone(t *testing.T) {
	set, tel := recordingSettings(t)
	tr := startReceiverWith(t, set, nil, new(consumertest.TracesSink))

	status, _, _ := post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+finishJSON(1)+"\n"))
	require.Equal(t, 200, status)
	status, _, _ = post(t, tr.eventsURL(), "application/json", []byte(startJSON(2))) // waits for its finish
	require.Equal(t, 200, status)
	assert.Equal(t, map[string]int64{"": 3}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_accepted"))
}

func TestTelemetryTracesPipelineAloneRefused(t *testing.T) {
	set, tel := recordingSettings(t)
	tr := startReceiverWith(t, set, nil, consumertest.NewErr(consumererror.NewPermanent(errors.New("broken"))))

	status, _, _ := post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+finishJSON(1)+"\n"))
	require.Equal(t, 500, status)
	assert.Equal(t, map[string]int64{"reason=refused_permanent": 2},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_events_refused"))
}

// Two sandboxaudit receivers in traces pipelines share the pairs_pending
// instrument: each keeps its own point, by receiver id, so one's empty
// table does not hide the other's waiting starts.
func TestPairsPendingOfTwoReceivers(t *testing.T) {
	set, tel := recordingSettings(t)
	set.ID = component.MustNewIDWithName(metadata.Type.String(), "waiting")
	waiting := startReceiverWith(t, set, nil, new(consumertest.TracesSink))
	status, _, body := post(t, waiting.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+startJSON(2)+"\n"))
	require.Equal(t, 200, status, body)
	set.ID = component.MustNewIDWithName(metadata.Type.String(), "idle")
	startReceiverWith(t, set, nil, new(consumertest.TracesSink))

	m, err := tel.GetMetric("otelcol_sandboxaudit_receiver_pairs_pending")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		v, _ := dp.Attributes.Value("receiver")
		got[v.AsString()] += dp.Value
	}
	assert.Equal(t, map[string]int64{"sandboxaudit/waiting": 2, "sandboxaudit/idle": 0}, got)
}
