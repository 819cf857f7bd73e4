package filesink

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A file named as a segment far in the future, put beside the audit file,
// is not one of its segments: rotation does not name the log's segments
// after it, and max_days goes on removing the log's old segments.
func TestPlantedFutureSegmentIsNotFollowed(t *testing.T) {
	for _, withHolds := range []bool{false, true} {
		t.Run(map[bool]string{false: "without a record", true: "with a record"}[withHolds], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "events.jsonl")
			planted := filepath.Join(dir, "events-29991231T000000Z-000099.jsonl")
			require.NoError(t, os.WriteFile(planted, []byte("{\"planted\":1}\n"), 0o600))
			clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			var ev rotationEvents
			r := ev.hook(&Rotation{MaxBytes: 1, MaxAge: 72 * time.Hour})
			clock.drive(r)
			if withHolds {
				// The log records each segment its rotation made.
				r.Holds = func(_ string, seg Segment) bool {
					ev.mu.Lock()
					defer ev.mu.Unlock()
					for _, p := range ev.rotated {
						if p == seg.Plain {
							return true
						}
					}
					return false
				}
			}
			var warned []string
			r.OnIgnored = func(_ string, seg Segment) { warned = append(warned, filepath.Base(seg.Path)) }
			s, err := New(Options{Path: path, Rotation: r})
			require.NoError(t, err)
			removed := func(n int) func() bool {
				return func() bool { ev.mu.Lock(); defer ev.mu.Unlock(); return len(ev.removed) == n }
			}
			// One line a day and a minute: segments Dec 2 .. Dec 7; from
			// Dec 5 on, the segment of three days before is older than 72 h.
			// The clock moves before a write, never after the last: the
			// count may be reached before the write's own round has run,
			// and that round, run on a later clock, would remove one more.
			for i, want := range []int{0, 0, 0, 0, 1, 2, 3} {
				if i > 0 {
					clock.add(24*time.Hour + time.Minute)
				}
				require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
				require.Eventually(t, removed(want), 10*time.Second, 5*time.Millisecond, "after write %d", i)
			}
			require.NoError(t, s.Close())
			ev.mu.Lock()
			defer ev.mu.Unlock()
			for _, seg := range ev.rotated {
				require.True(t, strings.HasPrefix(filepath.Base(seg), "events-202612"), "%s named after the planted file", seg)
			}
			require.Equal(t, []string{
				"events-20261202T000100Z-000001.jsonl:max_days",
				"events-20261203T000200Z-000002.jsonl:max_days",
				"events-20261204T000300Z-000003.jsonl:max_days",
			}, ev.removed)
			require.Empty(t, ev.errs)
			require.FileExists(t, planted, "not the log's to remove")
			require.Equal(t, []string{filepath.Base(planted)}, warned, "logged once")
		})
	}
}
