package httpsink

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestPlainHTTPToATLSPortKeepsTheLines: an endpoint written http:// for a
// TLS port answers every request 400 (Go's server, nginx, Apache). The
// lines are not at fault: the endpoint refuses us, so they are kept, as
// for a 426, not dropped as content the endpoint refused.
func TestPlainHTTPToATLSPortKeepsTheLines(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	plainToTLS := "http://" + strings.TrimPrefix(tlsSrv.URL, "https://") + "/v1/sandbox/events"

	nginx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("<html><head><title>400 The plain HTTP request was sent to HTTPS port</title></head></html>"))
	}))
	t.Cleanup(nginx.Close)

	for name, endpoint := range map[string]string{"go": plainToTLS, "nginx": nginx.URL} {
		t.Run(name+" with a spool", func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, func(s *Settings) { s.Endpoint = endpoint })
			lines := makeLines(t, uuid.New(), 1, 3, 10)
			require.NoError(t, f.sink.Send(sendCtx(t), lines, 3))
			require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)), "kept in the spool")
			st := f.obs.stats()
			require.Empty(t, st.dropped)
			require.Equal(t, 3, st.spooled)
		})
		t.Run(name+" without a spool", func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, false, func(s *Settings) { s.Endpoint = endpoint })
			err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 2, 10), 2)
			var re *RefusedError
			require.True(t, errors.As(err, &re), "%v", err)
			require.Equal(t, ReasonEndpointRefused, re.Reason)
			require.Contains(t, err.Error(), "https://")
			require.Empty(t, f.obs.stats().dropped)
		})
	}
}
