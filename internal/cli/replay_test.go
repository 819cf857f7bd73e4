package cli

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/tlstest"
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

// spoolFixture is a spool the exporter left: three lines, not sent.
func spoolFixture(t *testing.T) (path, content string) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, _ := op(sessionA, "read", "span-2", 3, 4)
	content = canonLines(s1, f1, s2)
	path = filepath.Join(t.TempDir(), "spool.jsonl")
	sp, err := spool.Open(context.Background(), spool.Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, sp.Append(context.Background(), []byte(content)))
	require.NoError(t, sp.Close())
	return path, content
}

// unspooledAuditFile writes an audit file (lines, no .offset sidecar), what
// replay refuses without --adopt, and returns its path and content.
func unspooledAuditFile(t *testing.T) (path, content string) {
	t.Helper()
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	content = canonLines(s1, f1)
	return writeFile(t, "events.jsonl", content), content
}

// damageFirstLine overwrites the first line of the spool at path, holding
// content, with NUL bytes, and returns that line's length.
func damageFirstLine(t *testing.T, path, content string) int {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	first := strings.Index(content, "\n")
	_, err = f.WriteAt([]byte(strings.Repeat("\x00", first)), 0)
	require.NoError(t, errors.Join(err, f.Close()))
	return first
}

// TestReplayRefusesAFileThatIsNotASpool: an audit file named by mistake
// (it has lines and no .offset sidecar) is left as it is, and the message
// says how to replay another program's spool; with --adopt it is sent and
// trimmed, as the Python sink's spool_path file would be.
func TestReplayRefusesAFileThatIsNotASpool(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := unspooledAuditFile(t)

	r := run(t, "", "replay", path, "--endpoint", srv.URL)
	require.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--adopt")
	assert.Empty(t, rc.requests())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(got), "the file is left as it was")

	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--adopt")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, rc.requests(), 1)
	assert.Equal(t, content, rc.requests()[0].body)
}

// TestReplaySetsDamagedLinesAside: a line that is not a valid event is
// not sent; the lines around it are, and the exit status and stderr say
// where the damaged one went.
func TestReplaySetsDamagedLinesAside(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)
	first := damageFirstLine(t, path, content)

	r := run(t, "", "replay", path, "--endpoint", srv.URL)
	require.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 2 lines")
	assert.Contains(t, r.stderr, "1 damaged line was not a valid audit event and was not sent; it is in")
	assert.Contains(t, r.stderr, path+".quarantine")
	require.Len(t, rc.requests(), 1)
	assert.Equal(t, content[first+1:], rc.requests()[0].body)
	q, err := os.ReadFile(path + ".quarantine")
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("\x00", first)+"\n", string(q))
}

const secret = "s3cr3t-token-value"

func TestReplayNDJSON(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)

	r := run(t, "", "replay", path, "--endpoint", srv.URL+"/v1/sandbox/events", "--header", "X-Audit-Token="+secret)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 3 lines")
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
	assert.Contains(t, r.stdout, "sent 0 lines")
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

// TestReplayNeverPrintsResponseBodies: an endpoint that echoes the
// request's headers in its error body (400, 401, and 503 until retries are
// spent) never gets the --header value onto the terminal; the output names
// the status and the body's length.
func TestReplayNeverPrintsResponseBodies(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			echo := "token was " + secret
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(code)
				_, _ = io.WriteString(w, "token was "+r.Header.Get("X-Audit-Token"))
			}))
			defer srv.Close()
			path, content := spoolFixture(t)

			r := run(t, "", "replay", path, "--endpoint", srv.URL, "--header", "X-Audit-Token="+secret, "--retry-for", "0s")
			assert.Equal(t, exitProblems, r.code)
			assert.NotContains(t, r.stdout+r.stderr, secret)
			assert.Contains(t, r.stderr, fmt.Sprintf("HTTP %d", code))
			assert.Contains(t, r.stderr, fmt.Sprintf("(response body: %d bytes)", len(echo)))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, content, string(b), "nothing trimmed")
		})
	}
}

// TestReplayRefusesASpoolInUse: while a collector owns the spool (its lock
// is held), a by-hand replay must not send or trim anything behind its back.
func TestReplayRefusesASpoolInUse(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)

	owner, err := spool.Open(context.Background(), spool.Options{Path: path})
	require.NoError(t, err)
	r := run(t, "", "replay", path, "--endpoint", srv.URL)
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stderr, "in use")
	assert.Contains(t, r.stderr, "a running collector (its http.spool) or another replay holds it: stop that first")
	assert.Empty(t, rc.requests())
	require.NoError(t, owner.Close())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(b), "the refused replay changed the spool")

	// Once the owner is gone, the same command sends everything.
	r = run(t, "", "replay", path, "--endpoint", srv.URL)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 3 lines")
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
	assert.Contains(t, r.stdout, "sent 3 lines")
}

func TestReplayTLSWithCAFile(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewUnstartedServer(rc)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	path, content := spoolFixture(t)

	// A CA that did not sign the server's certificate is refused ...
	// (httptest servers all share one built-in certificate, so a fresh one
	// stands in for the wrong CA.)
	wrongCA := writeFile(t, "wrong-ca.pem", string(tlstest.New(t).CertPEM))
	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--retry-for", "0", "--ca-file", wrongCA)
	assert.Equal(t, exitProblems, r.code)
	assert.Empty(t, rc.requests())

	// ... the one that did is trusted, with verification on.
	ca := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--ca-file", ca)
	require.Equal(t, exitOK, r.code, r.stderr)
	var got strings.Builder
	for _, req := range rc.requests() {
		got.WriteString(req.body)
	}
	assert.Equal(t, content, got.String())

	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--ca-file", filepath.Join(t.TempDir(), "missing.pem"))
	assert.Equal(t, exitUsage, r.code)
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

	r := run(t, "", "replay", path, "--endpoint", "http://127.0.0.1:1", "--header", "Authorization: Bearer "+secret)
	assert.Contains(t, r.stderr, "--header: 1 value not in KEY=VALUE form")

	r = run(t, "", "replay", path+".missing", "--endpoint", "http://127.0.0.1:1")
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stderr, "missing")
	_, err := os.Stat(path + ".missing")
	assert.True(t, os.IsNotExist(err), "replay must not create a missing spool")
}

// TestReplayRefusesBadFlagsUpFront: a FIFO as --ca-file (the client's read
// of it hung the command past SIGTERM) and a header no request can carry
// (retried for --retry-for and blamed on the response) are usage errors
// before anything is sent.
func TestReplayRefusesBadFlagsUpFront(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, _ := spoolFixture(t)
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--ca-file", fifo)
	require.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--ca-file: "+fifo+" is not a regular file")

	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--header", "Authorization: Bearer "+secret+"=v")
	require.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, `--header: the header name "Authorization" is followed by`)
	assert.NotContains(t, r.stderr, secret)
	assert.Empty(t, rc.requests())
}

// A --ca-file that is missing or holds no certificate is named by its
// flag, not as the HTTP client's failure.
func TestReplayNamesABadCAFile(t *testing.T) {
	path, _ := spoolFixture(t)
	notPEM := writeFile(t, "ca.pem", "not a certificate\n")
	for _, ca := range []string{filepath.Join(t.TempDir(), "missing.pem"), notPEM} {
		r := run(t, "", "replay", path, "--endpoint", "https://127.0.0.1:1", "--ca-file", ca)
		require.Equal(t, exitUsage, r.code, r.stderr)
		assert.Contains(t, r.stderr, "replay: --ca-file "+ca+": ")
		assert.NotContains(t, r.stderr, "http client")
	}
}

// An audit file replayed with --adopt by mistake (the refusal suggests the
// flag) is sent and trimmed, but the file as found stays under a second
// name, as when the collector adopts a spool, and stderr names it.
func TestReplayAdoptKeepsTheFileAsFound(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := unspooledAuditFile(t)

	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--adopt")
	require.Equal(t, exitOK, r.code, r.stderr)
	kept, err := filepath.Glob(path + ".adopted-*")
	require.NoError(t, err)
	require.Len(t, kept, 1, r.stderr)
	assert.Contains(t, r.stderr, kept[0])
	assert.Contains(t, r.stderr, "it is taken as a spool, as --adopt asks")
	got, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	assert.Equal(t, content, string(got))

	// A spool with its sidecar is not copied again.
	r = run(t, "", "replay", path, "--endpoint", srv.URL, "--adopt")
	require.Equal(t, exitOK, r.code, r.stderr)
	again, err := filepath.Glob(path + ".adopted-*")
	require.NoError(t, err)
	assert.Equal(t, kept, again)
}

// A file with a signed log's sidecars is an audit file, whatever --adopt
// says: replay refuses it and sends nothing.
func TestReplayAdoptRefusesASealedAuditFile(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, _, _ := sealedFixture(t)
	before := readFile(t, path)
	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--adopt")
	require.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stderr, "replay: "+path+" is an audit file (it has "+filepath.Base(integrity.StorePath(path))+"), not a spool; nothing was sent")
	assert.Empty(t, rc.requests())
	assert.Equal(t, before, readFile(t, path))
}

// An endpoint that does not answer in time is named as the --timeout
// expiring, whether it stalls on the headers or on the body.
func TestReplaySaysTheTimeoutExpired(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()               // never answers; the client's timeout ends it
	}))
	defer srv.Close()
	path, _ := spoolFixture(t)
	r := run(t, "", "replay", path, "--endpoint", srv.URL, "--timeout", "50ms", "--retry-for", "0")
	require.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no answer within --timeout 50ms")
}
