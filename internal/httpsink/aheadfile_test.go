package httpsink

import (
	"context"
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
)

// What the endpoint answered past the acknowledged offset survives a
// graceful restart: the next sink settles those lines without posting
// them again, a refused one as dropped.
func TestReplayAheadSurvivesARestart(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	path := writeSessions(t, []uuid.UUID{a, b}, 3)
	failA1, refuseB2 := eventBody(t, a, 1), eventBody(t, b, 2)

	first := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	first.srv.setDefault(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		switch string(body) {
		case failA1:
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		case refuseB2:
			return status(http.StatusBadRequest, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})
	first.start(t)
	require.Eventually(t, func() bool { return len(first.srv.all()) >= 5 }, // a1 twice, b1–b3
		5*time.Second, 10*time.Millisecond)
	shutdown(t, first)
	require.FileExists(t, path+".ahead")

	second := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	second.srv.setDefault(ok)
	second.start(t)
	waitDrained(t, second.sink.spool, path)

	got := perSession(second.srv.acceptedEvents(t))
	assert.Equal(t, seqRange(1, 3), got[a])
	assert.Empty(t, got[b], "b's lines were answered before the restart")
	st := second.obs.stats()
	assert.Equal(t, 5, st.replayed)
	assert.Equal(t, 1, st.dropped[ReasonHTTP4xx])
	assert.NoFileExists(t, path+".ahead")
}

func shutdown(t *testing.T, f *fixture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, f.sink.Shutdown(ctx))
}

func TestReadAheadRefusesWhatItDidNotWrite(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for name, content := range map[string]string{
		"no header":        digest + " 200\n",
		"short digest":     aheadHeader + "\nabcd 200\n",
		"not hex":          aheadHeader + "\n" + strings.Repeat("zz", 32) + " 200\n",
		"a 5xx status":     aheadHeader + "\n" + digest + " 503\n",
		"no status":        aheadHeader + "\n" + digest + "\n",
		"too many entries": aheadHeader + "\n" + manyAhead(2*replayEventsSpan+1),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl.ahead")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := readAhead(path, "http://x")
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
		})
	}
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
	f.sink.ahead = map[lineKey]halved{k1: {acked: 1}, k2: {refused: 1, refusal: &StatusError{Code: 422}}}
	f.sink.saveAhead()

	got, err := readAhead(f.spoolPath+".ahead", "http://x")
	require.NoError(t, err)
	assert.Equal(t, halved{acked: 1}, got[k1])
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
	require.NoError(t, os.WriteFile(target, []byte(aheadHeader+"\n"+strings.Repeat("ab", 32)+" 200\n"), 0o600))
	require.NoError(t, os.Symlink(target, f.spoolPath+".ahead"))

	f.sink.loadAhead()
	assert.Empty(t, f.sink.ahead)
	assert.Equal(t, 1, f.logs.FilterMessageSnippet("Ignoring the spool's replay sidecar").Len())
	assert.NoFileExists(t, f.spoolPath+".ahead")
	assert.FileExists(t, target)
}
