package witness_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// An endpoint that echoes the request's headers (a debug service, a
// misrouted proxy) in a 200 or a 409 answer: the error, which is logged,
// shows none of the answer's bytes.
func TestAnswerBytesAreNotShown(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(3, "a")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	for _, tc := range []struct {
		status int
		body   string
	}{
		{http.StatusOK, "Authorization: Bearer s3cr3t\n"},
		{http.StatusOK, "\u2014 witness.example/w1 s3cr3t\n"},
		{http.StatusConflict, "s3cr3t\n"},
		{http.StatusConflict, "Authorization: Bearer s3cr3t"},
	} {
		srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		})
		w, err := witness.NewWitness(srv.URL, fw.VKey, srv.Client(), nil)
		require.NoError(t, err)
		_, err = w.AddCheckpoint(context.Background(), 0, nil, log.checkpoint())
		require.Error(t, err)
		require.NotContains(t, err.Error(), "s3cr3t", "%d %q", tc.status, tc.body)
	}
}
