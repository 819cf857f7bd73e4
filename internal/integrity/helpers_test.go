package integrity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// testKeys writes a fresh key pair into a temp dir and loads it.
func testKeys(t testing.TB, name string) (*Keys, string) {
	t.Helper()
	dir := t.TempDir()
	keyPath, pubPath, err := GenerateKeyFiles(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadSigningKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	return k, pubPath
}

// appendLocked appends text under flock, as the Python JsonlOutboxSink does.
func appendLocked(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func lines(from, to int) string {
	s := ""
	for i := from; i <= to; i++ {
		s += fmt.Sprintf("{\"n\":%d}\n", i)
	}
	return s
}

// newSealer returns a sealer that takes no owner lock: the tests let one
// go without Close to stand for a process that crashed, whose locks the
// kernel lets go (owner_test.go tests the lock).
func newSealer(t testing.TB, k *Keys) *Sealer {
	t.Helper()
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, CallerOwns: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sealedSink opens a file sink at path rotating by rot, whose writes
// sealer seals; the sealer has checked the log at start and watches it.
func sealedSink(t testing.TB, path string, rot *filesink.Rotation, sealer *Sealer) *filesink.Sink {
	t.Helper()
	sink, err := filesink.New(filesink.Options{Path: path, Rotation: rot, OnWrite: sealer.Wrote})
	if err != nil {
		t.Fatal(err)
	}
	if err := sealer.SealAtStart(bg, path); err != nil {
		t.Fatal(err)
	}
	sealer.Watch(path)
	return sink
}

// writeSealed writes lines from up to to in batches of four, sealing
// after each batch.
func writeSealed(t testing.TB, sink *filesink.Sink, sealer *Sealer, from, to int) {
	t.Helper()
	for i := from; i < to; i += 4 {
		if err := sink.WriteBatch(bg, "s", []byte(lines(i, i+3))); err != nil {
			t.Fatal(err)
		}
		if err := sealer.SealPending(bg); err != nil {
			t.Fatal(err)
		}
	}
}

// observedSealer is a sealer whose log entries at level and above are
// kept for the test to read.
func observedSealer(t testing.TB, k *Keys, level zapcore.Level) (*Sealer, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(level)
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, Logger: zap.New(core), CallerOwns: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, logs
}

func auditPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "audit.jsonl")
}

// check runs a Checker over the file at path.
func check(t testing.TB, path, pubPath string) CheckResult {
	t.Helper()
	v, err := LoadVerifierKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChecker(path, v)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Writer().Write(data); err != nil {
		t.Fatal(err)
	}
	return c.Finish()
}

var bg = context.Background()

// reportedRotation rotates past 100 bytes and reports each rotation to
// sealer, as the exporter wires the two.
func reportedRotation(sealer *Sealer) *filesink.Rotation {
	return &filesink.Rotation{MaxBytes: 100, OnRotate: func(p, seg string) { sealer.Rotated(p, seg) }}
}

// writeUntilRotated writes lines from from on, in batches of four and
// without sealing, until the sink has rotated; it returns the segments and
// the next line's number.
func writeUntilRotated(t testing.TB, sink *filesink.Sink, path string, from int) ([]filesink.Segment, int) {
	t.Helper()
	before, err := filesink.Segments(path)
	if err != nil {
		t.Fatal(err)
	}
	segs, n := before, from
	for ; len(segs) == len(before) && n < from+360; n += 4 {
		if err := sink.WriteBatch(bg, "s", []byte(lines(n, n+3))); err != nil {
			t.Fatal(err)
		}
		if segs, err = filesink.Segments(path); err != nil {
			t.Fatal(err)
		}
	}
	if len(segs) == len(before) {
		t.Fatal("the sink did not rotate")
	}
	return segs, n
}

// plantNextSegment puts a file named as the segment after newest beside
// it, holding one forged line, and returns its path.
func plantNextSegment(t testing.TB, newest filesink.Segment) string {
	t.Helper()
	planted := filepath.Join(filepath.Dir(newest.Plain),
		"events-"+newest.Time.Format("20060102T150405Z")+"-"+fmtSeq(newest.Seq+1)+".jsonl")
	if err := os.WriteFile(planted, []byte(lines(1000, 1001)), 0o600); err != nil {
		t.Fatal(err)
	}
	return planted
}
