package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestDamagedSpoolDeliversTheIntactEvents damages the edge collector's
// spool while its endpoint is down, as anyone with write access to the
// file could: 13 bytes inserted into a line, a line overwritten with a
// secret, the last 100 bytes cut, the .offset sidecar deleted. Once the
// endpoint is back every intact acknowledged event arrives within 30 s,
// without a restart, and nothing else does; the damaged lines are in the
// quarantine file, and the log names their offsets but never their bytes.
// A restart with the sidecar gone adopts the spool and delivers it.
func TestDamagedSpoolDeliversTheIntactEvents(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	edgeAddr, centralAddr := addrs[0], addrs[1]
	spool := filepath.Join(dir, "edge", "spool.jsonl")
	cfg := crashEdgeConfig(edgeAddr, centralAddr, spool)
	edge := startCollector(t, "edge", filepath.Join(dir, "edge"), cfg, edgeAddr)

	acked, lost := map[string]bool{}, map[string]bool{}
	post := func(b int) {
		body, ids := crashBatch(b)
		postEdge(t, edgeAddr, body)
		for _, id := range ids {
			acked[id] = true
		}
	}
	post(0)
	post(1)
	post(2)
	lines := spoolLines(t, spool)
	require.Len(t, lines, 150, "every acknowledged event is in the spool while the endpoint is down")

	// 13 bytes into the middle of line 10 (raw NULs: no JSON holds them),
	// in place; then line 60 overwritten whole, its newline kept.
	off := spoolLineOffset(lines, 10) + int64(len(lines[10])/2)
	writeSpoolAt(t, spool, off, append([]byte("\x00INSERTED13\x00\x00"), bytes.Join(lines, nil)[off:]...))
	lost[lineEventID(t, lines[10])] = true
	lines = spoolLines(t, spool)
	lost[lineEventID(t, lines[60])] = true
	n := len(lines[60]) - 1
	writeSpoolAt(t, spool, spoolLineOffset(lines, 60), []byte(strings.Repeat("secret=hunter2 ", n)[:n]))
	post(3)

	// The last 100 bytes cut: the last line is torn, and the events
	// acknowledged next must not be merged into it.
	lines = spoolLines(t, spool)
	last := len(lines) - 1
	require.Greater(t, len(lines[last]), 100)
	require.NoError(t, os.Truncate(spool, spoolLineOffset(lines, len(lines))-100))
	lost[lineEventID(t, lines[last])] = true
	post(4)

	// The sidecar deleted: written again, and said so, while running.
	require.NoError(t, os.Remove(spool+".offset"))
	waitLogHas(t, edge, "sidecar was missing")
	_, err := os.Stat(spool + ".offset")
	require.NoError(t, err)
	post(5)
	waitLogHas(t, edge, "spool replay failed") // the cause of the failed rounds, at WARN

	central := startRecordingEndpoint(t, centralAddr)
	intact := map[string]bool{}
	for id := range acked {
		if !lost[id] {
			intact[id] = true
		}
	}
	central.waitFor(t, intact, 30*time.Second)
	waitSpoolEmpty(t, spool)
	require.Equal(t, intact, central.ids(), "exactly the intact acknowledged events, nothing else")
	require.Zero(t, central.undecodable(), "garbage never leaves the machine")
	require.False(t, central.saw("hunter2"))
	require.False(t, central.saw("INSERTED13"))

	log := string(mustRead(t, edge.log))
	require.Equal(t, len(lost), strings.Count(log, "spool line is not a valid audit event"), "one ERROR per damaged line")
	require.NotContains(t, log, "hunter2", "the log names offsets, never the damaged bytes")
	require.NotContains(t, log, "INSERTED13")
	requireMode(t, spool+".quarantine", 0o600)

	// A restart while the spool holds lines and has lost its sidecar:
	// the spool is adopted, not refused, and delivered.
	central.close()
	post(6)
	edge.stop(t)
	require.NoError(t, os.Remove(spool+".offset"))
	again := startCollector(t, "edge-again", filepath.Join(dir, "edge"), cfg, edgeAddr)
	waitLogHas(t, again, "taken as this exporter's spool")
	kept, err := filepath.Glob(spool + ".adopted-*")
	require.NoError(t, err)
	require.Len(t, kept, 1, "the file as found is kept under a second name")
	_, ids := crashBatch(6)
	batch6 := map[string]bool{}
	for _, id := range ids {
		batch6[id] = true
	}
	central = startRecordingEndpoint(t, centralAddr)
	central.waitFor(t, batch6, 30*time.Second)
	waitSpoolEmpty(t, spool)
	require.Equal(t, batch6, central.ids())
	again.stop(t)
}

// postEdge posts an ndjson batch to the edge's event intake and requires a
// 200: its events are then acknowledged.
func postEdge(t *testing.T, addr string, body []byte) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/sandbox/events", "application/x-ndjson", bytes.NewReader(body))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// spoolLines reads the spool file's lines, each with its newline.
func spoolLines(t *testing.T, path string) [][]byte {
	t.Helper()
	lines := bytes.SplitAfter(mustRead(t, path), []byte{'\n'})
	return lines[:len(lines)-1] // after the last newline
}

// spoolLineOffset is where line i starts.
func spoolLineOffset(lines [][]byte, i int) int64 {
	var off int64
	for _, l := range lines[:i] {
		off += int64(len(l))
	}
	return off
}

// writeSpoolAt writes b at off of the spool file, in place, in one write.
func writeSpoolAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func lineEventID(t *testing.T, line []byte) string {
	t.Helper()
	e, err := auditevent.Decode(line)
	require.NoError(t, err)
	return e.EventID.String()
}

// waitLogHas waits (bounded) until the collector's log holds text.
func waitLogHas(t *testing.T, c *collector, text string) {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for !bytes.Contains(mustRead(t, c.log), []byte(text)) {
		require.True(t, time.Now().Before(deadline), "%s: no %q in the log after %s", c.name, text, deliveryTimeout)
		time.Sleep(pollInterval)
	}
}

// waitSpoolEmpty waits (bounded) until nothing is pending in the spool.
func waitSpoolEmpty(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for pendingBytes(t, path) > 0 {
		require.True(t, time.Now().Before(deadline), "spool still holds %d bytes", pendingBytes(t, path))
		time.Sleep(pollInterval)
	}
}

// recordingEndpoint is an HTTP server on 127.0.0.1 that takes every request and
// records the events it holds, and what it could not decode.
type recordingEndpoint struct {
	srv *http.Server

	mu     sync.Mutex
	got    map[string]bool
	bad    int
	bodies [][]byte
}

func startRecordingEndpoint(t *testing.T, addr string) *recordingEndpoint {
	t.Helper()
	var ln net.Listener
	deadline := time.Now().Add(startTimeout)
	for {
		var err error
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "listen on %s: %v", addr, err)
		time.Sleep(pollInterval)
	}
	ep := &recordingEndpoint{got: map[string]bool{}}
	ep.srv = &http.Server{Handler: http.HandlerFunc(ep.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ep.srv.Serve(ln) }()
	t.Cleanup(ep.close)
	return ep
}

func (ep *recordingEndpoint) close() { _ = ep.srv.Shutdown(context.Background()) }

func (ep *recordingEndpoint) handle(w http.ResponseWriter, r *http.Request) {
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var body bytes.Buffer
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for sc.Scan() {
		body.Write(sc.Bytes())
		e, err := auditevent.Decode(sc.Bytes())
		if err != nil {
			ep.bad++
			continue
		}
		ep.got[e.EventID.String()] = true
	}
	ep.bodies = append(ep.bodies, body.Bytes())
	w.WriteHeader(http.StatusOK)
}

func (ep *recordingEndpoint) ids() map[string]bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := map[string]bool{}
	for id := range ep.got {
		out[id] = true
	}
	return out
}

func (ep *recordingEndpoint) undecodable() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.bad
}

func (ep *recordingEndpoint) saw(text string) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for _, b := range ep.bodies {
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

// waitFor waits, at most limit, until every id of want has arrived.
func (ep *recordingEndpoint) waitFor(t *testing.T, want map[string]bool, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := ep.ids()
		missing := 0
		for id := range want {
			if !got[id] {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d of %d intact events not delivered within %s of the endpoint's return", missing, len(want), limit)
		time.Sleep(pollInterval)
	}
}
