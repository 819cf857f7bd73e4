package httpsink

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap/zapcore"
)

// endpointLevel are the answers that say "the endpoint refuses us", not
// "this content is wrong" (written out, not taken from the code).
var endpointLevel = []int{401, 403, 404, 405, 406, 407, 408, 410, 411, 414, 415, 421, 426, 431}

func TestStatusClasses(t *testing.T) {
	for _, code := range endpointLevel {
		se := &StatusError{Code: code}
		require.True(t, se.EndpointRefused(), "%d", code)
		require.False(t, se.Permanent(), "%d", code)
		require.True(t, se.Retryable(), "%d: may succeed once fixed", code)
	}
	for _, code := range []int{400, 402, 409, 412, 413, 416, 417, 422, 451} {
		se := &StatusError{Code: code}
		require.True(t, se.Permanent(), "%d", code)
		require.False(t, se.EndpointRefused(), "%d", code)
		require.False(t, se.Retryable(), "%d", code)
	}
	for _, code := range []int{302, 429, 500, 502, 503, 504} {
		se := &StatusError{Code: code}
		require.True(t, se.Retryable(), "%d", code)
		require.False(t, se.Permanent(), "%d", code)
		require.False(t, se.EndpointRefused(), "%d", code)
	}
}

// TestEndpointRefusalSpoolsWithoutRetry: on the live path an endpoint-level
// 4xx sends the lines to the spool at once (one request, no retries), marks
// the endpoint down and logs the status at ERROR; nothing is dropped and
// the caller gets nil.
func TestEndpointRefusalSpoolsWithoutRetry(t *testing.T) {
	for _, code := range endpointLevel {
		t.Run(http.StatusText(code), func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
				s.Client = &http.Client{Timeout: 2 * time.Second, Transport: secretHeader{http.DefaultTransport}}
				s.Endpoint = strings.Replace(s.Endpoint, "http://", "http://user:hunter2@", 1) + "?api_key=sekrit"
				s.Retry.MaxElapsedTime = time.Minute // a retry would be seen
			})
			f.srv.setDefault(status(code, nil, "nope"))
			session := uuid.New()
			first := makeLines(t, session, 1, 3, 10)
			second := makeLines(t, session, 4, 5, 10)

			require.NoError(t, f.sink.Send(sendCtx(t), first, 3))
			require.NoError(t, f.sink.Send(sendCtx(t), second, 2))

			require.Len(t, f.srv.all(), 1, "not retried; the second batch goes straight to the spool")
			require.True(t, f.sink.isDown())
			require.Equal(t, string(first)+string(second), string(spoolFileBytes(t, f.spoolPath)))
			st := f.obs.stats()
			require.Equal(t, 5, st.spooled)
			require.Empty(t, st.dropped)
			require.Empty(t, st.refused)

			errs := f.logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zapInt("status", code))
			require.Equal(t, 1, errs.Len(), "one ERROR line naming the status")
			require.Equal(t, ReasonEndpointRefused, errs.All()[0].ContextMap()["reason"])
			for _, e := range f.logs.All() {
				for _, secret := range []string{"s3cr3t", "hunter2", "sekrit"} {
					require.NotContains(t, e.Message, secret)
					for k, v := range e.ContextMap() {
						require.NotContains(t, k+"="+toString(v), secret)
					}
				}
			}
		})
	}
}

func TestEndpointRefusalWithoutSpoolIsHandedBack(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false, func(s *Settings) { s.Retry.MaxElapsedTime = time.Minute })
	f.srv.setDefault(status(http.StatusUnauthorized, nil, "token expired"))
	lines := makeLines(t, uuid.New(), 1, 4, 10)

	err := f.sink.Send(sendCtx(t), lines, 4)

	var re *RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ReasonEndpointRefused, re.Reason)
	require.Equal(t, 4, re.Remaining)
	require.False(t, consumererror.IsPermanent(err), "not the content's fault: a later attempt may succeed")
	require.Contains(t, err.Error(), "401")
	require.Len(t, f.srv.all(), 1, "not retried")
	st := f.obs.stats()
	require.Equal(t, 4, st.refused[ReasonEndpointRefused])
	require.Empty(t, st.dropped)
	require.Equal(t, 1, f.logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zapInt("status", 401)).Len())
}

// TestEndpointRefusalDuringReplayKeepsEverything is the reason for the
// endpoint-level class: after an outage the endpoint answers 401 (the
// token expired meanwhile) for several replay rounds, then the operator
// fixes it. Nothing is dropped; every event arrives once, in order.
func TestEndpointRefusalDuringReplayKeepsEverything(t *testing.T) {
	for _, format := range []Format{FormatEvent, FormatNDJSON} {
		t.Run(string(format), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			session := uuid.New()
			// Left by the outage: 20 lines in the spool.
			writeSpool(t, path, makeLines(t, session, 1, 20, 10))
			f := newFixture(t, format, false, func(s *Settings) {
				s.Spool = openSpool(t, path, 0)
				s.MaxBatchLines = 6
			})
			f.srv.setDefault(status(http.StatusUnauthorized, nil, "token expired"))
			f.start(t)

			// Several refused rounds, and new lines meanwhile.
			require.Eventually(t, func() bool { return len(f.srv.all()) >= 4 }, 10*time.Second, 5*time.Millisecond)
			require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 21, 25, 10), 5))
			require.Eventually(t, func() bool { return len(f.srv.all()) >= 6 }, 10*time.Second, 5*time.Millisecond)

			require.True(t, f.sink.spool.Pending())
			require.Empty(t, f.srv.acceptedEvents(t))
			require.Empty(t, f.obs.stats().dropped, "nothing dropped while refused")
			require.Equal(t, seqRange(1, 25), seqs(decodeBody(t, spoolFileBytes(t, path))), "all kept, in order")
			require.GreaterOrEqual(t, f.logs.FilterLevelExact(zapcore.ErrorLevel).
				FilterField(zapInt("status", 401)).FilterField(zapString("path", "replay")).Len(), 1)

			f.srv.setDefault(ok) // the operator rotates the token
			waitDrained(t, f.sink.spool, path)

			require.Equal(t, seqRange(1, 25), seqs(f.srv.acceptedEvents(t)), "exactly once, in order")
			st := f.obs.stats()
			require.Empty(t, st.dropped)
			require.Empty(t, st.refused)
			require.Equal(t, 25, st.replayed)
			require.Empty(t, spoolFileBytes(t, path))
		})
	}
}

// TestContentRefusalOnReplayIsDropped: a 400 during replay still drops
// that batch (visibly), so it cannot block the lines behind it.
func TestContentRefusalOnReplayIsDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	session := uuid.New()
	writeSpool(t, path, makeLines(t, session, 1, 5, 10))
	f := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	f.srv.then(ok, status(http.StatusBadRequest, nil, "invalid event"))
	f.start(t)

	waitDrained(t, f.sink.spool, path)

	require.Equal(t, []int64{1, 3, 4, 5}, seqs(f.srv.acceptedEvents(t)))
	require.Len(t, f.srv.all(), 5, "the refused event is not retried")
	st := f.obs.stats()
	require.Equal(t, 1, st.dropped[ReasonHTTP4xx])
	require.Equal(t, 4, st.replayed)
	require.Equal(t, 1, f.logs.FilterMessageSnippet("dropped").FilterField(zapInt("status", 400)).
		FilterField(zapString("path", "replay")).Len())
	require.Empty(t, spoolFileBytes(t, path))
}
