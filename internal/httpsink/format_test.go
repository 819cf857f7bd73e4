package httpsink

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestEventFormatOnePOSTPerEventBodyWithoutNewline(t *testing.T) {
	f := newFixture(t, FormatEvent, false)
	lines := makeLines(t, uuid.New(), 1, 3, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 3))

	got := f.srv.all()
	require.Len(t, got, 3)
	want := splitLines(lines)
	for i, a := range got {
		require.Equal(t, "application/json", a.contentType)
		require.Equal(t, string(bytes.TrimSuffix(want[i], []byte("\n"))), string(a.body), "request %d", i)
		require.NotContains(t, string(a.body), "\n")
		require.Equal(t, byte('}'), a.body[len(a.body)-1])
	}
	require.Equal(t, seqRange(1, 3), seqs(f.srv.acceptedEvents(t)))
	require.Equal(t, 3, f.obs.stats().sent)
}

func TestNDJSONOnePOSTPerBatch(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false)
	lines := makeLines(t, uuid.New(), 1, 5, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 5))

	got := f.srv.all()
	require.Len(t, got, 1)
	require.Equal(t, "application/x-ndjson", got[0].contentType)
	require.Equal(t, string(lines), string(got[0].body))
	require.Equal(t, 5, f.obs.stats().sent)
}

func TestNDJSONSplitsAtBatchLimits(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false, func(s *Settings) { s.MaxBatchLines = 2 })
	lines := makeLines(t, uuid.New(), 1, 5, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 0))

	got := f.srv.all()
	require.Len(t, got, 3)
	ls := splitLines(lines)
	require.Equal(t, string(bytes.Join(ls[0:2], nil)), string(got[0].body))
	require.Equal(t, string(bytes.Join(ls[2:4], nil)), string(got[1].body))
	require.Equal(t, string(ls[4]), string(got[2].body))
	require.Equal(t, seqRange(1, 5), seqs(f.srv.acceptedEvents(t)))
}

func TestNextChunk(t *testing.T) {
	in := []byte("aa\nbbbb\nc\n")
	cases := []struct {
		maxLines, maxBytes int
		want               string
		n                  int
	}{
		{10, 100, "aa\nbbbb\nc\n", 3},
		{2, 100, "aa\nbbbb\n", 2},
		{10, 8, "aa\nbbbb\n", 2},
		{10, 7, "aa\n", 1},
		{10, 1, "aa\n", 1}, // a line over the limit still goes, alone
		{1, 100, "aa\n", 1},
	}
	for _, c := range cases {
		batch, n := nextBatch(in, c.maxLines, c.maxBytes)
		require.Equal(t, c.want, string(batch), "%+v", c)
		require.Equal(t, c.n, n, "%+v", c)
	}
	batch, n := nextBatch([]byte("x\nlast"), 10, 100)
	require.Equal(t, "x\nlast", string(batch))
	require.Equal(t, 2, n)
}

func TestSettingsValidation(t *testing.T) {
	for _, s := range []Settings{
		{Endpoint: "http://127.0.0.1:1/x", Format: "xml"},
		{Endpoint: "ftp://127.0.0.1/x", Format: FormatEvent},
		{Endpoint: "/relative", Format: FormatEvent},
		{Endpoint: "http://127.0.0.1:1/x", Format: FormatNDJSON, MaxBatchLines: -1},
	} {
		_, err := New(s)
		require.Error(t, err, "%+v", s)
	}
	// Credentials in the endpoint never show in a validation error.
	_, err := New(Settings{Endpoint: "gopher://user:hunter2@host/x?token=sekrit", Format: FormatEvent})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
	require.NotContains(t, err.Error(), "sekrit")
}

func TestValidateEndpoint(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8088/v1/sandbox/events", "https://audit.example.com", "http://[::1]:80/x?k=v"} {
		require.NoError(t, ValidateEndpoint(ok), ok)
	}
	for endpoint, want := range map[string]string{
		"":                    "must be set",
		"ftp://127.0.0.1/x":   `must be an absolute http:// or https:// URL, got "ftp://127.0.0.1/x"`,
		"/v1/sandbox/events":  "must be an absolute http:// or https:// URL",
		"http:///no-host":     "must be an absolute http:// or https:// URL",
		"http://[::1/x":       "not a valid URL: missing ']' in host",
		"https://a b.example": "not a valid URL: invalid character",
	} {
		require.ErrorContains(t, ValidateEndpoint(endpoint), want, "%q", endpoint)
	}
	// The error never repeats credentials from the URL.
	// Nor a part of them: a port that does not parse quotes what follows
	// the last colon, the password's end.
	for _, endpoint := range []string{"gopher://user:hunter2@host/x?token=sekrit", "http://user:hunter2@[::1/x?token=sekrit",
		"http://user:hunter2/sekrit@127.0.0.1:9/x", "http://user:AB#hunter2@127.0.0.1:9/x"} {
		err := ValidateEndpoint(endpoint)
		require.Error(t, err)
		require.NotContains(t, err.Error(), "hunter2")
		require.NotContains(t, err.Error(), "sekrit")
	}
}

// An endpoint written without its scheme is refused without quoting it: its
// userinfo is then path text, or its user is taken for the scheme, and a
// token is often the user (https://TOKEN@host, TOKEN:x-oauth-basic@host).
func TestValidateEndpointWithoutSchemeQuotesNoUserinfo(t *testing.T) {
	for _, endpoint := range []string{"hunter2@audit.example.com/v1", "hunter2:x-oauth-basic@audit.example.com/v1",
		"Hunter2Token:@127.0.0.1:9/x", "hunter2@127.0.0.1:9"} {
		err := ValidateEndpoint(endpoint)
		require.Error(t, err, "%q", endpoint)
		require.NotContains(t, strings.ToLower(err.Error()), "hunter2", "%q", endpoint)
	}
}

// TestValidateClientEchoesNoSecret: a header name that holds a value, and
// a proxy URL without a scheme (its user taken for one), are refused
// without showing what follows the name or the password.
func TestValidateClientEchoesNoSecret(t *testing.T) {
	headers := func(yield func(string, string) bool) { yield("Authorization: Bearer hunter2", "") }
	err := ValidateClient("http::", "", headers, 0)
	require.ErrorContains(t, err, `http::headers: the header name "Authorization" is followed by a character a name cannot carry`)
	require.NotContains(t, err.Error(), "hunter2")

	for _, proxy := range []string{"bob:hunter2@127.0.0.1:10", "ftp://bob:hunter2@127.0.0.1:10"} {
		err = ValidateClient("http::", proxy, func(func(string, string) bool) {}, 0)
		require.ErrorContains(t, err, "http::proxy_url: must be an http://, https://, socks5:// or socks5h:// URL with a host", proxy)
		require.NotContains(t, err.Error(), "hunter2")
	}
	for _, proxy := range []string{"socks5://127.0.0.1:1080", "socks5h://proxy.example:1080", "http://u:p@127.0.0.1:3128"} {
		require.NoError(t, ValidateClient("http::", proxy, func(func(string, string) bool) {}, 0), proxy)
	}
}

// TestValidateEndpointRefusesAPortNoDialReaches: url.Parse takes any
// digits for a port, so without this check every request fails with
// "invalid port" while the collector says it is ready.
func TestValidateEndpointRefusesAPortNoDialReaches(t *testing.T) {
	for _, endpoint := range []string{"http://127.0.0.1:99999/x", "https://audit.example.com:0/v1", "http://[::1]:65536"} {
		require.ErrorContains(t, ValidateEndpoint(endpoint), "port", "%q", endpoint)
	}
	require.NoError(t, ValidateEndpoint("http://127.0.0.1:65535/x"))
	noHeaders := func(func(string, string) bool) {}
	err := ValidateClient("http::", "http://u:hunter2@127.0.0.1:70000", noHeaders, 0)
	require.ErrorContains(t, err, "http::proxy_url: port 70000 is out of range")
	require.NotContains(t, err.Error(), "hunter2")
}

// TestValidateClientRefusesHeadersTheSinkSets: a configured header
// replaces the request's own, so Content-Type: text/plain or
// Content-Encoding: gzip (on a body that is not) reached the endpoint,
// which answers 415 to every request, or 400, and the sink then drops the
// lines as refused content.
func TestValidateClientRefusesHeadersTheSinkSets(t *testing.T) {
	for _, name := range []string{"Content-Type", "content-encoding", "Content-Length", "Transfer-Encoding"} {
		headers := func(yield func(string, string) bool) { yield(name, "x") }
		err := ValidateClient("http::", "", headers, 0)
		require.ErrorContains(t, err, "http::headers: "+name+": set by the sink for each request", name)
	}
	headers := func(yield func(string, string) bool) { yield("Authorization", "Bearer x") }
	require.NoError(t, ValidateClient("http::", "", headers, 0))
}

// TestValidateEndpointRefusesAnEmptyHostName: "http://${env:HOST}:8080"
// with HOST unset is "http://:8080", which url.Parse takes and a dial
// sends to this machine's port 8080, whoever listens there.
func TestValidateEndpointRefusesAnEmptyHostName(t *testing.T) {
	for _, endpoint := range []string{"http://:8080/x", "https://:443", "http://u:hunter2@:9/x"} {
		err := ValidateEndpoint(endpoint)
		require.ErrorContains(t, err, "no host name", "%q", endpoint)
		require.NotContains(t, err.Error(), "hunter2")
	}
	noHeaders := func(func(string, string) bool) {}
	err := ValidateClient("http::", "http://u:hunter2@:3128", noHeaders, 0)
	require.ErrorContains(t, err, "http::proxy_url: must be an http://, https://, socks5:// or socks5h:// URL with a host")
	require.NotContains(t, err.Error(), "hunter2")
}
