package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// pythonSink appends the lines of SRC to PATH two at a time (a start and
// its finish), each pair under flock(LOCK_EX) with one write and a flush,
// as the Python JsonlOutboxSink does, pausing DELAY seconds between pairs.
const pythonSink = `
import fcntl, os, sys, time
path, src, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
lines = open(src, "rb").read().splitlines(keepends=True)
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
with os.fdopen(fd, "ab", buffering=0) as f:
    for i in range(0, len(lines), 2):
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.write(b"".join(lines[i:i + 2]))
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
        time.sleep(delay)
`

// pythonLines writes n start/finish pairs of one session as canonical lines.
func pythonLines(t *testing.T, dir string, session uuid.UUID, pairs int) string {
	t.Helper()
	p := filepath.Join(dir, session.String()+".src")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(pairLines(session, pairs), "")), 0o600))
	return p
}

// pairLines is pairs start/finish pairs of one session, canonical lines.
func pairLines(session uuid.UUID, pairs int) []string {
	var out []string
	ts := auditevent.TimestampFromTime(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	for i := range pairs {
		span := fmt.Sprintf("sandbox_op_%032x", i+1)
		start := auditevent.Event{
			Version: 1, EventID: uuid.NewSHA1(session, []byte(span+"s")), TS: ts, SessionID: session,
			Seq: int64(2*i + 1), Op: "exec", Phase: auditevent.PhaseStart, SpanID: span,
		}
		finish := start
		finish.EventID = uuid.NewSHA1(session, []byte(span+"f"))
		finish.Seq++
		finish.Phase = auditevent.PhaseFinish
		finish.OK = true
		finish.DurationMS = 12.5
		out = append(out, string(auditevent.Line(&start)), string(auditevent.Line(&finish)))
	}
	return out
}

// postLines posts each line as one event to the sandboxaudit receiver.
func postLines(t *testing.T, sandboxAddr string, lines []string) {
	t.Helper()
	for _, l := range lines {
		postEvent(t, "http://"+sandboxAddr+"/v1/sandbox/events", strings.TrimSuffix(l, "\n"))
	}
}

func runPythonSink(ctx context.Context, path, src string, delay time.Duration) *exec.Cmd {
	return exec.CommandContext(ctx, "python3", "-c", pythonSink, path, src, fmt.Sprint(delay.Seconds()))
}

func integrityConfig(sandboxAddr, auditPath, keyPath, interval string) string {
	return collectorYAML{
		sandboxAddr: sandboxAddr,
		batch:       "timeout: 100ms",
		exporter:    fmt.Sprintf("file:\n  path: %s\n  integrity:\n    signing_key_file: %s\n    checkpoint_interval: %s", auditPath, keyPath, interval),
	}.String()
}

func keygen(t *testing.T, dir string) (keyPath, pubPath string) {
	t.Helper()
	code, out := runCLI(t, "keygen", "--name", "e2e-audit", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, code, out)
	return filepath.Join(dir, "keys", "e2e-audit.key"), filepath.Join(dir, "keys", "e2e-audit.pub")
}

// copySealed copies an audit file and its sidecars into a fresh directory.
func copySealed(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", ".tlog", ".checkpoints"} {
		b, err := os.ReadFile(path + suffix)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst+suffix, b, 0o600))
	}
	return dst
}

func splitLines(t *testing.T, path string) []string {
	t.Helper()
	ls := strings.SplitAfter(string(mustRead(t, path)), "\n")
	return ls[:len(ls)-1] // each with its newline; the file ends with one
}

func TestIntegrityCollectorAndPythonWriter(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, integrityConfig(sandboxAddr, auditPath, keyPath, "200ms"), sandboxAddr)

	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 6))
	waitLines(t, auditPath, 12)
	pySession := uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	out, err := runPythonSink(ctx, auditPath, pythonLines(t, dir, pySession, 2), 0).CombinedOutput()
	require.NoError(t, err, "%s", out)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("22222222-3333-4444-8555-666666666666"), 6))
	waitLines(t, auditPath, 28)
	col.stop(t)

	for _, p := range []string{auditPath, auditPath + ".tlog", auditPath + ".checkpoints"} {
		requireMode(t, p, 0o600)
	}
	code, vout := runCLI(t, "verify", "--key", pubPath, auditPath)
	require.Equal(t, 0, code, vout)
	require.Contains(t, vout, "integrity: lines=28 sealed=28 unsealed=0")

	lines := splitLines(t, auditPath)
	require.Contains(t, lines[12], pySession.String(), "lines 13-16 are the Python writer's")
	startOf, finishOf := findPair(t, lines[:12])
	tampers := []struct {
		name string
		edit func(ls []string) []string
		want string
	}{
		{"changed digit of duration_ms", func(ls []string) []string {
			ls[13] = strings.Replace(ls[13], `"duration_ms":12.5`, `"duration_ms":12.6`, 1)
			return ls
		}, ":14: integrity: line 14:"},
		{"deleted start/finish pair", func(ls []string) []string {
			var out []string
			for i, l := range ls {
				if i != startOf && i != finishOf {
					out = append(out, l)
				}
			}
			return out
		}, fmt.Sprintf(":%d: integrity: line %d:", startOf+1, startOf+1)},
		{"two lines swapped", func(ls []string) []string {
			ls[20], ls[21] = ls[21], ls[20]
			return ls
		}, ":21: integrity: line 21:"},
		{"duplicated line", func(ls []string) []string {
			return append(ls[:6:6], append([]string{ls[5]}, ls[6:]...)...)
		}, ":7: integrity: line 7:"},
		{"changed line of the Python writer", func(ls []string) []string {
			ls[12] = strings.Replace(ls[12], `"op":"exec"`, `"op":"read"`, 1)
			return ls
		}, ":13: integrity: line 13:"},
		{"whole session removed", func(ls []string) []string {
			var out []string
			for _, l := range ls {
				if !strings.Contains(l, pySession.String()) {
					out = append(out, l)
				}
			}
			return out
		}, ":13: integrity: line 13:"},
		// The first checkpoint past line 20 is named: lines are posted one
		// by one, so which counts the checkpoints cover depends on timing.
		{"truncated below the newest checkpoint", func(ls []string) []string { return ls[:20] }, "lines but the file has only 20 complete ones (cut back, or lines deleted)"},
	}
	for _, tc := range tampers {
		t.Run(tc.name, func(t *testing.T) {
			p := copySealed(t, auditPath)
			ls := tc.edit(splitLines(t, p))
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(ls, "")), 0o600))
			code, out := runCLI(t, "verify", "--key", pubPath, "--allow-duplicates", "--allow-open", p)
			require.Equal(t, 1, code, out)
			require.Contains(t, out, tc.want)
		})
	}
	t.Run("checkpoint signed by another key", func(t *testing.T) {
		p := copySealed(t, auditPath)
		otherKey, _ := keygen(t, t.TempDir())
		// A collector holding another key seals the copy: it refuses,
		// since the old checkpoints are not its own...
		sandbox2 := freeAddr(t)
		c2dir := t.TempDir()
		c2 := exec.Command(bins.collector, "--config", writeConfig(t, c2dir, integrityConfig(sandbox2, p, otherKey, "200ms")))
		c2out, err := c2.CombinedOutput()
		require.Error(t, err, "collector started over checkpoints of another key")
		require.Contains(t, string(c2out), "not signed by key e2e-audit+")
		// ...and with the sidecars removed it refuses too: a file with
		// lines and no history is sealed afresh only by log reset...
		require.NoError(t, os.Remove(p+".checkpoints"))
		require.NoError(t, os.Remove(p+".tlog"))
		c3 := exec.Command(bins.collector, "--config", writeConfig(t, t.TempDir(), integrityConfig(sandbox2, p, otherKey, "200ms")))
		c3out, err := c3.CombinedOutput()
		require.Error(t, err, "collector sealed a file without history")
		require.Contains(t, string(c3out), "has no signed history")
		code, out := runCLI(t, "log", "reset", "--signing-key", otherKey, p)
		require.Equal(t, 0, code, out)
		// ...and a checkpoint forged with that key is named by verify.
		code, out = runCLI(t, "verify", "--key", pubPath, p)
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "checkpoint #1: not signed by key e2e-audit+")
	})
}

func writeConfig(t *testing.T, dir, cfg string) string {
	t.Helper()
	p := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(cfg), 0o600))
	return p
}

// findPair returns the indexes of a start line and its finish line.
func findPair(t *testing.T, lines []string) (int, int) {
	t.Helper()
	for i, l := range lines {
		ev, err := auditevent.Decode([]byte(strings.TrimSuffix(l, "\n")))
		require.NoError(t, err)
		if ev.Phase != auditevent.PhaseStart {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.Contains(lines[j], `"span_id":"`+ev.SpanID+`"`) {
				return i, j
			}
		}
	}
	t.Fatal("no start/finish pair")
	return 0, 0
}

// TestIntegritySurvivesSIGKILL: the collector is killed while it and a
// Python writer append; after a restart the lines written since the last
// checkpoint are sealed, and the untouched file verifies.
func TestIntegritySurvivesSIGKILL(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	cfg := integrityConfig(sandboxAddr, auditPath, keyPath, "300ms")
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)

	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	py := runPythonSink(ctx, auditPath, pythonLines(t, dir, uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"), 200), 5*time.Millisecond)
	require.NoError(t, py.Start())
	// The collector writes while the Python writer appends; it is killed
	// in the middle of both.
	collectorLines := pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 100)
	postLines(t, sandboxAddr, collectorLines[:100])
	deadline := time.Now().Add(deliveryTimeout)
	// The log's first checkpoint, of 0 lines, is signed at start: wait
	// for one of the lines written.
	for sizes := checkpointSizes(t, auditPath, pubPath); sizes[len(sizes)-1] == 0; sizes = checkpointSizes(t, auditPath, pubPath) {
		require.True(t, time.Now().Before(deadline), "no checkpoint of lines after %s", deliveryTimeout)
		time.Sleep(pollInterval)
	}
	postLines(t, sandboxAddr, collectorLines[100:])
	require.NoError(t, col.cmd.Process.Kill())
	<-col.done
	require.NoError(t, py.Wait(), "python writer")
	killedAt := countLines(t, auditPath)
	// The Python writer's 400, and what the collector had written (the
	// batch processor's unwritten batch dies with it).
	require.Greater(t, killedAt, 400)
	cps := mustRead(t, auditPath+".checkpoints")

	col2 := startCollector(t, "collector-restarted", filepath.Join(dir, "restart"), cfg, sandboxAddr)
	// Sealed at start, before any new write.
	require.Greater(t, len(mustRead(t, auditPath+".checkpoints")), len(cps), "no checkpoint at restart")
	col2.stop(t)
	// --allow-open: the kill cut the batch holding some finishes; the
	// integrity check itself allows nothing.
	code, out := runCLI(t, "verify", "--key", pubPath, "--allow-open", auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, fmt.Sprintf("integrity: lines=%d sealed=%d unsealed=0", killedAt, killedAt))
}
