package sandboxauditreceiver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

func loadVectors(t *testing.T, kind string) []conformance.Vector {
	t.Helper()
	all, err := conformance.LoadAll()
	require.NoError(t, err)
	var out []conformance.Vector
	for _, v := range all {
		if v.Kind == kind {
			out = append(out, v)
		}
	}
	require.NotEmpty(t, out, "no %s vectors", kind)
	return out
}

// TestConformanceEncodeVectors posts every encode vector's input as the
// Python HttpProxySink would, one event per request; the log record body
// plus a newline must be the reference's canonical line byte for byte.
func TestConformanceEncodeVectors(t *testing.T) {
	sink := new(consumertest.LogsSink)
	// Many vectors share an event_id; dedupe would (rightly) drop them.
	tr := startReceiver(t, sink, nil, func(c *Config) { c.Dedupe.Enabled = false })
	for _, v := range loadVectors(t, "encode") {
		t.Run(v.Name, func(t *testing.T) {
			want, err := v.ExpectString()
			require.NoError(t, err)
			sink.Reset()
			status, _, body := post(t, tr.eventsURL(), "application/json", []byte(v.Input))
			require.Equal(t, http.StatusOK, status, "%s: %s", v.Source, body)
			got := logBodies(sink)
			require.Len(t, got, 1)
			assert.Equal(t, want, got[0]+"\n", v.Source)
		})
	}
}

// TestConformanceEncodeVectorsAsBatch posts all encode vectors as one
// ndjson batch: same lines, same order.
func TestConformanceEncodeVectorsAsBatch(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) { c.Dedupe.Enabled = false })
	vectors := loadVectors(t, "encode")
	var batch strings.Builder
	var want []string
	for _, v := range vectors {
		require.NotContains(t, v.Input, "\n", "%s: an ndjson line cannot hold a raw newline", v.Source)
		batch.WriteString(v.Input + "\n")
		w, err := v.ExpectString()
		require.NoError(t, err)
		want = append(want, w)
	}
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch.String()))
	require.Equal(t, http.StatusOK, status, body)
	got := logBodies(sink)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i], got[i]+"\n", vectors[i].Source)
	}
}

// TestConformanceRejectVectors posts every reject vector: 400, the body
// names the vector's field, and nothing is delivered.
func TestConformanceRejectVectors(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	for _, v := range loadVectors(t, "reject") {
		t.Run(v.Name, func(t *testing.T) {
			status, _, body := post(t, tr.eventsURL(), "application/json", []byte(v.Input))
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", v.Source, body)
			if f := v.LocField(); f != "" {
				assert.True(t, strings.HasPrefix(body, f+": "), "%s: body %q does not name %q", v.Source, body, f)
			}

			// The same event as line 2 of a batch refuses the whole batch.
			batch := startJSON(1) + "\n" + v.Input + "\n"
			status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
			require.Equal(t, http.StatusBadRequest, status, body)
			prefix := "line 2: "
			if f := v.LocField(); f != "" {
				prefix += f + ": "
			}
			assert.True(t, strings.HasPrefix(body, prefix), "%s: body %q, want prefix %q", v.Source, body, prefix)
		})
	}
	assert.Zero(t, sink.LogRecordCount())
}
