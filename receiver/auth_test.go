package sandboxauditreceiver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// tokenAuth is a server authenticator accepting one bearer token; its
// error quotes the header it got, as careless authenticators do.
type tokenAuth struct{ token string }

var _ extensionauth.Server = tokenAuth{}

func (tokenAuth) Start(context.Context, component.Host) error { return nil }
func (tokenAuth) Shutdown(context.Context) error              { return nil }

func (a tokenAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	got := strings.Join(headers["Authorization"], ",")
	if got != "Bearer "+a.token {
		return ctx, errors.New("bad credentials " + got)
	}
	return ctx, nil
}

type authHost struct {
	exts map[component.ID]component.Component
}

func (h authHost) GetExtensions() map[component.ID]component.Component { return h.exts }

// TestAuthExtension: the server's auth setting works as in every collector
// receiver, a refusal is 401, and the answer does not repeat what the
// client sent or what the authenticator said.
func TestAuthExtension(t *testing.T) {
	set, tel := recordingSettings(t)

	authID := component.MustNewID("tokenauth")
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.ServerConfig.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	sink := new(consumertest.LogsSink)
	rcv, err := f.CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	host := authHost{exts: map[component.ID]component.Component{authID: tokenAuth{token: "right"}}}
	require.NoError(t, rcv.Start(context.Background(), host))
	t.Cleanup(func() { assert.NoError(t, rcv.Shutdown(context.Background())) })
	url := "http://" + unwrap(rcv).addr.String() + cfg.EventsPath

	send := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(startJSON(1)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		status, _, body := do(t, req)
		return status, body
	}

	status, body := send("wrong-s3cr3t")
	require.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "unauthenticated\n", body)
	assert.Zero(t, sink.LogRecordCount())

	status, body = send("right")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 1, sink.LogRecordCount())

	assert.Equal(t, map[string]int64{
		"endpoint=events,http.response.status_code=401,outcome=unauthenticated": 1,
		"endpoint=events,http.response.status_code=200,outcome=accepted":        1,
	}, counterValues(t, tel, "otelcol_sandboxaudit_receiver_requests"))
}

// TestUnsupportedContentEncoding: confighttp refuses the body before the
// handler; the answer is a short 415 (RFC 9110) that does not quote the
// header, counted.
func TestUnsupportedContentEncoding(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	req, err := http.NewRequest(http.MethodPost, tr.eventsURL(), strings.NewReader(startJSON(1)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "bearer sk-secret-xyz")
	status, hdr, body := do(t, req)
	assert.Equal(t, http.StatusUnsupportedMediaType, status)
	assert.Equal(t, "text/plain; charset=utf-8", hdr.Get("Content-Type"))
	assert.Contains(t, body, "Content-Encoding")
	assert.NotContains(t, body, "sk-secret-xyz")
	assert.Zero(t, sink.LogRecordCount())
}

// TestTracesRefusedBeforeTheHandlerGetOTLPStatus: what confighttp refuses
// before the traces handler runs (an unknown or broken Content-Encoding, a
// Content-Length over the limit) is answered as OTLP/HTTP requires of any
// error: a google.rpc.Status in the request's encoding, not plain text.
func TestTracesRefusedBeforeTheHandlerGetOTLPStatus(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) { c.ServerConfig.MaxRequestBodySize = 1000 })
	cases := []struct {
		encoding string
		body     string
		status   int
	}{
		{"br", "{}", http.StatusUnsupportedMediaType},
		{"gzip", "not gzip", http.StatusBadRequest},
		{"", strings.Repeat(" ", 1001), http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		for _, ct := range []string{contentTypeProtobuf, contentTypeJSON} {
			req, err := http.NewRequest(http.MethodPost, tr.tracesURL(), strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", ct)
			if c.encoding != "" {
				req.Header.Set("Content-Encoding", c.encoding)
			}
			status, hdr, body := do(t, req)
			require.Equal(t, c.status, status, "%s %q", ct, c.encoding)
			require.Equal(t, ct, hdr.Get("Content-Type"), "%s %q", ct, c.encoding)
			var st spb.Status
			if ct == contentTypeProtobuf {
				require.NoError(t, proto.Unmarshal([]byte(body), &st))
			} else {
				require.NoError(t, protojson.Unmarshal([]byte(body), &st))
			}
			assert.NotEmpty(t, st.GetMessage())
		}
	}
}

// TestBrokenEncodingIsNamed: a body whose Content-Encoding header says
// gzip or deflate but whose bytes are not is a 400 that says the body
// could not be decompressed, not a bare "unexpected EOF".
func TestBrokenEncodingIsNamed(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for _, enc := range []string{"gzip", "deflate"} {
		for _, body := range []string{"x", "not compressed at all"} {
			status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, enc, []byte(body))
			require.Equal(t, http.StatusBadRequest, status, answer)
			assert.Contains(t, answer, "Content-Encoding", "%s %q", enc, body)
		}
	}
}
