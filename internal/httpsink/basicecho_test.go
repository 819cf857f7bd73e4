package httpsink

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestShowResponseBodyRedactsABasicPasswordEchoedDecoded: the credentials
// of a Basic Authorization header (configured, or from the endpoint URL)
// are base64 on the wire; an endpoint that decodes them may echo the
// password itself. With response bodies shown, it is redacted all the same.
func TestShowResponseBodyRedactsABasicPasswordEchoedDecoded(t *testing.T) {
	const password = "pa55-w0rd-echoed"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+password))
	for name, configured := range map[string][]string{
		"configured":             {basic},
		"added by the transport": nil,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
				s.Client = &http.Client{Timeout: 2 * time.Second, Transport: basicAuth{http.DefaultTransport, basic}}
				s.ShowResponseBody = true
				s.RedactValues = configured
			})
			f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
				user, pass, _ := r.BasicAuth()
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte("user " + user + " has no password " + pass + "; " + strings.ToUpper(pass)))
				return false
			})
			f.start(t)
			err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 1, 0), 1)
			require.Error(t, err)
			requireNoSecret(t, f.logs, err.Error(), password)
			requireNoSecret(t, f.logs, err.Error(), strings.ToUpper(password))
			require.Contains(t, err.Error(), "user alice has no password [REDACTED]")
		})
	}
}

type basicAuth struct {
	next  http.RoundTripper
	value string
}

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.value)
	return b.next.RoundTrip(r)
}
