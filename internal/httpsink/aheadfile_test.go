package httpsink

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// stopDuringReplay spools 3 events of a and b, replays them to an endpoint
// that always fails a1 and refuses b2, and stops the sink once b's lines
// were answered: a1 holds the offset, and b's lines are ahead of it.
func stopDuringReplay(t *testing.T, a, b uuid.UUID) (path string, endpoint *testServer) {
	t.Helper()
	path = writeSessions(t, []uuid.UUID{a, b}, 3)
	failA1, refuseB2 := eventBody(t, a, 1), eventBody(t, b, 2)
	f := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		switch string(body) {
		case failA1:
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		case refuseB2:
			return status(http.StatusBadRequest, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})
	f.start(t)
	require.Eventually(t, func() bool { return len(f.srv.all()) >= 5 }, // a1 twice, b1–b3
		5*time.Second, 10*time.Millisecond)
	shutdown(t, f)
	require.FileExists(t, path+".ahead")
	return path, f.srv
}

// What the endpoint answered past the acknowledged offset survives a
// graceful restart: the next sink settles those lines without posting
// them again, a refused one as dropped.
func TestReplayAheadSurvivesARestart(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	path, endpoint := stopDuringReplay(t, a, b)
	before := len(endpoint.all())
	endpoint.setDefault(ok)

	second := newFixture(t, FormatEvent, false, func(s *Settings) {
		s.Spool = openSpool(t, path, 0)
		s.Endpoint = endpoint.URL // the same endpoint: a sidecar holds only for the one it was written for
	})
	second.start(t)
	waitDrained(t, second.sink.spool, path)
	shutdown(t, second)

	got := perSession(acceptedSince(t, endpoint, before))
	assert.Equal(t, seqRange(1, 3), got[a])
	assert.Empty(t, got[b], "b's lines were answered before the restart")
	st := second.obs.stats()
	assert.Equal(t, 5, st.replayed)
	assert.Equal(t, 1, st.dropped[ReasonHTTP4xx])
	assert.NoFileExists(t, path+".ahead", "every line settled: nothing left to carry")
}

// A sidecar holds only for the endpoint it was written for: with another,
// its lines are sent again.
func TestReplayAheadIsIgnoredForAnotherEndpoint(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	path, _ := stopDuringReplay(t, a, b)

	second := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	second.srv.setDefault(ok)
	second.start(t)
	waitDrained(t, second.sink.spool, path)

	got := perSession(second.srv.acceptedEvents(t))
	assert.Equal(t, seqRange(1, 3), got[a])
	assert.Equal(t, seqRange(1, 3), got[b], "sent again to the new endpoint")
	assert.Equal(t, 1, second.logs.FilterMessageSnippet("Ignoring the spool's replay sidecar").Len())
}

// A batch whose head was settled in an earlier round (every line ahead)
// is settled without a post, and does not end the round as "not sent".
func TestReplayEventsHeadAlreadyAheadSettlesWithoutAPost(t *testing.T) {
	a := uuid.New()
	path := writeSessions(t, []uuid.UUID{a}, 3)
	f := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	for seq := int64(1); seq <= 3; seq++ {
		if f.sink.ahead == nil {
			f.sink.ahead = map[lineKey]outcome{}
		}
		f.sink.ahead[keyOf(makeLines(t, a, seq, seq, 10))] = outcome{acked: 1}
	}
	f.srv.setDefault(ok)
	f.start(t)
	waitDrained(t, f.sink.spool, path)

	assert.Empty(t, f.srv.all())
	assert.Equal(t, 3, f.obs.stats().replayed)
}

func acceptedSince(t *testing.T, ts *testServer, n int) []auditevent.Event {
	t.Helper()
	var out []auditevent.Event
	for _, a := range ts.all()[n:] {
		if a.accepted {
			out = append(out, decodeBody(t, a.body)...)
		}
	}
	return out
}

func shutdown(t *testing.T, f *fixture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, f.sink.Shutdown(ctx))
}

func TestReadAheadRefusesWhatItDidNotWrite(t *testing.T) {
	now := aheadHeader{inode: 7, offset: 10, endpoint: sha256.Sum256([]byte("http://x"))}
	header := now.String()
	earlier, other := now, now
	earlier.offset = 9
	other.endpoint[0]++
	digest := strings.Repeat("ab", 32)
	for name, content := range map[string]string{
		"no header":             digest + " 200\n",
		"an earlier offset":     earlier.String() + "\n" + digest + " 200\n",
		"another endpoint":      other.String() + "\n" + digest + " 200\n",
		"a short header":        aheadVersion + " 7 10\n" + digest + " 200\n",
		"short digest":          header + "\nabcd 200\n",
		"not hex":               header + "\n" + strings.Repeat("zz", 32) + " 200\n",
		"a 5xx status":          header + "\n" + digest + " 503\n",
		"a status refusing us":  header + "\n" + digest + " 401\n",
		"a status asking later": header + "\n" + digest + " 429\n",
		"no status":             header + "\n" + digest + "\n",
		"too many entries":      header + "\n" + manyAhead(aheadLimit+1),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl.ahead")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := readAhead(path, now, "http://x")
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// A sidecar written when the offset in memory was ahead of the one saved
// (the offset sidecar could not be written) still holds after a restart:
// the lines it names lie past both.
func TestReadAheadTakesASidecarPastTheSavedOffset(t *testing.T) {
	now := aheadHeader{inode: 7, offset: 10, endpoint: sha256.Sum256([]byte("http://x"))}
	later := now
	later.offset = 610
	path := filepath.Join(t.TempDir(), "spool.jsonl.ahead")
	require.NoError(t, os.WriteFile(path, []byte(later.String()+"\n"+strings.Repeat("ab", 32)+" 200\n"), 0o600))

	got, err := readAhead(path, now, "http://x")
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

func manyAhead(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%064x 200\n", i)
	}
	return b.String()
}

func TestReadAheadReadsWhatSaveAheadWrote(t *testing.T) {
	f := newFixture(t, FormatEvent, true)
	k1, k2 := keyOf([]byte("one\n")), keyOf([]byte("two\n"))
	f.sink.ahead = map[lineKey]outcome{k1: {acked: 1}, k2: {refused: 1, refusal: &StatusError{Code: 422}}}
	f.sink.saveAhead()

	got, err := readAhead(f.spoolPath+".ahead", f.sink.aheadHeader(), "http://x")
	require.NoError(t, err)
	assert.Equal(t, outcome{acked: 1}, got[k1])
	assert.Equal(t, 1, got[k2].refused)
	assert.Equal(t, 422, got[k2].refusal.Code)
	fi, err := os.Stat(f.spoolPath + ".ahead")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// A sidecar that is a symlink is not followed: it is set aside with a
// warning, and the lines are sent again.
func TestLoadAheadDoesNotFollowASymlink(t *testing.T) {
	f := newFixture(t, FormatEvent, true)
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte(f.sink.aheadHeader().String()+"\n"+strings.Repeat("ab", 32)+" 200\n"), 0o600))
	require.NoError(t, os.Symlink(target, f.spoolPath+".ahead"))

	f.sink.loadAhead()
	assert.Empty(t, f.sink.ahead)
	assert.Equal(t, 1, f.logs.FilterMessageSnippet("Ignoring the spool's replay sidecar").Len())
	assert.NoFileExists(t, f.spoolPath+".ahead")
	assert.FileExists(t, target)
}

// A temporary file left by a crash while saving is removed at the next
// start; nothing else would.
func TestLoadAheadRemovesALeftoverTemporaryFile(t *testing.T) {
	f := newFixture(t, FormatEvent, true)
	require.NoError(t, os.WriteFile(f.spoolPath+".ahead.tmp", []byte("half"), 0o600))

	f.sink.loadAhead()
	assert.NoFileExists(t, f.spoolPath+".ahead.tmp")
}
