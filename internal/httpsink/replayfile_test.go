package httpsink

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func replaySettings(url string, format Format) Settings {
	return Settings{
		Client:   &http.Client{Timeout: 2 * time.Second},
		Endpoint: url,
		Format:   format,
		Retry:    fastRetry(),
	}
}

func TestReplayFileSendsInOrderAndTrims(t *testing.T) {
	for _, format := range []Format{FormatEvent, FormatNDJSON} {
		t.Run(string(format), func(t *testing.T) {
			srv := newTestServer(t)
			srv.then(status(502, nil, "")) // one hiccup, retried
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			writeSpool(t, path, makeLines(t, uuid.New(), 1, 12, 30))
			set := replaySettings(srv.URL, format)
			set.MaxBatchLines = 5

			sent, err := ReplayFile(sendCtx(t), path, set, false)

			require.NoError(t, err)
			require.Equal(t, 12, sent)
			require.Equal(t, seqRange(1, 12), seqs(srv.acceptedEvents(t)))
			require.Empty(t, spoolFileBytes(t, path))
			wantRequests := map[Format]int{FormatEvent: 12, FormatNDJSON: 3}[format]
			require.Len(t, srv.all(), wantRequests+1)
		})
	}
}

func TestReplayFileNeverSendsATornLine(t *testing.T) {
	srv := newTestServer(t)
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	whole := makeLines(t, uuid.New(), 1, 3, 10)
	torn := makeLines(t, uuid.New(), 4, 4, 10)
	// A crash in the middle of writing the fourth line.
	writeSpool(t, path, append(append([]byte{}, whole...), torn[:len(torn)/2]...))

	sent, err := ReplayFile(sendCtx(t), path, replaySettings(srv.URL, FormatEvent), false)

	require.NoError(t, err)
	require.Equal(t, 3, sent)
	require.Equal(t, seqRange(1, 3), seqs(srv.acceptedEvents(t)))
	require.Len(t, srv.all(), 3)
}

func TestReplayFileStopsOnPermanentErrorAndKeepsLines(t *testing.T) {
	srv := newTestServer(t)
	srv.then(ok)
	srv.setDefault(status(403, nil, "forbidden"))
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	lines := makeLines(t, uuid.New(), 1, 4, 10)
	writeSpool(t, path, lines)

	sent, err := ReplayFile(sendCtx(t), path, replaySettings(srv.URL, FormatEvent), false)

	require.Error(t, err)
	require.Contains(t, err.Error(), "403")
	require.Equal(t, 1, sent)
	require.Len(t, srv.all(), 2, "a 403 is not retried")

	// The next run starts at the first unacknowledged line.
	srv.setDefault(ok)
	sent, err = ReplayFile(sendCtx(t), path, replaySettings(srv.URL, FormatEvent), false)
	require.NoError(t, err)
	require.Equal(t, 3, sent)
	require.Equal(t, seqRange(1, 4), seqs(srv.acceptedEvents(t)))
}

func TestReplayFileMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.jsonl")
	_, err := ReplayFile(context.Background(), path, replaySettings("http://127.0.0.1:1/", FormatNDJSON), false)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, statErr := os.Stat(path)
	require.ErrorIs(t, statErr, os.ErrNotExist, "not created")
}

// An endpoint whose body limit is below a batch (413) gets the batch in
// halves, in order, as the exporter's replayer sends it, rather than the
// run stopping at the first batch with nothing sent.
func TestReplayFileHalvesOnA413(t *testing.T) {
	srv := newTestServer(t)
	const limit = 1500
	srv.setDefault(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if len(body) > limit {
			return status(http.StatusRequestEntityTooLarge, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	lines := makeLines(t, uuid.New(), 1, 12, 300)
	require.Greater(t, len(lines), 4*limit)
	writeSpool(t, path, lines)
	set := replaySettings(srv.URL, FormatNDJSON)
	set.MaxBatchLines = 12

	sent, err := ReplayFile(sendCtx(t), path, set, false)

	require.NoError(t, err)
	require.Equal(t, 12, sent)
	require.Equal(t, seqRange(1, 12), seqs(srv.acceptedEvents(t)))
	require.Empty(t, spoolFileBytes(t, path))
}
