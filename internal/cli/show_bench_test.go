package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkShow runs `show` (table and jsonl) and `sessions` on one trail of
// SANDBOXAUDIT_BENCH_LINES lines (default 100,000; the figures in
// docs/investigate.md use 1,000,000), or on the trail SANDBOXAUDIT_BENCH_FILE
// names: the time of the whole command, output to io.Discard, and its heap.
func BenchmarkShow(b *testing.B) {
	path := showBenchTrail(b)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"table", []string{"show", path}},
		{"jsonl", []string{"show", "--output", "jsonl", path}},
		{"sessions", []string{"sessions", path}},
	} {
		b.Run(c.name, func(b *testing.B) {
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(fi.Size())
			for b.Loop() {
				m := heaptest.Start()
				code := Run(context.Background(), c.args, Streams{Stdout: io.Discard, Stderr: io.Discard})
				m.Report(b)
				if code != 0 {
					b.Fatalf("%v: exit %d", c.args, code)
				}
			}
		})
	}
}

// showBenchTrail is SANDBOXAUDIT_BENCH_FILE, or a trail written once per
// benchmark as the collector writes one: 100 sessions interleaved, each
// start ahead of the previous operation's finish, every seventh exec failing.
func showBenchTrail(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("SANDBOXAUDIT_BENCH_FILE"); p != "" {
		return p
	}
	lines := 100_000
	if n, err := strconv.Atoi(os.Getenv("SANDBOXAUDIT_BENCH_LINES")); err == nil && n > 0 {
		lines = n
	}
	p := filepath.Join(b.TempDir(), "events.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const sessions = 100
	base := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	pending := make([][]byte, sessions)
	var buf []byte
	for i := range lines / 2 {
		s := i % sessions
		k := int64(i / sessions)
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "session-%d", s))
		start, finish := op(id, "exec", fmt.Sprintf("%016x", k+1), 2*k+1, 2*k+2)
		start.TS = auditevent.TimestampFromTime(base.Add(time.Duration(i) * time.Millisecond))
		finish.TS = auditevent.TimestampFromTime(base.Add(time.Duration(i)*time.Millisecond + 250*time.Millisecond))
		start.Data = auditevent.MustParseData(fmt.Sprintf(`{"command":["sh","-lc","make test %d"],"shell":true}`, k))
		exit := 0
		if k%7 == 3 {
			finish.OK, exit = false, 2
			finish.ErrorCode = auditevent.Ptr("exec_nonzero")
		}
		finish.Data = auditevent.MustParseData(fmt.Sprintf(`{"command":["sh","-lc","make test %d"],"exit_code":%d,"shell":true}`, k, exit))
		buf = auditevent.AppendLine(buf[:0], &start)
		buf = append(buf, pending[s]...)
		pending[s] = auditevent.AppendLine(pending[s][:0], &finish)
		if _, err := w.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	for _, l := range pending {
		_, _ = w.Write(l)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}
