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

// TestOutageThenRecovery is the delivery contract: while the endpoint is
// down every batch goes to the spool; once it answers again every event
// arrives exactly once, in order, and the spool ends empty.
func TestOutageThenRecovery(t *testing.T) {
	for _, format := range []Format{FormatEvent, FormatNDJSON} {
		for _, mode := range []string{"refused", "503"} {
			t.Run(string(format)+"/"+mode, func(t *testing.T) {
				f := newFixture(t, format, true, func(s *Settings) {
					s.Retry.MaxElapsedTime = 300 * time.Millisecond
					s.MaxBatchLines = 7 // replay batches cut across Send batches
				})
				f.start(t)
				session := uuid.New()
				const batch = 5
				send := func(i int64) {
					lines := makeLines(t, session, (i-1)*batch+1, i*batch, 40)
					require.NoError(t, f.sink.Send(sendCtx(t), lines, batch), "batch %d", i)
				}

				if mode == "refused" {
					f.srv.down()
				} else {
					f.srv.setDefault(status(503, nil, "down for maintenance"))
				}
				for i := int64(1); i <= 10; i++ {
					send(i)
				}
				require.True(t, f.spool.Pending())
				require.Empty(t, f.srv.acceptedEvents(t), "nothing got through while down")
				require.Equal(t, 50, f.obs.stats().spooled)

				if mode == "refused" {
					f.srv.up()
				} else {
					f.srv.setDefault(ok)
				}
				// Keep sending while the spool drains: these must not
				// overtake the spooled events.
				for i := int64(11); i <= 20; i++ {
					send(i)
					time.Sleep(3 * time.Millisecond)
				}
				f.waitSpoolEmpty(t)
				require.Eventually(t, func() bool { return len(f.srv.acceptedEvents(t)) >= 100 },
					10*time.Second, 10*time.Millisecond)

				require.Equal(t, seqRange(1, 100), seqs(f.srv.acceptedEvents(t)), "exactly once, in order")
				require.Zero(t, f.spool.Size())
				require.Empty(t, spoolFileBytes(t, f.spoolPath))
				st := f.obs.stats()
				require.Equal(t, 100, st.sent+st.replayed)
				require.Equal(t, int64(0), st.lastSpoolSize)
				wantCT := map[Format]string{FormatEvent: "application/json", FormatNDJSON: "application/x-ndjson"}[format]
				for _, a := range f.srv.all() {
					require.Equal(t, wantCT, a.contentType)
					if format == FormatEvent {
						require.NotContains(t, string(a.body), "\n", "replayed events are sent bare too")
					}
				}
			})
		}
	}
}

// TestCrashAfterAckBeforeOffsetPersisted: the endpoint acknowledged spooled
// lines but the process died before the spool's offset reached the disk.
// The next run resends them (at-least-once); event_id makes the duplicates
// detectable, and deduplicating by it gives exactly the original set.
func TestCrashAfterAckBeforeOffsetPersisted(t *testing.T) {
	srv := newTestServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "spool.jsonl")
	session := uuid.New()
	run := func(t *testing.T, send func(*Sink)) {
		retry := fastRetry()
		retry.MaxElapsedTime = 300 * time.Millisecond
		sk, err := New(Settings{Endpoint: srv.URL, Format: FormatNDJSON, Retry: retry,
			Spool: openSpool(t, path, 0), ReplayInterval: 20 * time.Millisecond, MaxBatchLines: 4})
		require.NoError(t, err)
		require.NoError(t, sk.Start(context.Background()))
		send(sk)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sk.Shutdown(ctx))
	}

	// Run 1: endpoint down, everything is spooled.
	srv.down()
	run(t, func(sk *Sink) {
		for i := int64(0); i < 3; i++ {
			require.NoError(t, sk.Send(sendCtx(t), makeLines(t, session, i*5+1, i*5+5, 20), 5))
		}
	})
	backup := snapshotFiles(t, dir)

	// Run 2: endpoint up, the replayer delivers and trims.
	srv.up()
	run(t, func(sk *Sink) {
		require.Eventually(t, func() bool { return !sk.spool.Pending() }, 10*time.Second, 10*time.Millisecond)
	})
	require.Equal(t, seqRange(1, 15), seqs(srv.acceptedEvents(t)))

	// The crash: the disk is as it was before the acknowledgements were
	// recorded.
	restoreFiles(t, dir, backup)

	// Run 3: the lines are sent again.
	run(t, func(sk *Sink) {
		require.Eventually(t, func() bool { return !sk.spool.Pending() }, 10*time.Second, 10*time.Millisecond)
	})
	got := srv.acceptedEvents(t)
	require.Len(t, got, 30, "every line twice: at-least-once")
	seen := map[uuid.UUID]int64{}
	for _, e := range got {
		seen[e.EventID] = e.Seq
	}
	want := map[uuid.UUID]int64{}
	for _, e := range decodeBody(t, makeLines(t, session, 1, 15, 20)) {
		want[e.EventID] = e.Seq
	}
	require.Equal(t, want, seen, "deduplicated by event_id: exactly the original events")
}

// snapshotFiles copies every regular file in dir (the spool and its
// offset file), skipping the lock file, which belongs to the open spool.
func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Type().IsRegular() && filepath.Ext(e.Name()) != ".lock" {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = b
		}
	}
	require.NotEmpty(t, out["spool.jsonl"])
	return out
}

func restoreFiles(t *testing.T, dir string, snap map[string][]byte) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if _, keep := snap[e.Name()]; !keep && filepath.Ext(e.Name()) != ".lock" {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
	for name, b := range snap {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
}

// TestLeftoverSpoolGoesFirst: lines spooled by an earlier run are
// delivered before lines sent in this run.
func TestLeftoverSpoolGoesFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spool.jsonl")
	session := uuid.New()
	// A spool written by an earlier run.
	writeSpool(t, path, makeLines(t, session, 1, 20, 10))

	f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
		s.Spool = openSpool(t, path, 0)
		s.MaxBatchLines = 3
	})
	// Slow the endpoint a little so the new batch arrives mid-replay.
	f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, b []byte) bool {
		time.Sleep(2 * time.Millisecond)
		return ok(w, r, b)
	})
	f.start(t)
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 21, 25, 10), 5))
	require.Eventually(t, func() bool { return len(f.srv.acceptedEvents(t)) >= 25 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, seqRange(1, 25), seqs(f.srv.acceptedEvents(t)))
	waitDrained(t, f.sink.spool, path)
}
