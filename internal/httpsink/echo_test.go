package httpsink

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest/observer"
)

const echoedToken = "tok-9f8e7d6c5b4a"

// echoHeaders answers code with a body that repeats the request's
// Authorization header, as some misconfigured endpoints and proxies do.
func echoHeaders(code int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		w.WriteHeader(code)
		_, _ = w.Write([]byte("you sent Authorization: " + r.Header.Get("Authorization") + "\nno good"))
		return false
	}
}

// requireNoSecret fails if any log entry (message, any field, any error
// text) or msg holds secret.
func requireNoSecret(t *testing.T, logs *observer.ObservedLogs, msg, secret string) {
	t.Helper()
	require.NotContains(t, msg, secret)
	for _, e := range logs.All() {
		require.NotContains(t, e.Message, secret)
		for k, v := range e.ContextMap() {
			require.NotContains(t, toString(v), secret, "log %q field %s", e.Message, k)
		}
	}
}

// TestEchoedTokenNeverLogged: an endpoint that echoes the bearer token in
// its error bodies (a content 4xx, an endpoint 401, a 5xx retried then
// spooled, and the replayer's rounds) never gets the token into a log line
// (DEBUG included) or a returned error. The logs name status and length.
func TestEchoedTokenNeverLogged(t *testing.T) {
	for _, code := range []int{400, 401, 503} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, giveUpSoon, func(s *Settings) {
				s.Client = &http.Client{Timeout: 2 * time.Second, Transport: bearer{http.DefaultTransport, echoedToken}}
			})
			f.srv.setDefault(echoHeaders(code))
			f.start(t)
			err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 2, 0), 2)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			// Let the replayer try too (spooled lines for 401 and 503).
			require.Eventually(t, func() bool { return len(f.srv.all()) >= 2 || code == 400 }, 10*time.Second, 10*time.Millisecond)
			require.NoError(t, f.sink.Shutdown(t.Context()))
			require.NotEmpty(t, f.srv.all())
			requireNoSecret(t, f.logs, msg, echoedToken)
			lengths := f.logs.FilterFieldKey("response_bytes")
			if code != 503 { // 5xx is retried and spooled at DEBUG/WARN via the error text
				require.NotZero(t, lengths.Len(), "the log names the response length")
			}
			for _, e := range f.logs.All() {
				require.NotContains(t, e.ContextMap(), "response", "no response excerpt field")
			}
		})
	}
}

// TestShowResponseBodyRedactsHeaderValues: with the debug option on, the
// body is shown, but every header value sent (and each of its words) is
// replaced: a configured one, and one that a round tripper added (an auth
// extension's, which the configuration does not know). So is a value cut
// in two by the read limit.
func TestShowResponseBodyRedactsHeaderValues(t *testing.T) {
	for name, configured := range map[string][]string{
		"configured":             {"Bearer " + echoedToken},
		"added by the transport": nil,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
				s.Client = &http.Client{Timeout: 2 * time.Second, Transport: bearer{http.DefaultTransport, echoedToken}}
				s.ShowResponseBody = true
				s.RedactValues = configured
			})
			f.srv.setDefault(echoHeaders(400))
			f.start(t)
			err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 1, 0), 1)
			require.Error(t, err)
			require.Contains(t, err.Error(), "you sent Authorization: [REDACTED] no good")
			requireNoSecret(t, f.logs, err.Error(), echoedToken)
			require.NotZero(t, f.logs.FilterFieldKey("response_redacted").Len())
		})
	}
}

// bearer adds an Authorization header the way confighttp's headers do.
type bearer struct {
	next  http.RoundTripper
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
