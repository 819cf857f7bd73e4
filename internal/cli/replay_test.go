package cli

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is an HTTP endpoint that keeps what it was sent.
type recorder struct {
	mu     sync.Mutex
	status int
	reqs   []recorded
}

type recorded struct {
	contentType, token, body string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs = append(rc.reqs, recorded{r.Header.Get("Content-Type"), r.Header.Get("X-Audit-Token"), string(body)})
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (rc *recorder) requests() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.reqs...)
}

func spoolFixture(t *testing.T) (path, content string) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, _ := op(sessionA, "read", "span-2", 3, 4)
	content = lines(s1, f1, s2)
	return writeFile(t, "spool.jsonl", content), content
}

const secret = "s3cr3t-token-value"

func TestReplayNDJSON(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)

	r := run(t, "", "replay", path, "--endpoint", srv.URL+"/v1/sandbox/events", "--header", "X-Audit-Token="+secret)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 3 line(s)")
	assert.NotContains(t, r.stdout+r.stderr, secret)

	var got strings.Builder
	for _, req := range rc.requests() {
		assert.Equal(t, "application/x-ndjson", req.contentType)
		assert.Equal(t, secret, req.token)
		got.WriteString(req.body)
	}
	assert.Equal(t, content, got.String())

	// The delivered lines were trimmed: a second run has nothing to send.
	before := len(rc.requests())
	r = run(t, "", "replay", path, "--endpoint", srv.URL+"/v1/sandbox/events")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 0 line(s)")
	assert.Len(t, rc.requests(), before)
}

func TestReplayEventFormat(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)

	r := run(t, "", "replay", "--format", "event", "--endpoint", srv.URL, path)
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := rc.requests()
	want := strings.SplitAfter(content, "\n")[:3]
	require.Len(t, reqs, 3)
	for i, req := range reqs {
		assert.Equal(t, "application/json", req.contentType)
		assert.Equal(t, strings.TrimSuffix(want[i], "\n"), req.body, "request %d", i)
	}
}

func TestReplayPermanentFailureKeepsLines(t *testing.T) {
	bad := &recorder{status: http.StatusBadRequest}
	badSrv := httptest.NewServer(bad)
	defer badSrv.Close()
	path, content := spoolFixture(t)

	r := run(t, "", "replay", path, "--endpoint", badSrv.URL, "--header", "X-Audit-Token="+secret)
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stderr, "400")
	assert.NotContains(t, r.stdout+r.stderr, secret)

	// Nothing was lost: a good endpoint still gets every line.
	good := &recorder{}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	r = run(t, "", "replay", path, "--endpoint", goodSrv.URL)
	require.Equal(t, exitOK, r.code, r.stderr)
	var got strings.Builder
	for _, req := range good.requests() {
		got.WriteString(req.body)
	}
	assert.Equal(t, content, got.String())
}

func TestReplayTLS(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewUnstartedServer(rc)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	path, _ := spoolFixture(t)

	// The test server's certificate is self-signed: refused unless told.
	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--retry-for", "0")
	assert.Equal(t, exitProblems, r.code)
	assert.Empty(t, rc.requests())

	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--insecure-skip-verify")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 3 line(s)")
}

func TestReplayUsage(t *testing.T) {
	path, _ := spoolFixture(t)
	for name, args := range map[string][]string{
		"no endpoint":    {"replay", path},
		"no spool":       {"replay", "--endpoint", "http://127.0.0.1:1"},
		"bad format":     {"replay", path, "--endpoint", "http://127.0.0.1:1", "--format", "xml"},
		"bad header":     {"replay", path, "--endpoint", "http://127.0.0.1:1", "--header", "Authorization: Bearer " + secret},
		"not a URL":      {"replay", path, "--endpoint", "127.0.0.1:1"},
		"negative retry": {"replay", path, "--endpoint", "http://127.0.0.1:1", "--retry-for", "-1s"},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, "", args...)
			assert.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
			assert.NotContains(t, r.stdout+r.stderr, secret)
		})
	}

	r := run(t, "", "replay", path+".missing", "--endpoint", "http://127.0.0.1:1")
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stderr, "missing")
	_, err := os.Stat(path + ".missing")
	assert.True(t, os.IsNotExist(err), "replay must not create a missing spool")
}
