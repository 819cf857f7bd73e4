package filesink

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pyAppender appends lines the way the Python JsonlOutboxSink does: open in
// append mode per line, flock(LOCK_EX), write, flush, unlock, close. With
// a fourth argument it waits, halfway, until another writer has appended
// after its line or rotated the file (at most 60 s), so the writers surely
// take turns however a loaded host schedules them.
const pyAppender = `
import fcntl, os, sys, time
path, n, pad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
turn = len(sys.argv) > 4
for i in range(n):
    p = pad * 40 if i % 97 == 0 else pad  # a few long lines exceed Python's 8 KiB buffer
    line = '{"i":%d,"pad":"%s","w":"py"}\n' % (i, "x" * p)
    with open(path, "a", encoding="utf-8") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        f.write(line)
        f.flush()
        end, ino = f.tell(), os.fstat(f.fileno()).st_ino
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    if turn and i == n // 2:
        deadline = time.monotonic() + 60
        while True:  # until the file grew, or was rotated (by a write)
            try:
                st = os.stat(path)
                if st.st_ino != ino or st.st_size > end:
                    break
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                sys.exit("no other writer appended")
            time.sleep(0.001)
`

// goBatches writes lines in batches through its own Sink (its own
// descriptor, so flock really arbitrates) until n lines are written or, when
// until is not nil, until it is closed. It returns the batches written.
func goBatches(ctx context.Context, path, writer string, n, perBatch, pad int, until <-chan struct{}) ([][]byte, error) {
	s, err := New(Options{Path: path, Fsync: FsyncNever})
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	var batches [][]byte
	for i := 0; i < n; {
		if until != nil {
			select {
			case <-until:
				n = 0 // finish after this batch
			default:
			}
		}
		var b bytes.Buffer
		for j := 0; j < perBatch; j++ {
			p := pad
			if i%89 == 0 {
				p = pad * 40
			}
			fmt.Fprintf(&b, "{\"i\":%d,\"pad\":%q,\"w\":%q}\n", i, strings.Repeat("y", p), writer)
			i++
		}
		if err := s.WriteBatch(ctx, testSession, b.Bytes()); err != nil {
			return batches, err
		}
		batches = append(batches, b.Bytes())
	}
	return batches, nil
}

type rec struct {
	w string
	i int
}

// parseRecord reads {"i":N,"pad":"...","w":"W"} or fails on a torn or
// merged line.
func parseRecord(t *testing.T, line []byte) rec {
	t.Helper()
	require.True(t, bytes.HasPrefix(line, []byte(`{"i":`)) && bytes.HasSuffix(line, []byte(`"}`)), "torn or merged line: %.120q", line)
	require.Equal(t, 1, bytes.Count(line, []byte(`{"i":`)), "two records on one line: %.120q", line)
	rest := line[len(`{"i":`):]
	i, err := strconv.Atoi(string(rest[:bytes.IndexByte(rest, ',')]))
	require.NoError(t, err)
	return rec{w: string(line[bytes.LastIndex(line, []byte(`"w":"`))+5 : len(line)-2]), i: i}
}

// checkInterleaving asserts every line is whole, each writer's lines appear
// in order with none missing, and every Go batch is contiguous. It returns
// how often consecutive lines come from different writers.
func checkInterleaving(t *testing.T, data []byte, counts map[string]int, batchesByWriter map[string][][]byte) int {
	t.Helper()
	require.True(t, len(data) > 0 && data[len(data)-1] == '\n', "file ends with a newline")
	next := map[string]int{}
	pos := map[rec]int{}
	switches := 0
	var prev string
	for ln, line := range bytes.Split(data[:len(data)-1], []byte("\n")) {
		r := parseRecord(t, line)
		require.Equal(t, next[r.w], r.i, "writer %s out of order or lost a line at line %d", r.w, ln)
		next[r.w]++
		pos[r] = ln
		if ln > 0 && r.w != prev {
			switches++
		}
		prev = r.w
	}
	require.Equal(t, counts, next)
	for w, batches := range batchesByWriter {
		for _, b := range batches {
			lines := bytes.Split(b[:len(b)-1], []byte("\n"))
			first := parseRecord(t, lines[0])
			for k := range lines {
				require.Equal(t, pos[first]+k, pos[rec{w: w, i: first.i + k}], "batch of writer %s starting at %d is not contiguous", w, first.i)
			}
		}
	}
	return switches
}

func TestInteropWithPythonWriter(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH; skipping the Python JsonlOutboxSink interoperability test")
	}
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	const pyLines = 4000

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", pyAppender, path, strconv.Itoa(pyLines), "300", "take turns")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pyDone := make(chan struct{})
	var pyErr error
	go func() { pyErr = cmd.Wait(); close(pyDone) }()

	// Start once Python is writing, and keep writing until it stops, so the
	// two writers really overlap.
	require.Eventually(t, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 0
	}, 30*time.Second, time.Millisecond, "python writer never wrote")
	batches, goErr := goBatches(ctx, path, "go", 1_000_000, 5, 300, pyDone)
	<-pyDone
	require.NoError(t, pyErr, "python writer: %s", stderr.String())
	require.NoError(t, goErr)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	switches := checkInterleaving(t, data, map[string]int{"py": pyLines, "go": 5 * len(batches)}, map[string][][]byte{"go": batches})
	require.Greater(t, switches, 2, "the writers did not overlap, so the test proved nothing")
	t.Logf("%d python lines, %d go lines in %d batches, %d writer switches", pyLines, 5*len(batches), len(batches), switches)
}

func TestConcurrentSinksShareAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	const writers, lines = 4, 4000 // a multiple of the batch size
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var mu sync.Mutex
	all := map[string][][]byte{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("go%d", w)
			b, err := goBatches(ctx, path, name, lines, 10, 200, nil)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			all[name] = b
			mu.Unlock()
		})
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	counts := map[string]int{}
	for w := range writers {
		counts[fmt.Sprintf("go%d", w)] = lines
	}
	checkInterleaving(t, data, counts, all)
}

func TestConcurrentGoroutinesShareASink(t *testing.T) {
	// Goroutines sharing one Sink share one descriptor, where flock does not
	// exclude; the per-file mutex must keep batches whole.
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	s, err := New(Options{Path: path, Fsync: FsyncNever})
	require.NoError(t, err)
	const writers, batches, per = 6, 300, 9
	var wg sync.WaitGroup
	var mu sync.Mutex
	all := map[string][][]byte{}
	for w := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("g%d", w)
			for b := range batches {
				var buf bytes.Buffer
				for j := range per {
					fmt.Fprintf(&buf, "{\"i\":%d,\"pad\":%q,\"w\":%q}\n", b*per+j, strings.Repeat("z", 50+j*100), name)
				}
				if err := s.WriteBatch(context.Background(), testSession, buf.Bytes()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all[name] = append(all[name], buf.Bytes())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	counts := map[string]int{}
	for w := range writers {
		counts[fmt.Sprintf("g%d", w)] = batches * per
	}
	checkInterleaving(t, data, counts, all)
}
