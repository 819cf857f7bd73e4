package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rssCollectorEnv may name another collector binary for
// TestHostileClientsPeakRSS to run against (say one built from another
// commit), to compare the peaks it logs.
const rssCollectorEnv = "SANDBOXAUDIT_RSS_COLLECTOR"

// TestHostileClientsPeakRSS starts a collector (sandboxaudit receiver →
// file exporter, defaults otherwise) per attack and checks its peak
// resident memory, VmHWM from /proc/<pid>/status, against a bound: 100
// connections that announce a 20 MiB body and send one byte; 100
// concurrent gzip bombs; 100 concurrent snappy blocks; 200 lz4 bodies
// stalled in a block; four waves of 150 zstd bodies stalled in their
// windows; 16 concurrent 19 MiB events. The bounds are
// about twice the peaks measured on a quiet machine (48, 184 and 623 MiB,
// idle 46), so that a noisy one does not fail them, and far below what an
// intake that holds every announced or inflated body reaches (GiBs).
func TestHostileClientsPeakRSS(t *testing.T) {
	requireE2E(t)
	bin := bins.collector
	if b := os.Getenv(rssCollectorEnv); b != "" {
		bin = b
	}
	const mib = 1 << 20
	for _, attack := range []struct {
		name  string
		run   func(t *testing.T, addr string)
		bound int64
	}{
		{"100 x Content-Length 20 MiB, 1 byte sent", slowBodies, 128 * mib},
		{"100 concurrent gzip bombs", gzipBombs, 512 * mib},
		{"100 concurrent snappy blocks", snappyBlocks, 512 * mib},
		{"200 lz4 bodies stalled in a 4 MiB block", lz4StalledBlocks, 256 * mib},
		{"4 x 150 zstd bodies stalled in 4 to 20 MiB windows", zstdStalledWindows, 256 * mib},
		{"16 concurrent 19 MiB events", bigEvents, 1280 * mib},
	} {
		t.Run(attack.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := freeAddr(t)
			cfg := collectorYAML{
				sandboxAddr: addr,
				batch:       "timeout: 200ms",
				exporter:    "file:\n  path: " + filepath.Join(dir, "audit.jsonl"),
			}.String()
			col := startCollectorBinary(t, bin, "collector", dir, cfg, addr)
			idle := vmHWM(t, col.cmd.Process.Pid)
			attack.run(t, addr)
			peak := vmHWM(t, col.cmd.Process.Pid)
			t.Logf("%s: %s: peak RSS %d MiB (idle %d MiB)", filepath.Base(bin), attack.name, peak/mib, idle/mib)
			col.stop(t)
			assert.LessOrEqual(t, peak, attack.bound, "peak RSS %d MiB over the bound of %d MiB", peak/mib, attack.bound/mib)
		})
	}
}

// vmHWM is the process's peak resident set size in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// slowBodies opens 100 connections that each announce a 20 MiB body and
// send one byte, holds them 3 s, then closes them.
func slowBodies(t *testing.T, addr string) {
	var conns []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = fmt.Fprintf(c, "POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 20971520\r\n\r\n{")
		require.NoError(t, err)
	}
	time.Sleep(3 * time.Second)
	for _, c := range conns {
		_ = c.Close()
	}
}

// lz4StalledBlocks opens 200 connections that each send an lz4 frame
// header and 3.5 MiB of a compressed block said to be 4 MiB long, holds
// them 3 s, then closes them. Each decoder holds two 4 MiB buffers: 1.6 GiB
// if they were not reserved from the budget (at most 8 bodies fit it).
func lz4StalledBlocks(t *testing.T, addr string) {
	// Magic, FLG (version 01, independent blocks), BD (4 MiB), header
	// checksum; then a block length of 4 MiB - 1 (compressed).
	head := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73, 0xff, 0xff, 0x3f, 0x00}
	block := make([]byte, 3584<<10)
	var conns []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = fmt.Fprintf(c, "POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Encoding: lz4\r\nContent-Length: 4194400\r\n\r\n%s", head)
		require.NoError(t, err)
		// Refused ones are closed before all of it is sent.
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(block)
	}
	time.Sleep(3 * time.Second)
	for _, c := range conns {
		_ = c.Close()
	}
}

// zstdStalledWindows opens 150 connections that each send a zstd frame
// header and RLE blocks decoding to 512 KiB, holds them 2 s, closes them,
// and does so four times, with windows of 4, 8, 16 and 20 MiB (an encoder
// that does not know the content's size declares 8 MiB; 20 MiB is
// max_request_body_size). Each decoder allocates its whole window, and
// memory reused for one is cleared, every page of it: with the windows not
// reserved from the budget, up to 120 bodies a wave fit it, and the
// collector peaked at 220 to 410 MiB (100 to 210 MiB with them reserved).
func zstdStalledWindows(t *testing.T, addr string) {
	for _, window := range []byte{12 << 3, 13 << 3, 14 << 3, 14<<3 | 2} {
		// Magic, no content size, the window; then four RLE blocks of
		// 128 KiB.
		body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, window}
		for range 4 {
			h := uint32(128<<10)<<3 | 1<<1
			body = append(body, byte(h), byte(h>>8), byte(h>>16), '\n')
		}
		var conns []net.Conn
		for range 150 {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			conns = append(conns, c)
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, err = fmt.Fprintf(c, "POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Encoding: zstd\r\nContent-Length: 1048576\r\n\r\n%s", body)
			require.NoError(t, err)
		}
		time.Sleep(2 * time.Second)
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// gzipBombs sends 100 gzip bodies at once, each inflating to 64 MiB, and
// reports the status codes.
func gzipBombs(t *testing.T, addr string) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 64 {
		_, _ = zw.Write(zeros)
	}
	require.NoError(t, zw.Close())
	bomb := b.Bytes()
	statuses := postConcurrently(t, addr, 100, func(int) []byte { return bomb }, "gzip")
	t.Logf("gzip bombs: %d bytes each; statuses %v", len(bomb), statuses)
}

// snappyBlocks sends 100 snappy blocks at once, each 1 MB inflating to
// 20 MiB: a block inflates only once all of it is read, and read outside
// the budget 40 of them took the collector past 1 GiB.
func snappyBlocks(t *testing.T, addr string) {
	block := snappy.Encode(nil, bytes.Repeat([]byte{'\n'}, 20<<20-1))
	statuses := postConcurrently(t, addr, 100, func(int) []byte { return block }, "snappy")
	t.Logf("snappy blocks: %d bytes each; statuses %v", len(block), statuses)
}

// bigEvents posts 16 valid events of 19 MiB each at once.
func bigEvents(t *testing.T, addr string) {
	pad := strings.Repeat("a", 19<<20)
	statuses := postConcurrently(t, addr, 16, func(i int) []byte {
		return []byte(fmt.Sprintf(`{"version":1,"event_id":"7d4c1b2a-0000-4000-8000-%012d","ts":"2026-03-14T15:09:26.535897Z","session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","seq":%d,"op":"write","phase":"start","span_id":"s%d","parent_span_id":null,"trace_id":null,"data":{"path":"%s"}}`+"\n", i, i+1, i, pad))
	}, "")
	t.Logf("19 MiB events: statuses %v", statuses)
}

func postConcurrently(t *testing.T, addr string, n int, body func(int) []byte, encoding string) map[int]int {
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Minute}
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/sandbox/events", bytes.NewReader(body(i)))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/x-ndjson")
			if encoding != "" {
				req.Header.Set("Content-Encoding", encoding)
			}
			code := -1
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				code = resp.StatusCode
			}
			mu.Lock()
			statuses[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}
