package spool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// eventLines returns canonical audit event lines with seqs from..to.
func eventLines(t testing.TB, from, to int) []byte {
	t.Helper()
	session := uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	var out []byte
	for seq := from; seq <= to; seq++ {
		data, err := auditevent.MarshalData(map[string]any{"argv": []any{"ls", "-la"}})
		require.NoError(t, err)
		e := auditevent.Event{
			Version:   1,
			EventID:   uuid.NewSHA1(session, []byte{byte(seq >> 8), byte(seq)}),
			TS:        auditevent.TimestampFromTime(time.Date(2026, 12, 6, 7, 0, seq, 0, time.UTC)),
			SessionID: session,
			Seq:       int64(seq),
			Op:        "exec",
			Phase:     auditevent.PhaseStart,
			SpanID:    "span-1",
			Data:      data,
		}
		out = auditevent.AppendLine(out, &e)
	}
	return out
}

// damages records what the spool reports.
type damages struct {
	mu  sync.Mutex
	got []Damage
}

func (d *damages) add(x Damage) { d.mu.Lock(); d.got = append(d.got, x); d.mu.Unlock() }

func (d *damages) kinds() []DamageKind {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []DamageKind
	for _, x := range d.got {
		out = append(out, x.Kind)
	}
	return out
}

func checkedSpool(t *testing.T, path string) (*Spool, *damages) {
	t.Helper()
	s := openSpool(t, Options{Path: path, Check: CanonicalEvent})
	d := &damages{}
	s.SetDamageHandler(d.add)
	return s, d
}

func TestCanonicalEvent(t *testing.T) {
	good := eventLines(t, 1, 1)
	require.NoError(t, CanonicalEvent(good))
	for name, bad := range map[string][]byte{
		"no newline":     good[:len(good)-1],
		"spaced":         bytes.Replace(good, []byte(`":`), []byte(`": `), 1),
		"garbage":        []byte("secret=hunter2\n"),
		"NUL":            []byte("\x00\x00\x00\n"),
		"two events":     append(bytes.TrimSuffix(good, []byte{'\n'}), good...),
		"invalid field":  bytes.Replace(good, []byte(`"op":"exec"`), []byte(`"op":"hunter2"`), 1),
		"bytes inserted": append(append(append([]byte{}, good[:40]...), "<13 bytes in>"...), good[40:]...),
	} {
		err := CanonicalEvent(bad)
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", "%s: the reason never quotes the line", name)
	}
}

// Bad lines are moved to the quarantine file (0600) and the lines around
// them are sent; each is reported with its offset and length.
func TestReplayQuarantinesBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d := checkedSpool(t, path)
	ctx := context.Background()
	good := eventLines(t, 1, 4)
	first, rest := cutLine(good)
	bad := []byte("secret=hunter2\n")
	require.NoError(t, s.Append(ctx, first))
	require.NoError(t, s.Append(ctx, bad))
	require.NoError(t, s.Append(ctx, rest))

	c := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 4, sent, "the bad line is not counted as sent")
	require.Equal(t, good, c.data.Bytes())
	require.Equal(t, []DamageKind{DamageLine}, d.kinds())
	require.Equal(t, int64(len(first)), d.got[0].Offset)
	require.Equal(t, int64(len(bad)), d.got[0].Bytes)
	require.Equal(t, path+".quarantine", d.got[0].Kept)
	q, err := os.ReadFile(path + ".quarantine")
	require.NoError(t, err)
	require.Equal(t, bad, q)
	fi, err := os.Stat(path + ".quarantine")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Zero(t, s.Size())
}

// A failed send keeps the bad line for the next round and quarantines it
// once.
func TestQuarantineWaitsForTheLinesBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d := checkedSpool(t, path)
	ctx := context.Background()
	first, rest := cutLine(eventLines(t, 1, 3))
	require.NoError(t, s.Append(ctx, first))
	require.NoError(t, s.Append(ctx, []byte("\xff\xff\n")))
	require.NoError(t, s.Append(ctx, rest))
	c := &collector{failAt: map[int]bool{1: true}}
	_, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	require.Empty(t, d.kinds(), "not set aside before the line ahead of it is sent")
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 3, sent)
	require.Equal(t, []DamageKind{DamageLine}, d.kinds())
}

// The file cut while running: the torn last line is closed before the
// next append, which arrives whole; the torn line is quarantined.
func TestTornTailClosedBeforeTheNextAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d := checkedSpool(t, path)
	ctx := context.Background()
	lines := eventLines(t, 1, 3)
	require.NoError(t, s.Append(ctx, lines))
	require.NoError(t, os.Truncate(path, int64(len(lines)-30)))
	next := eventLines(t, 4, 4)
	require.NoError(t, s.Append(ctx, next))
	require.Equal(t, []DamageKind{DamageResized}, d.kinds())

	c := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 3, sent)
	kept := bytes.SplitAfter(lines, []byte{'\n'})
	require.Equal(t, string(kept[0])+string(kept[1])+string(next), c.data.String())
	require.Equal(t, []DamageKind{DamageResized, DamageLine}, d.kinds())
}

// Cut below the acknowledged offset: nothing of what is left is pending,
// and the sidecar follows.
func TestCutBelowTheAcknowledgedOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	ctx := context.Background()
	lines := eventLines(t, 1, 4)
	require.NoError(t, s.Append(ctx, lines))
	c := &collector{failAt: map[int]bool{2: true}}
	_, err := s.Replay(ctx, 2, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	_, acked := s.Position()
	require.NoError(t, os.Truncate(path, acked-10))
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Zero(t, sent)
	require.Zero(t, s.Size())
	require.NoError(t, s.Close())
	s2 := openSpool(t, Options{Path: path})
	require.Empty(t, s2.Recovery().OffsetProblem, "the sidecar was saved for the cut file")
}

// A sidecar removed while running is written again, and reported once.
func TestMissingSidecarWrittenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d := checkedSpool(t, path)
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, eventLines(t, 1, 2)))
	require.NoError(t, os.Remove(path+".offset"))
	c := &collector{failAt: map[int]bool{1: true, 2: true}}
	for range 2 {
		_, err := s.Replay(ctx, 10, 1<<20, c.send)
		require.ErrorIs(t, err, errSend)
	}
	require.Equal(t, []DamageKind{DamageSidecar}, d.kinds())
	_, err := os.Stat(path + ".offset")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	openSpool(t, Options{Path: path}) // a restart finds a spool
}

// At start a file with lines and no sidecar is adopted when every line is a
// valid event, and refused, unchanged, when one is not.
func TestAdoptValidAtStart(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "valid.jsonl")
	lines := eventLines(t, 1, 3)
	require.NoError(t, os.WriteFile(valid, lines, 0o600))
	s := openSpool(t, Options{Path: valid, Check: CanonicalEvent, AdoptValid: true})
	require.True(t, s.Recovery().Adopted)
	require.NoError(t, s.Recovery().AdoptedKeptErr)
	c := &collector{}
	sent, err := s.Replay(context.Background(), 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 3, sent)
	require.Equal(t, lines, c.data.Bytes())
	require.Zero(t, fileSize(t, valid), "replayed and trimmed")
	kept, err := os.ReadFile(s.Recovery().AdoptedKept)
	require.NoError(t, err)
	require.Equal(t, lines, kept, "the file as found is kept: an audit file named as the spool is not lost")

	mixed := filepath.Join(dir, "mixed.jsonl")
	content := append(append([]byte{}, lines...), "secret=hunter2\n"...)
	require.NoError(t, os.WriteFile(mixed, content, 0o600))
	_, err = Open(context.Background(), Options{Path: mixed, Check: CanonicalEvent, AdoptValid: true})
	require.ErrorIs(t, err, ErrNotASpool)
	require.Contains(t, err.Error(), fmt.Sprintf("offset %d", len(lines)))
	require.NotContains(t, err.Error(), "hunter2")
	got, err := os.ReadFile(mixed)
	require.NoError(t, err)
	require.Equal(t, content, got)

	// Without AdoptValid (sandboxaudit replay without --adopt) even a
	// valid file is refused.
	other := filepath.Join(dir, "other.jsonl")
	require.NoError(t, os.WriteFile(other, lines, 0o600))
	_, err = Open(context.Background(), Options{Path: other, Check: CanonicalEvent})
	require.ErrorIs(t, err, ErrNotASpool)
}

// cutLine splits the first line off lines.
func cutLine(lines []byte) (first, rest []byte) {
	i := bytes.IndexByte(lines, '\n') + 1
	return lines[:i], lines[i:]
}
