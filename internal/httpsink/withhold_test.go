package httpsink

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/secretlog"
)

// base64Token is a token with base64's "/", "+" and "=" in it, and
// quotedToken is it as Python's urllib.parse.quote writes it ("/" kept).
const (
	base64Token = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY=="
	quotedToken = "wJalrXUtnFEMI/K7MDENG%2BbPxRfiCY%3D%3D"
)

// Through the sink: such an echo shows the withheld mark, and the token
// reaches no log and no error.
func TestShowResponseBodyWithholdsAnUnredactedEcho(t *testing.T) {
	tok := base64Token
	f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
		s.Client = &http.Client{Timeout: 2 * time.Second, Transport: bearer{http.DefaultTransport, tok}}
		s.ShowResponseBody = true
	})
	f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("you sent " + strings.Replace(r.Header.Get("Authorization"), "M", "%4D", 1)))
		return false
	})
	f.start(t)
	err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 1, 0), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), secretlog.Withheld)
	requireNoSecret(t, f.logs, err.Error(), strings.Replace(tok, "M", "%4D", 1))
	requireNoSecret(t, f.logs, err.Error(), tok[:12])
}

// The check runs on what was read, before the excerpt is cut: a token in
// a mixed encoding that the cut splits (Python's quote() of it, cut in its
// escaped padding) is withheld, not shown nearly whole.
func TestWithholdingSeesPastTheExcerptsCut(t *testing.T) {
	tok := base64Token
	quoted := quotedToken
	f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
		s.Client = &http.Client{Timeout: 2 * time.Second, Transport: bearer{http.DefaultTransport, tok}}
		s.ShowResponseBody = true
	})
	prefix := strings.Repeat("x", excerptRunes-len(quoted)+3) // the cut falls inside "%3D%3D"
	f.srv.setDefault(func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(prefix + quoted))
		return false
	})
	f.start(t)
	err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 1, 0), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), secretlog.Withheld)
	assert.NotContains(t, err.Error(), quoted[:20])
}
