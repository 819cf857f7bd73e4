package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// The active file moved out of the directory while none of its lines was
// sealed yet: the file sink makes a new file at the path, and the sealer
// went on to sign that one as the log's continuation, so the acknowledged
// lines of the file moved away left the trail without a trace. The file
// sealed last, gone from the path without a rotation, is refused.
func TestActiveFileMovedAwayWithUnsealedLinesIsRefused(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	sink := fourUnsealedLines(t, s, filesink.Options{Path: path, OnReplaced: s.Replaced})
	away := filepath.Join(t.TempDir(), "away.jsonl")
	if err := os.Rename(path, away); err != nil {
		t.Fatal(err)
	}
	if err := sink.WriteBatch(bg, "s", []byte(lines(5, 8))); err != nil {
		t.Fatal(err)
	}
	err := s.SealPending(bg)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "moved away") {
		t.Fatalf("SealPending = %v, want the file moved away refused", err)
	}
	if res := check(t, path, pub); res.Sealed != 0 {
		t.Fatalf("check = %+v: the new file was sealed as the log's continuation", res)
	}
}

// The active file cut back in place below lines the sink acknowledged,
// none of them sealed yet: sealing what is left would hide the cut for
// good, since the file still extends the newest checkpoint. The sink
// reports it (OnCutBack) and the file is refused.
func TestActiveFileCutBackUnderTheSinkIsRefused(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	sink := fourUnsealedLines(t, s, filesink.Options{Path: path, OnCutBack: s.CutBack})
	if err := os.Truncate(path, int64(len(lines(1, 2)))); err != nil {
		t.Fatal(err)
	}
	if err := sink.WriteBatch(bg, "s", []byte(lines(5, 8))); err != nil {
		t.Fatal(err)
	}
	err := s.SealPending(bg)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "cut back from") {
		t.Fatalf("SealPending = %v, want the file cut back refused", err)
	}
	if res := check(t, path, pub); res.Sealed != 0 {
		t.Fatalf("check = %+v: what was left of the file was sealed as the log", res)
	}
}

// fourUnsealedLines is a sink with opts, sealed by s as the collector's is,
// that wrote lines 1-4 after the log's first checkpoint (of 0 lines): none
// of them is sealed yet.
func fourUnsealedLines(t *testing.T, s *Sealer, opts filesink.Options) *filesink.Sink {
	t.Helper()
	opts.OnWrite, opts.BeforeCreate = s.Wrote, s.SealNew
	sink, err := filesink.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SealAtStart(bg, opts.Path); err != nil {
		t.Fatal(err)
	}
	s.Watch(opts.Path)
	if err := sink.WriteBatch(bg, "s", []byte(lines(1, 4))); err != nil {
		t.Fatal(err)
	}
	return sink
}
