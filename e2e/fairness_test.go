package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Loopback addresses of the fairness test's clients: Linux routes all of
// 127.0.0.0/8 to lo, so each is a client address of its own.
const (
	smallVictimIP = "127.0.0.2"
	attackerIP    = "127.0.0.3"
	largeVictimIP = "127.0.0.4"
)

const (
	// fairnessRun is how long the victims post while the attack goes on.
	fairnessRun = 29 * time.Second
	// attackConns connections send most of a body of attackBodyLength
	// fast, then trickle a byte every attackTrickle: most send 4.5 MiB,
	// more than max_inflight_bytes (128 MiB) together, and the last few
	// less and less (attackFills), so that what the large ones leave is
	// taken too.
	attackConns      = 40
	attackBodyLength = 5 << 20
	attackBodySent   = 4608 << 10
	attackTrickle    = 4 * time.Second
	// maxRefused is the goal: at most 2 % of a victim's events refused.
	maxRefused = 0.02
)

// loopbackClient is an HTTP client whose connections come from local, a
// loopback address.
func loopbackClient(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2},
	}
}

// attackFills are the bytes the last attacking connections send.
var attackFills = []int{1 << 20, 512 << 10, 256 << 10, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 5 << 10}

// attack runs one attacking connection after another until ctx ends: each
// sends sent bytes of a large body fast, then a byte every attackTrickle,
// until the collector cuts it. It returns how many connections were cut.
func attack(ctx context.Context, addr string, sent int) int {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackerIP)}, Timeout: 5 * time.Second}
	head := fmt.Sprintf("POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n", attackBodyLength)
	body := bytes.Repeat([]byte(" "), sent)
	cut := 0
	for range 10000 { // bounded: each round lasts at least a dial
		if ctx.Err() != nil {
			return cut
		}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(fairnessRun + 10*time.Second))
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		if _, err := conn.Write(append([]byte(head), body...)); err == nil {
			trickle(ctx, conn)
		}
		stop()
		_ = conn.Close()
		cut++
	}
	return cut
}

// trickle sends a byte every attackTrickle until the connection is
// answered or closed (then at once: a refused attacker takes its room back
// without delay) or ctx ends.
func trickle(ctx context.Context, conn net.Conn) {
	answer := make([]byte, 512)
	for range int(fairnessRun/attackTrickle) + 2 {
		if ctx.Err() != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(attackTrickle))
		if _, err := conn.Read(answer); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return // answered (a 503 or a 408), or closed
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			return
		}
	}
}

// victimResult counts one victim's requests, and its refusals by status
// (-1: no answer).
type victimResult struct {
	mu      sync.Mutex
	posted  int
	refused map[int]int
}

func (v *victimResult) add(status int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.posted++
	if status != http.StatusOK {
		v.refused[status]++
	}
}

func (v *victimResult) fraction() (float64, int, map[int]int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, c := range v.refused {
		n += c
	}
	if v.posted == 0 {
		return 1, 0, v.refused
	}
	return float64(n) / float64(v.posted), v.posted, v.refused
}

// post sends body and returns the status, -1 when there was no answer.
func post(client *http.Client, url, ct string, body []byte) int {
	resp, err := client.Post(url, ct, bytes.NewReader(body))
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// fairEvent is a valid start event of about size bytes, numbered n within
// the test's session tag.
func fairEvent(tag byte, n, size int) []byte {
	head := fmt.Sprintf(`{"version":1,"event_id":"7d4c1b2a-00%02x-4000-8000-%012d","ts":"2026-03-14T15:09:26.535897Z","session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d%02x","seq":%d,"op":"write","phase":"start","span_id":"s%d","parent_span_id":null,"trace_id":null,"data":{"path":"`,
		tag, n, tag, n+1, n)
	tail := `"}}`
	return []byte(head + strings.Repeat("a", max(1, size-len(head)-len(tail))) + tail)
}

// TestStallingClientDoesNotLockOthersOut: an attacker on one address holds
// 40 connections of large bodies, more than max_inflight_bytes together,
// sent fast and then trickled a byte every 4 s, and reconnects whenever
// one is cut. A victim on another address posts a 450 B and a 20 KB event
// every 100 ms: at most 2 % of them are refused. A third client posts a
// 1 MiB batch every 500 ms: once the attacker's first bodies are cut (one
// min_body_rate window), at most 2 % of its batches are refused either.
func TestStallingClientDoesNotLockOthersOut(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := collectorYAML{sandboxAddr: addr, exporter: "file:\n  path: " + filepath.Join(dir, "audit.jsonl")}.String()
	col := startCollector(t, "collector", dir, cfg, addr)
	url := "http://" + addr + "/v1/sandbox/events"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var attackers sync.WaitGroup
	var cuts atomic.Int64
	for i := range attackConns {
		sent := attackBodySent
		if k := i - (attackConns - len(attackFills)); k >= 0 {
			sent = attackFills[k]
		}
		attackers.Go(func() { cuts.Add(int64(attack(ctx, addr, sent))) })
	}
	time.Sleep(time.Second) // the attack fills the budget first
	t.Logf("collector RSS with the attack on: %d MiB", vmRSS(t, col.cmd.Process.Pid)>>20)

	small := &victimResult{refused: map[int]int{}}
	large := &victimResult{refused: map[int]int{}}
	var victims sync.WaitGroup
	start := time.Now()
	victims.Go(func() {
		client := loopbackClient(smallVictimIP)
		for n := 0; time.Since(start) < fairnessRun; n++ {
			tick := time.Now()
			small.add(post(client, url, "application/json", fairEvent(1, 2*n, 450)))
			small.add(post(client, url, "application/json", fairEvent(1, 2*n+1, 20<<10)))
			time.Sleep(time.Until(tick.Add(100 * time.Millisecond)))
		}
	})
	victims.Go(func() {
		client := loopbackClient(largeVictimIP)
		// Its first window: the attacker's first bodies hold the whole
		// budget until they are cut, one min_body_rate window (5 s) after
		// their fast part.
		settle := 10 * time.Second
		for n := 0; time.Since(start) < fairnessRun; n++ {
			tick := time.Now()
			var batch bytes.Buffer
			for i := range 100 {
				batch.Write(fairEvent(2, 100*n+i, 10<<10))
				batch.WriteByte('\n')
			}
			status := post(client, url, "application/x-ndjson", batch.Bytes())
			if time.Since(start) >= settle {
				large.add(status)
			}
			time.Sleep(time.Until(tick.Add(500 * time.Millisecond)))
		}
	})
	victims.Wait()
	cancel()
	attackers.Wait()

	smallFrac, smallN, smallRefused := small.fraction()
	largeFrac, largeN, largeRefused := large.fraction()
	t.Logf("attacker: %d connections cut or refused; 450 B/20 KB victim: %d events, %.2f %% refused %v; 1 MiB victim (after 10 s): %d batches, %.2f %% refused %v",
		cuts.Load(), smallN, 100*smallFrac, smallRefused, largeN, 100*largeFrac, largeRefused)
	require.Positive(t, cuts.Load(), "the attacker's connections were never cut: the attack did not run")
	assert.LessOrEqual(t, smallFrac, maxRefused, "small events refused")
	assert.LessOrEqual(t, largeFrac, maxRefused, "large batches refused once the attacker's first bodies were cut")
	col.stop(t)
}

// vmRSS is the process's resident set size in bytes now.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), "kB"), &kb)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/PID/status")
	return 0
}
