package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// A log handed over from another key starts from the handover note
// (docs/witnesses.md, "The new log's first leaf"): `log handover` leaves the
// signed note beside the path, as PATH.handover, and the sealer of the new
// key makes the record hash of the note's bytes the new log's leaf 0. The
// audit file holds event lines only, so that leaf lives in the sidecars: a
// handover record in the segments sidecar (signed by the new key) and the
// hash store. The file's line i is then leaf i, and the new log's first
// checkpoint, of one leaf, commits to the note.

// HandoverSuffix names the file that holds the handover note a log at
// the path starts from.
const HandoverSuffix = ".handover"

// maxHandoverNote bounds the handover note read: a checkpoint, three
// extension lines and a few signatures.
const maxHandoverNote = 64 << 10

// HandoverPath is the handover note file of the audit path.
func HandoverPath(path string) string { return path + HandoverSuffix }

// GenesisLeaf is the leaf a log handed over with the signed note starts
// from: its RFC 6962 record hash.
func GenesisLeaf(signed []byte) tlog.Hash { return tlog.RecordHash(signed) }

// WriteHandoverNote writes the signed note beside path for the new log to
// start from: 0600, synced, never over an existing file.
func WriteHandoverNote(path string, signed []byte) error {
	p := HandoverPath(path)
	f, err := openNoFollow(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("write handover note: %w", err)
	}
	return writeSynced(f, signed, "write handover note "+p, "sync handover note "+p)
}

// readHandoverNote reads the pending handover note of path: ok is false
// when there is none.
func readHandoverNote(path string) (signed []byte, ok bool, err error) {
	f, _, err := openRegular(HandoverPath(path), os.O_RDONLY|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }()
	signed, err = io.ReadAll(io.LimitReader(f, maxHandoverNote+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", HandoverPath(path), err)
	}
	if len(signed) > maxHandoverNote {
		return nil, false, fmt.Errorf("%s: longer than %d bytes", HandoverPath(path), maxHandoverNote)
	}
	return signed, true, nil
}

// HandoverNoteOrigin is the origin of the log the handover note beside
// path retired ("" when there is none), read without a key: log handover
// keeps a chain from going back to it.
func HandoverNoteOrigin(path string) string {
	signed, ok, err := readHandoverNote(path)
	if err != nil || !ok {
		return ""
	}
	origin, _, _ := bytes.Cut(signed, []byte("\n"))
	return string(origin)
}

// OpenHandoverNote reads the handover note the log at path starts from
// (PATH.handover) and verifies it with v, the retiring key: a segment of
// the log checked alone follows it to the key it names. found is false
// when there is no note.
func OpenHandoverNote(path string, v note.Verifier) (h Handover, signed []byte, found bool, err error) {
	signed, found, err = readHandoverNote(path)
	if err != nil || !found {
		return Handover{}, nil, found, err
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return Handover{}, nil, true, fmt.Errorf("%s: %w", HandoverPath(path), describeNoteError(err, v))
	}
	h, err = parseHandoverNote(path, []byte(n.Text))
	if err != nil {
		return Handover{}, nil, true, err
	}
	return h, signed, true, nil
}

// parseHandoverNote parses the text of the handover note beside path,
// which must be a final checkpoint.
func parseHandoverNote(path string, text []byte) (Handover, error) {
	h, ok, err := ParseHandover(text)
	if err == nil && !ok {
		err = errors.New("not a final checkpoint")
	}
	if err != nil {
		return Handover{}, fmt.Errorf("%s: %w", HandoverPath(path), err)
	}
	return h, nil
}

// parsePendingHandover reads a handover note's text without its
// signature (the retiring key is not the sealer's) and checks that it
// hands the log over to v.
func parsePendingHandover(path string, signed []byte, v note.Verifier) (Handover, error) {
	text, _, _ := cutNoteText(signed)
	h, err := parseHandoverNote(path, text)
	if err != nil {
		return Handover{}, err
	}
	next, _ := note.NewVerifier(h.NextKey) // ParseHandover checked it
	if next.Name() != v.Name() || next.KeyHash() != v.KeyHash() {
		return Handover{}, fmt.Errorf("%s hands the log over to the key %s, not to this signing key %s: "+
			"the collector starts the new log with that key (file.integrity.signing_key_file)",
			HandoverPath(path), KeyID(next.Name(), next.KeyHash()), KeyID(v.Name(), v.KeyHash()))
	}
	return h, nil
}

// cutNoteText returns a signed note's text: the bytes up to and including
// the blank line's newline.
func cutNoteText(signed []byte) (text, sigs []byte, ok bool) {
	for i := 0; i+1 < len(signed); i++ {
		if signed[i] == '\n' && signed[i+1] == '\n' {
			return signed[:i+1], signed[i+2:], true
		}
	}
	return signed, nil, false
}

// startFromHandover makes the new log at l.path start from its pending
// handover note: when nothing is signed yet and no segment is recorded,
// it records the note's leaf (signed, synced) and puts it in the store as
// leaf 0. A store that already holds the leaf's record but not the leaf
// (a crash between the two) gets the leaf. Called after loadSegmentLog.
func (l *fileLog) startFromHandover(store *hashStore) error {
	if g := l.segLog.Genesis(); g != nil {
		if store.n == 0 && !l.hasLast {
			return store.add(g.EndRange[0])
		}
		return nil
	}
	if l.hasLast || len(l.segLog.Segments) > 0 {
		return nil
	}
	signed, ok, err := readHandoverNote(l.path)
	if err != nil || !ok {
		return err
	}
	h, err := parsePendingHandover(l.path, signed, l.keys.Verifier)
	if err != nil {
		return err
	}
	if store.n > 0 {
		// Hashes no checkpoint signs (the unsigned warning): derived data,
		// hashed again from the file after the leaf.
		if err := store.reset(); err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
	}
	leaf := GenesisLeaf(signed)
	rec := SegmentRecord{Origin: h.NextOrigin, Name: filepath.Base(HandoverPath(l.path)), First: 0, Count: 1,
		EndRange: []tlog.Hash{leaf}, Genesis: true}
	if err := l.appendSegmentRecord(rec); err != nil {
		return err
	}
	l.segLog.Segments = append(l.segLog.Segments, rec)
	l.origin = h.NextOrigin
	l.setFirst(1)
	return store.add(leaf)
}

// StartsFromHandover reports whether the log at path starts from a
// handover note, read without a key: verify says when it did not follow
// the note.
func StartsFromHandover(path string) bool {
	recs, err := readSegmentRecordsUpTo(path, 1) // the sidecar holds a record per segment
	return err == nil && len(recs) > 0 && recs[0].Genesis
}

// checkHandoverRecord refuses a log that started from the handover note
// beside it but whose segments sidecar, which records the note as leaf 0,
// is gone or empty (it looks unneeded beside a file that never rotated):
// the hash store's leaf 0 is the note's hash. Read on, the log would fail
// as if a line, or its origin, had been changed.
func (l *fileLog) checkHandoverRecord(store *hashStore) error {
	if store.n == 0 || holdsData(SegmentsPath(l.path)) {
		return nil
	}
	signed, ok, err := readHandoverNote(l.path)
	if err != nil || !ok {
		return nil // the seal reports a note it cannot read, if it needs it
	}
	if leaf, err := store.hashAt(0); err != nil || leaf != GenesisLeaf(signed) {
		return nil
	}
	return tampered(l.path, "the log starts from the handover note in %s, but the segments sidecar that records it as leaf 0 "+
		"is missing or empty: put %s back", HandoverPath(l.path), SegmentsPath(l.path))
}

// HandedOverFrom returns the first of the witness keys wkeys that holds
// the public key of a handover note's signer, beside path or beside a log
// retired there (its index, -1 when none), and that note's file: a key
// the log was handed over from. Its holder could cosign what it
// rewrote, as the log's own key's could. Only the notes found are known:
// those of retired logs moved elsewhere are not.
func HandedOverFrom(path string, wkeys ...string) (which int, note string) {
	return NewHandedOverCheck(wkeys...).From(path)
}

// HandedOverCheck is HandedOverFrom for the many files of one start (a
// templated path's): each directory is listed once, not once per file.
type HandedOverCheck struct {
	wkeys []string
	// retired maps a directory to the retired logs in it, by the name of
	// the file each left.
	retired map[string]map[string][]string
	readDir func(string) ([]os.DirEntry, error)
}

// NewHandedOverCheck checks files against the witness keys wkeys.
func NewHandedOverCheck(wkeys ...string) *HandedOverCheck {
	return &HandedOverCheck{wkeys: wkeys, retired: map[string]map[string][]string{}, readDir: os.ReadDir}
}

// From is HandedOverFrom(path, wkeys...).
func (c *HandedOverCheck) From(path string) (which int, note string) {
	if len(c.wkeys) == 0 {
		return -1, "" // no directory read for nothing
	}
	for _, p := range append([]string{path}, c.retiredLogs(path)...) {
		signed, ok, err := readHandoverNote(p)
		if err != nil || !ok {
			continue
		}
		for i, k := range c.wkeys {
			if witness.SignedNote(signed, k) {
				return i, HandoverPath(p)
			}
		}
	}
	return -1, ""
}

// retiredLogs is RetiredLogs(path), its directory listed once.
func (c *HandedOverCheck) retiredLogs(path string) []string {
	dir, base := filepath.Split(path)
	byFile, ok := c.retired[dir]
	if !ok {
		byFile = retiredInDir(c.readDir, dir)
		c.retired[dir] = byFile
	}
	return byFile[base]
}
