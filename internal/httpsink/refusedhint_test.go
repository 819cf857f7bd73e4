package httpsink

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestRefusalLogNamesWhatToFix: an endpoint that refuses every request
// for a reason the sink recognises (a plain request to a TLS port, a body
// limit below a single small line) keeps the lines in the spool; the
// ERROR says what to fix, not to check credentials, path and proxy.
func TestRefusalLogNamesWhatToFix(t *testing.T) {
	for name, tc := range map[string]struct {
		code int
		body string
		want string
	}{
		"tls port":   {http.StatusBadRequest, "<html><title>400 The plain HTTP request was sent to HTTPS port</title></html>", "https://"},
		"body limit": {http.StatusRequestEntityTooLarge, "", "body limit"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			f := newFixture(t, FormatNDJSON, true, func(s *Settings) { s.Endpoint = srv.URL })
			lines := makeLines(t, uuid.New(), 1, 1, 10)
			require.NoError(t, f.sink.Send(sendCtx(t), lines, 1))
			require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)), "kept in the spool")

			refused := f.logs.FilterField(zapString("reason", ReasonEndpointRefused)).All()
			require.NotEmpty(t, refused)
			for _, e := range refused {
				require.Contains(t, e.Message, tc.want)
				require.NotContains(t, e.Message, "credentials")
			}
		})
	}
}
