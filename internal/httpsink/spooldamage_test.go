package httpsink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// damage changes the spool file at path behind the running sink, given the
// lines acknowledged so far in file order; it returns the lines that are
// still intact.
type damage func(t *testing.T, path string, acked [][]byte) (intact [][]byte)

// The spool is damaged while the endpoint is down and the collector runs:
// once the endpoint is back, every intact acknowledged event arrives within
// 30 s, without a restart, and nothing else does (no damaged line, no
// secret written into the file). Events acknowledged after the damage
// arrive too: none is merged into a torn line.
func TestSpoolDamageWhileRunning(t *testing.T) {
	for name, harm := range map[string]damage{
		"13 bytes inserted":       insertBytes,
		"lines overwritten":       overwriteLines,
		"last 100 bytes cut":      cutTail,
		"offset sidecar deleted":  deleteSidecar,
		"overwritten at the tail": overwriteLast,
	} {
		for _, format := range []Format{FormatNDJSON, FormatEvent} {
			t.Run(name+"/"+string(format), func(t *testing.T) { testSpoolDamage(t, format, harm) })
		}
	}
}

func testSpoolDamage(t *testing.T, format Format, harm damage) {
	f := newCheckedFixture(t, format)
	f.start(t)
	f.srv.down()
	session := uuid.New()
	var acked [][]byte
	send := func(from, to int64) {
		lines := makeLines(t, session, from, to, 60)
		require.NoError(t, f.sink.Send(sendCtx(t), lines, int(to-from+1)))
		acked = append(acked, splitLines(lines)...)
	}
	send(1, 20)
	send(21, 40)
	require.Equal(t, acked, splitLines(spoolFileBytes(t, f.spoolPath)), "all spooled while down")

	intact := harm(t, f.spoolPath, acked)
	send(41, 50) // acknowledged after the damage
	intact = append(intact, acked[40:]...)
	require.Eventually(t, func() bool { return f.logs.FilterMessageSnippet("spool replay failed").Len() > 0 },
		10*time.Second, 10*time.Millisecond, "the cause of a failed round at WARN")

	f.srv.up()
	waitReceived(t, f.srv, format, len(intact), 30*time.Second)
	f.waitSpoolEmpty(t)
	require.ElementsMatch(t, rawLines(intact), receivedLines(f.srv, format), "exactly the intact acknowledged events")
	for _, a := range f.srv.all() {
		require.NotContains(t, string(a.body), "hunter2", "garbage never leaves the machine")
	}
	requireNoDamagedBytesLogged(t, f)
	if lost := len(acked) - len(intact); lost > 0 {
		require.Equal(t, lost, f.obs.stats().quarantined, "each damaged line quarantined and counted")
		requireQuarantineFile(t, f.spoolPath)
		require.NotZero(t, f.logs.FilterMessageSnippet("spool line is not a valid audit event").Len())
	}
	require.Equal(t, 1, f.logs.FilterMessageSnippet("spool replay failed").Len(), "once per episode")

	// A restart takes the spool as it is left: no refusal.
	require.NoError(t, f.sink.Shutdown(context.Background()))
	sp, err := spool.Open(context.Background(), spool.Options{Path: f.spoolPath})
	require.NoError(t, err)
	require.NoError(t, sp.Close())
}

// newCheckedFixture is a fixture whose spool vets lines as the exporter's
// does.
func newCheckedFixture(t *testing.T, format Format) *fixture {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	sp, err := spool.Open(context.Background(), spool.Options{Path: path, Check: spool.CanonicalEvent, AdoptValid: true})
	require.NoError(t, err)
	f := newFixture(t, format, false, func(s *Settings) {
		s.Spool = sp
		s.Retry.MaxElapsedTime = 300 * time.Millisecond
		s.MaxBatchLines = 7
	})
	f.spool, f.spoolPath = sp, path
	return f
}

// inserted is 13 bytes that no JSON text holds (raw NULs), wherever they
// land.
const inserted = "\x00INSERTED13\x00\x00"

// insertBytes puts 13 bytes into the middle of line 10 in place: the file
// grows, line 10 is damaged and every line after it moves.
func insertBytes(t *testing.T, path string, acked [][]byte) [][]byte {
	off := offsetOf(acked, 9) + int64(len(acked[9])/2)
	rewriteFrom(t, path, off, func(rest []byte) []byte { return append([]byte(inserted), rest...) })
	return slices.Concat(acked[:9], acked[10:])
}

// overwriteLines writes garbage over lines 4, 12 and 30 (NUL, 0xFF, a
// secret), keeping their length and newline.
func overwriteLines(t *testing.T, path string, acked [][]byte) [][]byte {
	for i, fill := range map[int]string{3: "\x00", 11: "\xff", 29: "secret=hunter2 "} {
		n := len(acked[i]) - 1
		writeAt(t, path, offsetOf(acked, i), []byte(strings.Repeat(fill, n)[:n]))
	}
	return slices.Concat(acked[:3], acked[4:11], acked[12:29], acked[30:])
}

// overwriteLast overwrites the last line and its newline: the next append
// must not join it.
func overwriteLast(t *testing.T, path string, acked [][]byte) [][]byte {
	last := len(acked) - 1
	writeAt(t, path, offsetOf(acked, last), bytes.Repeat([]byte("secret=hunter2 "), len(acked[last]))[:len(acked[last])])
	return acked[:last]
}

// cutTail cuts the file's last 100 bytes: the line they end is torn, and
// the lines before it stay intact.
func cutTail(t *testing.T, path string, acked [][]byte) [][]byte {
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, fi.Size()-100))
	var intact [][]byte
	for i := range acked {
		if offsetOf(acked, i)+int64(len(acked[i])) <= fi.Size()-100 {
			intact = append(intact, acked[i])
		}
	}
	require.Less(t, len(intact), len(acked))
	return intact
}

// deleteSidecar removes the .offset sidecar; the running spool writes it
// again (and says so) before the endpoint returns.
func deleteSidecar(t *testing.T, path string, acked [][]byte) [][]byte {
	require.NoError(t, os.Remove(path+".offset"))
	require.Eventually(t, func() bool {
		_, err := os.Stat(path + ".offset")
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "sidecar written again")
	return acked
}

// offsetOf is where line i of lines starts in their concatenation.
func offsetOf(lines [][]byte, i int) int64 {
	var off int64
	for _, l := range lines[:i] {
		off += int64(len(l))
	}
	return off
}

// rewriteFrom replaces the file from off with edit(the bytes from off), in
// place with one write, as an editor saving over the file would.
func rewriteFrom(t *testing.T, path string, off int64, edit func([]byte) []byte) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	writeAt(t, path, off, edit(slices.Clone(b[off:])))
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// rawLines is lines without their newlines.
func rawLines(lines [][]byte) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(bytes.TrimSuffix(l, []byte{'\n'}))
	}
	return out
}

// receivedLines is every line the endpoint accepted, as it arrived.
func receivedLines(ts *testServer, format Format) []string {
	var out []string
	for _, a := range ts.all() {
		if !a.accepted {
			continue
		}
		if format == FormatEvent {
			out = append(out, string(a.body))
			continue
		}
		out = append(out, rawLines(splitLines(a.body))...)
	}
	return out
}

// waitReceived waits, at most limit, for n accepted lines.
func waitReceived(t *testing.T, ts *testServer, format Format, n int, limit time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return len(receivedLines(ts, format)) >= n },
		limit, 20*time.Millisecond, "intact events not all delivered within %s of the endpoint's return", limit)
}

// requireNoDamagedBytesLogged checks that no log line quotes what was
// written into the file.
func requireNoDamagedBytesLogged(t *testing.T, f *fixture) {
	t.Helper()
	for _, e := range f.logs.All() {
		require.NotContains(t, e.Message, "hunter2")
		for k, v := range e.ContextMap() {
			require.NotContains(t, toString(v), "hunter2", "log field %s", k)
			require.NotContains(t, toString(v), "INSERTED13", "log field %s", k)
		}
	}
}

// requireQuarantineFile checks the quarantine file beside the spool is
// private and holds whole lines.
func requireQuarantineFile(t *testing.T, spoolPath string) {
	t.Helper()
	fi, err := os.Lstat(spoolPath + ".quarantine")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(spoolPath + ".quarantine")
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte{'\n'}), "whole lines")
}
