package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// pythonOutboxSink appends each start/finish pair of SRC to PATH as the
// Python JsonlOutboxSink does: open by path, flock(LOCK_EX), one write,
// close, for every write; so after a rotation it goes on in the new file.
const pythonOutboxSink = `
import fcntl, sys, time
path, src, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
lines = open(src, "rb").read().splitlines(keepends=True)
for i in range(0, len(lines), 2):
    with open(path, "ab", buffering=0) as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(b"".join(lines[i:i + 2]))
    time.sleep(delay)
`

// rotationConfig is a collector whose file sink rotates every second
// (at a batch, or on time when none comes), compresses the closed
// segments and seals them all in one log.
func rotationConfig(sandboxAddr, auditPath, keyPath string) string {
	return collectorYAML{
		sandboxAddr: sandboxAddr,
		exporter: fmt.Sprintf("file:\n  path: %s\n  rotation:\n    interval: 1s\n    compression: zstd\n"+
			"  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms", auditPath, keyPath),
	}.String()
}

// trailLines reads every line of the trail of path: its closed segments
// in order (decompressed), then the active file.
func trailLines(t *testing.T, path string) (lines []string, segs []filesink.Segment) {
	t.Helper()
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	var all []byte
	for _, s := range segs {
		raw := mustRead(t, s.Path)
		if s.Compressed {
			dec, err := zstd.NewReader(nil)
			require.NoError(t, err)
			raw, err = dec.DecodeAll(raw, nil)
			dec.Close()
			require.NoError(t, err, s.Path)
		}
		require.True(t, len(raw) == 0 || raw[len(raw)-1] == '\n', "%s ends in a torn line", s.Path)
		all = append(all, raw...)
	}
	if b, err := os.ReadFile(path); err == nil {
		all = append(all, b...)
	}
	for l := range strings.Lines(string(all)) {
		lines = append(lines, l)
	}
	return lines, segs
}

// eventIDPattern finds a canonical line's event id.
var eventIDPattern = regexp.MustCompile(`"event_id":"([0-9a-f-]{36})"`)

// waitRotatedAndCompressed waits (bounded) until the file at path is
// empty and every closed segment is compressed, with neither its plain
// file nor a temp file left. With no batch coming, a file with lines
// rotates on the interval (a restarted collector's too, at any moment of
// the wait) and each segment is compressed a grace later; how long that
// takes depends on the host's load.
func waitRotatedAndCompressed(t *testing.T, path string) {
	t.Helper()
	waitFor(t, "the rotation and compression of "+path, func() bool {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			return false
		}
		segs, err := filesink.Segments(path)
		if err != nil {
			return false
		}
		for _, s := range segs {
			if !s.Compressed {
				return false
			}
			for _, p := range []string{s.Plain, s.Plain + ".zst.tmp"} {
				if _, err := os.Lstat(p); err == nil {
					return false
				}
			}
		}
		return true
	})
}

// eventID returns the event id of a whole canonical line, failing on a
// torn one.
func eventID(t *testing.T, l string) string {
	t.Helper()
	m := eventIDPattern.FindStringSubmatch(l)
	require.True(t, m != nil && strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}\n"), "torn line %q", l)
	return m[1]
}

// postBatch posts one ndjson batch and reports whether it was accepted.
func postBatch(client *http.Client, addr string, body []byte) bool {
	resp, err := client.Post("http://"+addr+"/v1/sandbox/events", "application/x-ndjson", bytes.NewReader(body))
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestRotationUnderLoadIsOneVerifiableLog: the collector rotates every
// second and compresses each segment while it takes batches and a Python
// JsonlOutboxSink appends to the same path. Every line is in exactly one
// segment, the zstd tool reads each compressed one, and verify --key
// passes on the directory.
func TestRotationUnderLoadIsOneVerifiableLog(t *testing.T) {
	requireE2E(t)
	zstdBin, err := exec.LookPath("zstd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the zstd tool (.ci/run installs it): %v", err)
		}
		t.Skip("zstd not found on PATH (apt-get install zstd); skipping the check that the zstd tool reads the segments")
	}
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	addr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, rotationConfig(addr, auditPath, keyPath), addr)

	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	pySession := uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	py := exec.CommandContext(ctx, "python3", "-c", pythonOutboxSink, auditPath, pythonLines(t, dir, pySession, 300), "0.01")
	var pyOut bytes.Buffer
	py.Stdout, py.Stderr = &pyOut, &pyOut
	require.NoError(t, py.Start())
	client := &http.Client{Timeout: 30 * time.Second}
	var want []string
	for b := 0; b < 200; b++ {
		body, ids := crashBatch(b)
		require.True(t, postBatch(client, addr, body), "batch %d refused", b)
		want = append(want, ids...)
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, py.Wait(), "python writer: %s", pyOut.String())
	waitRotatedAndCompressed(t, auditPath)
	col.stop(t)

	lines, segs := trailLines(t, auditPath)
	require.GreaterOrEqual(t, len(segs), 3, "the load spanned several seconds: several rotations")
	seen := map[string]int{}
	for _, l := range lines {
		seen[eventID(t, l)]++
	}
	for _, id := range want {
		require.Equal(t, 1, seen[id], "event %s", id)
	}
	require.Len(t, lines, len(want)+600, "every collector line and the Python writer's 600, once each")
	compressed := 0
	for _, s := range segs {
		if !s.Compressed {
			continue
		}
		compressed++
		out, err := exec.Command(zstdBin, "-d", "-c", "-q", s.Path).Output()
		require.NoError(t, err, "zstd -d %s", s.Path)
		require.Equal(t, bytes.Count(out, []byte("\n")), len(strings.SplitAfter(string(out), "\n"))-1)
	}
	require.GreaterOrEqual(t, compressed, len(segs)-1, "all but perhaps the newest segment compressed")

	code, out := runCLI(t, "verify", "--key", pubPath, filepath.Dir(auditPath))
	require.Equal(t, 0, code, "verify:\n%s", indent(out))
	require.Contains(t, out, fmt.Sprintf("trail segments=%d retired=0 first_line=1 lines=%d sealed=%d unsealed=0", len(segs), len(lines), len(lines)))
	t.Logf("%d segments (%d compressed), %d lines; verify: %s", len(segs), compressed, len(lines), out)
}

// startRefused runs the collector over cfg and requires that it fails to
// start, returning its output.
func startRefused(t *testing.T, dir, cfg string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bins.collector, "--config", cfgPath).CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the collector started: %v\n%s", err, tail(out, 4000))
	return string(out)
}

// TestRestartRefusesAFileWithoutItsHistory: a trail cut back, or moved
// aside with its sidecars removed and moved back, while the collector was
// stopped: the restart fails with an ERROR naming the file, until the
// operator starts a new log with `sandboxaudit log reset`, which is then
// sealed and logged.
func TestRestartRefusesAFileWithoutItsHistory(t *testing.T) {
	requireE2E(t)
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string)
		want   string
	}{
		{"cut back", func(t *testing.T, path string) {
			b := mustRead(t, path)
			require.NoError(t, os.WriteFile(path, b[:bytes.IndexByte(b, '\n')+1], 0o600))
		}, "cut back"},
		{"moved aside, sidecars removed, moved back", func(t *testing.T, path string) {
			require.NoError(t, os.Rename(path, path+".aside"))
			for _, sc := range []string{".tlog", ".checkpoints", ".segments", ".witnessed"} {
				_ = os.Remove(path + sc)
			}
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			for _, s := range segs {
				require.NoError(t, os.Remove(s.Path))
			}
			require.NoError(t, os.Rename(path+".aside", path))
		}, "has no signed history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keyPath, pubPath := keygen(t, dir)
			addr := freeAddr(t)
			auditPath := filepath.Join(dir, "audit", "events.jsonl")
			cfg := rotationConfig(addr, auditPath, keyPath)
			col := startCollector(t, "collector", filepath.Join(dir, "1"), cfg, addr)
			client := &http.Client{Timeout: 30 * time.Second}
			for b := range 4 {
				body, _ := crashBatch(b)
				require.True(t, postBatch(client, addr, body))
				time.Sleep(600 * time.Millisecond)
			}
			// The file rotates on time when no batch comes: one more
			// batch, so the active file has lines to attack when the
			// collector stops (within its segment's second).
			body, _ := crashBatch(4)
			require.True(t, postBatch(client, addr, body))
			waitLines(t, auditPath, 50)
			col.stop(t)

			tc.attack(t, auditPath)
			out := startRefused(t, filepath.Join(dir, "2"), cfg)
			require.Contains(t, out, "error")
			require.Contains(t, out, auditPath)
			require.Contains(t, out, tc.want)

			code, vout := runCLI(t, "verify", "--key", pubPath, filepath.Dir(auditPath))
			require.Equal(t, 1, code, "verify passed an attacked trail:\n%s", vout)

			code, rout := runCLI(t, "log", "reset", "--signing-key", keyPath, auditPath)
			require.Equal(t, 0, code, rout)
			col = startCollector(t, "collector-after-reset", filepath.Join(dir, "3"), cfg, addr)
			col.stop(t)
			// --allow-open: cutting the file back left starts without
			// their finishes.
			code, vout = runCLI(t, "verify", "--key", pubPath, "--allow-open", filepath.Dir(auditPath))
			require.Equal(t, 0, code, "after log reset:\n%s", vout)
		})
	}
}

// TestSIGKILLDuringRotationAndCompression: the collector rotates every
// second and compresses each segment while batches arrive, and is killed
// (SIGKILL) five times at different moments of that cycle, restarted each
// time. Every acknowledged event is in the trail exactly once, no line is
// torn, no temp file stays, the restart compresses what the kill left
// plain, and verify --key passes. The moments are spread over the rotation
// cycle rather than aimed at one step, so each run crosses rotations and
// compressions in flight with high likelihood but not by construction.
func TestSIGKILLDuringRotationAndCompression(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	addr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	cfg := rotationConfig(addr, auditPath, keyPath)

	var mu sync.Mutex
	acked := map[string]bool{}
	client := &http.Client{Timeout: 10 * time.Second}
	batch := 0
	for round := range 5 {
		col := startCollector(t, fmt.Sprintf("collector-%d", round), filepath.Join(dir, fmt.Sprint(round)), cfg, addr)
		stop := time.Now().Add(1200*time.Millisecond + time.Duration(round)*230*time.Millisecond)
		for time.Now().Before(stop) {
			body, ids := crashBatch(batch)
			batch++
			if postBatch(client, addr, body) {
				mu.Lock()
				for _, id := range ids {
					acked[id] = true
				}
				mu.Unlock()
			}
			time.Sleep(15 * time.Millisecond)
		}
		require.NoError(t, col.cmd.Process.Kill())
		<-col.done
	}
	col := startCollector(t, "collector-final", filepath.Join(dir, "final"), cfg, addr)
	waitRotatedAndCompressed(t, auditPath) // the restart's rotation and compression
	col.stop(t)

	lines, segs := trailLines(t, auditPath)
	seen := map[string]int{}
	for _, l := range lines {
		id := eventID(t, l)
		seen[id]++
		require.Equal(t, 1, seen[id], "event %s twice", id)
	}
	for id := range acked {
		require.Equal(t, 1, seen[id], "acknowledged event %s", id)
	}
	for _, s := range segs {
		require.True(t, s.Compressed, "%s left plain after the restart", s.Path)
		_, err := os.Lstat(s.Plain + ".zst.tmp")
		require.True(t, os.IsNotExist(err), "temp file of %s left", s.Path)
	}
	require.GreaterOrEqual(t, len(segs), 5)
	// --allow-open: a kill cuts the batch holding some finishes.
	code, out := runCLI(t, "verify", "--key", pubPath, "--allow-open", filepath.Dir(auditPath))
	require.Equal(t, 0, code, "verify:\n%s", indent(out))
	t.Logf("%d batches posted, %d events acknowledged, %d lines in %d segments; verify: %s", batch, len(acked), len(lines), len(segs), out)
}
