package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// auditOrigin is the origin of e2e-audit's checkpoints for a plain path
// .../events.jsonl: the key's name and the file's name. The operator adds
// it to the witness with witnessctl.
const auditOrigin = "e2e-audit/events.jsonl"

func witnessedConfig(sandboxAddr, auditPath, keyPath, witnessURL, vkey string) string {
	return collectorYAML{
		sandboxAddr: sandboxAddr,
		batch:       "timeout: 100ms",
		exporter: fmt.Sprintf("file:\n  path: %s\n  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms\n"+
			"    witnesses:\n      - endpoint: %s\n        public_key: %s\n", auditPath, keyPath, witnessURL, vkey),
	}.String()
}

// newestWitnessed returns the newest record of the witnessed sidecar, its
// checkpoint, and how many cosignatures by vkey it holds.
func newestWitnessed(t *testing.T, auditPath, pubPath, vkey string) (integrity.Checkpoint, int) {
	t.Helper()
	f, err := os.Open(integrity.WitnessedPath(auditPath))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	nr := integrity.NewNoteReader(f)
	var last []byte
	for {
		rec, err := nr.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		last = rec
	}
	require.NotNil(t, last, "no cosigned checkpoint recorded")
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	c, err := integrity.OpenCheckpoint(last, logKey)
	require.NoError(t, err)
	wv, err := witness.ParseKey(vkey)
	require.NoError(t, err)
	return c, witness.CountCosignatures(last, []note.Verifier{wv})
}

// TestWitnessLitewitness: a real witness cosigns the collector's
// checkpoints as it writes them; then the key holder rewrites the file and
// re-seals it (sidecars removed, collector restarted with the same key):
// verify --key alone passes that, but the witness refuses the rewritten
// tree and the collector logs it at ERROR.
func TestWitnessLitewitness(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	lw.addLog(t, auditOrigin, pubPath)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	cfg := witnessedConfig(sandboxAddr, auditPath, keyPath, "http://"+lw.addr, lw.vkey)
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)

	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 6))
	waitLines(t, auditPath, 12)
	lw.waitSize(t, auditOrigin, 12)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("22222222-3333-4444-8555-666666666666"), 6))
	waitLines(t, auditPath, 24)
	lw.waitSize(t, auditOrigin, 24)
	col.stop(t)

	requireMode(t, integrity.WitnessedPath(auditPath), 0o600)
	c, cosigs := newestWitnessed(t, auditPath, pubPath, lw.vkey)
	require.Equal(t, int64(24), c.N)
	require.Equal(t, 1, cosigs, "the newest checkpoint carries litewitness's cosignature")
	require.NotContains(t, string(mustRead(t, filepath.Join(dir, "collector.log"))), "witness did not cosign")
	wkey := writeWitnessKey(t, dir, lw)
	code, out := runCLI(t, "verify", "--key", pubPath, "--witness", wkey, auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "witness: lines=24 witnessed=24 unwitnessed=0")

	// The key holder edits a line and seals the edited file afresh with
	// the same key (log reset moves the old sidecars aside), then starts
	// the collector.
	b := mustRead(t, auditPath)
	edited := bytes.Replace(b, []byte(`"duration_ms":12.5`), []byte(`"duration_ms":99.5`), 1)
	require.NotEqual(t, b, edited)
	require.NoError(t, os.WriteFile(auditPath, edited, 0o600))
	code, out = runCLI(t, "log", "reset", "--signing-key", keyPath, auditPath)
	require.Equal(t, 0, code, out)
	col2 := startCollector(t, "collector2", filepath.Join(dir, "second"), cfg, sandboxAddr)
	col2.waitReady(t)
	waitFor(t, "the collector's ERROR about the witness", func() bool {
		return bytes.Contains(mustRead(t, col2.log), []byte("witness did not cosign"))
	})
	col2.stop(t)
	log := string(mustRead(t, col2.log))
	require.Contains(t, log, "\terror\t")
	require.Contains(t, log, "history rewritten")
	require.Equal(t, 1, strings.Count(log, "witness did not cosign"), "once per cause, not every round")
	require.Equal(t, int64(24), lw.size(t, auditOrigin), "the witness kept what it cosigned")

	code, out = runCLI(t, "verify", "--key", pubPath, auditPath)
	require.Equal(t, 0, code, "the key alone cannot tell a re-sealed file: %s", out)
	code, out = runCLI(t, "verify", "--key", pubPath, "--witness", wkey, auditPath)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "no checkpoint is cosigned by 1 of the 1 witnesses")
}

// holdingProxy passes requests to target, except while hold is set: then
// it keeps each request until the test ends or hold is cleared.
type holdingProxy struct {
	mu      sync.Mutex
	hold    bool
	held    chan struct{} // closed at the first held request
	release chan struct{}
	once    sync.Once
	holding atomic.Int32 // requests held now
}

func startHoldingProxy(t *testing.T, target string) (*holdingProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	hp := &holdingProxy{held: make(chan struct{}), release: make(chan struct{})}
	addr := freeAddr(t)
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hp.mu.Lock()
		hold := hp.hold
		hp.mu.Unlock()
		if hold {
			hp.holding.Add(1)
			defer hp.holding.Add(-1)
			hp.once.Do(func() { close(hp.held) })
			select {
			case <-hp.release:
			case <-r.Context().Done():
			}
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() {
		close(hp.release)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	waitFor(t, "the proxy listening", func() bool { return dialable(addr) })
	return hp, "http://" + addr
}

func (hp *holdingProxy) setHold(on bool) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.hold = on
}

// TestWitnessKilledDuringRequest: the collector is SIGKILLed while a
// witness request is in flight; the restarted collector submits the
// checkpoint again, and nothing is lost.
func TestWitnessKilledDuringRequest(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	lw.addLog(t, auditOrigin, pubPath)
	proxy, proxyURL := startHoldingProxy(t, "http://"+lw.addr)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	cfg := witnessedConfig(sandboxAddr, auditPath, keyPath, proxyURL, lw.vkey)

	col := startCollector(t, "collector", dir, cfg, sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 4))
	waitLines(t, auditPath, 8)
	lw.waitSize(t, auditOrigin, 8)

	proxy.setHold(true)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("22222222-3333-4444-8555-666666666666"), 4))
	waitLines(t, auditPath, 16)
	select {
	case <-proxy.held:
	case <-time.After(deliveryTimeout):
		t.Fatal("no witness request reached the proxy")
	}
	require.NoError(t, col.cmd.Process.Kill())
	<-col.done
	require.Equal(t, int64(8), lw.size(t, auditOrigin))

	proxy.setHold(false)
	col2 := startCollector(t, "collector2", filepath.Join(dir, "second"), cfg, sandboxAddr)
	col2.waitReady(t)
	lw.waitSize(t, auditOrigin, 16)
	col2.stop(t)

	c, cosigs := newestWitnessed(t, auditPath, pubPath, lw.vkey)
	require.Equal(t, int64(16), c.N)
	require.Equal(t, 1, cosigs)
	code, out := runCLI(t, "verify", "--key", pubPath, auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "lines=16 sealed=16 unsealed=0")
	require.False(t, strings.Contains(string(mustRead(t, col2.log)), "witness did not cosign"), "the restart's submission succeeded")
}

// TestWitnessKeyHandover: a witnessed log is handed over to a new key;
// litewitness cosigns the final checkpoint and the new log's checkpoints,
// whose leaf 0 is the handover note; verify, given the first key, follows
// the handover, and refuses the retired log once a line is appended to it.
func TestWitnessKeyHandover(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	lw.addLog(t, auditOrigin, pubPath)
	wkey := writeWitnessKey(t, dir, lw)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, witnessedConfig(sandboxAddr, auditPath, keyPath, "http://"+lw.addr, lw.vkey), sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 4))
	waitLines(t, auditPath, 8)
	lw.waitSize(t, auditOrigin, 8)
	col.stop(t)

	newKey, newPub, _ := handOver(t, dir, keyPath, auditPath, lw, wkey)
	retired, err := filepath.Glob(auditPath + ".retired-*Z")
	require.NoError(t, err)
	require.Len(t, retired, 1, "%v", retired)

	const newOrigin = "e2e-audit-2027/events.jsonl"
	lw.addLog(t, newOrigin, newPub)
	col2 := startCollector(t, "collector2", filepath.Join(dir, "second"),
		witnessedConfig(sandboxAddr, auditPath, newKey, "http://"+lw.addr, lw.vkey), sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("22222222-3333-4444-8555-666666666666"), 2))
	waitLines(t, auditPath, 4)
	lw.waitSize(t, newOrigin, 5) // the handover note's leaf and 4 lines
	col2.stop(t)
	require.FileExists(t, auditPath+".handover")

	code, out := runCLI(t, "verify", "--key", pubPath, "--witness", wkey, retired[0], auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `handover: final at 8 lines; the log goes on as "`+newOrigin+`"`)
	require.Contains(t, out, retired[0]+": witness: lines=8 witnessed=8 unwitnessed=0")
	require.Contains(t, out, auditPath+": witness: lines=4 witnessed=4 unwitnessed=0")
	require.Contains(t, out, auditPath+": handover: the log starts from the handover of "+retired[0])

	f, err := os.OpenFile(retired[0], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(pairLines(uuid.MustParse("33333333-3333-4444-8555-666666666666"), 1)[0])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	code, out = runCLI(t, "verify", "--key", pubPath, "--allow-open", "--allow-unsealed", "1", retired[0], auditPath)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "handover: the log was retired at 8 lines by its final checkpoint, but the file has 9")
}

// TestWitnessKeyHandoverTemplated: a witnessed templated path
// (audit/{session_id}/events.jsonl) is handed over file by file, and the
// collector then makes a new session's file with the new key. verify on
// the directory, given the first key, trusts the key the handovers name,
// checks the new session's log and its cosignatures with it, and passes.
func TestWitnessKeyHandoverTemplated(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	wkey := writeWitnessKey(t, dir, lw)
	sandboxAddr := freeAddr(t)
	auditDir := filepath.Join(dir, "audit")
	template := filepath.Join(auditDir, "{session_id}", "events.jsonl")
	sessions := []uuid.UUID{
		uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"),
		uuid.MustParse("7f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"),
		uuid.MustParse("22222222-3333-4444-8555-666666666666"), // made after the handover
	}
	path := func(i int) string { return filepath.Join(auditDir, sessions[i].String(), "events.jsonl") }
	origin := func(key string, i int) string { return key + "/" + sessions[i].String() + "/events.jsonl" }
	col := startCollector(t, "collector", dir, witnessedConfig(sandboxAddr, template, keyPath, "http://"+lw.addr, lw.vkey), sandboxAddr)
	for i := range 2 {
		lw.addLog(t, origin("e2e-audit", i), pubPath)
		postLines(t, sandboxAddr, pairLines(sessions[i], 2))
		waitLines(t, path(i), 4)
		lw.waitSize(t, origin("e2e-audit", i), 4)
	}
	col.stop(t)

	newKey, newPub, _ := handOver(t, dir, keyPath, path(0), lw, wkey)
	code, out := runCLI(t, "log", "handover", "--signing-key", keyPath, "--next-key", newPub,
		"--witness", "http://"+lw.addr+"="+wkey, path(1))
	require.Equal(t, 0, code, out)

	for i := range sessions {
		lw.addLog(t, origin("e2e-audit-2027", i), newPub)
	}
	col2 := startCollector(t, "collector2", filepath.Join(dir, "second"),
		witnessedConfig(sandboxAddr, template, newKey, "http://"+lw.addr, lw.vkey), sandboxAddr)
	postLines(t, sandboxAddr, pairLines(sessions[2], 2))
	waitLines(t, path(2), 4)
	lw.waitSize(t, origin("e2e-audit-2027", 2), 4)
	col2.stop(t)

	code, out = runCLI(t, "verify", "--key", pubPath, "--witness", wkey, auditDir)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, path(2)+": handover: signed by e2e-audit-2027+")
	require.Contains(t, out, path(2)+": witness: lines=4 witnessed=4 unwitnessed=0")
	require.Contains(t, out, `handover: final at 4 lines; the log goes on as "`+origin("e2e-audit-2027", 1)+`"`)

	// The new key alone fails the retired logs, as before.
	code, out = runCLI(t, "verify", "--key", newPub, auditDir)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "not signed by key e2e-audit-2027+")
}

// TestWitnessKeyHandoverRotated: a witnessed log that rotates on time and
// compresses its segments is handed over whole; verify on the directory,
// given the first key, orders the retired log before the new one, follows
// the handover across the retired segments, and refuses a line appended
// to a retired segment.
func TestWitnessKeyHandoverRotated(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	lw.addLog(t, auditOrigin, pubPath)
	wkey := writeWitnessKey(t, dir, lw)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	rotated := func(key string) string {
		return collectorYAML{
			sandboxAddr: sandboxAddr,
			batch:       "timeout: 100ms",
			exporter: fmt.Sprintf("file:\n  path: %s\n  rotation:\n    interval: 1s\n    compression: zstd\n"+
				"  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms\n"+
				"    witnesses:\n      - endpoint: %s\n        public_key: %s\n", auditPath, key, "http://"+lw.addr, lw.vkey),
		}.String()
	}
	// waitRotated waits until every line is in a compressed segment and
	// the path's file is empty: rotated on time, with no batch after it.
	waitRotated := func() {
		require.Eventually(t, func() bool {
			segs, err := filesink.Segments(auditPath)
			if err != nil || len(segs) == 0 {
				return false
			}
			for _, s := range segs {
				if _, err := os.Lstat(s.Plain); err == nil || !s.Compressed {
					return false
				}
			}
			fi, err := os.Stat(auditPath)
			return err == nil && fi.Size() == 0
		}, deliveryTimeout, pollInterval, "%s: not rotated and compressed", auditPath)
	}
	col := startCollector(t, "collector", dir, rotated(keyPath), sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 4))
	lw.waitSize(t, auditOrigin, 8)
	waitRotated()
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("7f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 2))
	lw.waitSize(t, auditOrigin, 12)
	waitRotated()
	col.stop(t)

	newKey, newPub, out := handOver(t, dir, keyPath, auditPath, lw, wkey)
	require.Contains(t, out, "ends at 12 lines")
	dirs, err := filepath.Glob(auditPath + ".retired-*Z")
	require.NoError(t, err)
	require.Len(t, dirs, 1, "%v", dirs)
	retired := filepath.Join(dirs[0], "events.jsonl")
	retiredSegs, err := filesink.Segments(retired)
	require.NoError(t, err)
	require.NotEmpty(t, retiredSegs)

	const newOrigin = "e2e-audit-2027/events.jsonl"
	lw.addLog(t, newOrigin, newPub)
	col2 := startCollector(t, "collector2", filepath.Join(dir, "second"), rotated(newKey), sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse("22222222-3333-4444-8555-666666666666"), 2))
	lw.waitSize(t, newOrigin, 5) // the handover note's leaf and 4 lines
	waitRotated()
	col2.stop(t)

	code, out := runCLI(t, "verify", "--key", pubPath, "--witness", wkey, filepath.Dir(auditPath))
	require.Equal(t, 0, code, out)
	require.Contains(t, out, retired+`: handover: final at 12 lines; the log goes on as "`+newOrigin+`"`)
	require.Contains(t, out, retired+": witness: lines=12 witnessed=12 unwitnessed=0")
	require.Contains(t, out, auditPath+": handover: the log starts from the handover of "+retired)

	// A forged line appended to a retired compressed segment, as a second
	// zstd frame (zstd -d reads it as part of the segment).
	seg := retiredSegs[0].Path
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	frame := enc.EncodeAll([]byte(pairLines(uuid.MustParse("33333333-3333-4444-8555-666666666666"), 1)[0]), nil)
	require.NoError(t, enc.Close())
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(frame)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	code, out = runCLI(t, "verify", "--key", pubPath, "--allow-open", filepath.Dir(auditPath))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, seg+": holds")
	require.Contains(t, out, "lines were appended, removed, or the segment was swapped")
}

// writeWitnessKey writes lw's verifier key to a file in dir for verify
// --witness and log handover --witness.
func writeWitnessKey(t *testing.T, dir string, lw *litewitness) string {
	t.Helper()
	wkey := filepath.Join(dir, "witness.vkey")
	require.NoError(t, os.WriteFile(wkey, []byte(lw.vkey+"\n"), 0o644))
	return wkey
}

// handOver makes a second key, e2e-audit-2027, and hands auditPath, signed
// with keyPath, over to it with lw's cosignature (wkey its verifier key).
// It returns the new key's files and the handover's output.
func handOver(t *testing.T, dir, keyPath, auditPath string, lw *litewitness, wkey string) (newKey, newPub, out string) {
	t.Helper()
	code, out := runCLI(t, "keygen", "--name", "e2e-audit-2027", "--out", filepath.Join(dir, "keys2"))
	require.Equal(t, 0, code, out)
	newKey, newPub = filepath.Join(dir, "keys2", "e2e-audit-2027.key"), filepath.Join(dir, "keys2", "e2e-audit-2027.pub")
	code, out = runCLI(t, "log", "handover", "--signing-key", keyPath, "--next-key", newPub,
		"--witness", "http://"+lw.addr+"="+wkey, auditPath)
	require.Equal(t, 0, code, out)
	return newKey, newPub, out
}
