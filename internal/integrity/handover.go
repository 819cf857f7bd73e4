package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
)

// A handover note is a log's final checkpoint (docs/witnesses.md, "Key
// handover"): the checkpoint of its whole tree, signed by the key being
// retired, with C2SP extension lines that say it is final and name the key
// and origin of the log that goes on:
//
//	<origin>
//	<size>
//	<root hash>
//	final
//	next-key <verifier key of the new log>
//	next-origin <origin of the new log>
const (
	handoverFinal      = "final"
	handoverNextKey    = "next-key "
	handoverNextOrigin = "next-origin "
)

// Handover is a parsed handover note.
type Handover struct {
	Checkpoint
	NextKey    string // note verifier key (name+hash+base64)
	NextOrigin string
}

// Format is the handover note's text.
func (h Handover) Format() []byte {
	return fmt.Appendf(h.Checkpoint.Format(), "%s\n%s%s\n%s%s\n", handoverFinal, handoverNextKey, h.NextKey, handoverNextOrigin, h.NextOrigin)
}

// SignHandover returns h signed by the retiring key.
func SignHandover(h Handover, s note.Signer) ([]byte, error) {
	if _, err := note.NewVerifier(h.NextKey); err != nil {
		return nil, fmt.Errorf("next key: %w", err)
	}
	if err := checkNextOrigin(h.NextOrigin); err != nil {
		return nil, err
	}
	msg, err := note.Sign(&note.Note{Text: string(h.Format())}, s)
	if err != nil {
		return nil, fmt.Errorf("sign handover: %w", err)
	}
	// The final checkpoint is signed once: one verify could not read
	// back would leave the retired log failing for good.
	if _, err := NewNoteReader(bytes.NewReader(AppendRecord(nil, msg))).Next(); err != nil {
		return nil, fmt.Errorf("next origin: the final checkpoint would not read back (%w); give a shorter origin", err)
	}
	return msg, nil
}

// checkNextOrigin refuses an origin a note cannot carry: empty, not
// UTF-8, or holding a control character (a note's text has none but its
// newlines).
func checkNextOrigin(origin string) error {
	if origin == "" || !utf8.ValidString(origin) || strings.IndexFunc(origin, unicode.IsControl) >= 0 {
		return errors.New("next origin: must be one non-empty line of printable UTF-8")
	}
	return nil
}

// ParseHandover reads the extension lines of a checkpoint's text: ok is
// false for a checkpoint that is not final.
func ParseHandover(text []byte) (h Handover, ok bool, err error) {
	c, err := ParseCheckpoint(text)
	if err != nil {
		return Handover{}, false, err
	}
	lines := bytes.SplitN(text, []byte("\n"), 4)
	ext := strings.Split(strings.TrimSuffix(string(lines[3]), "\n"), "\n")
	if len(ext) == 0 || ext[0] != handoverFinal {
		return Handover{}, false, nil
	}
	h.Checkpoint = c
	for _, l := range ext[1:] {
		switch {
		case strings.HasPrefix(l, handoverNextKey):
			h.NextKey = strings.TrimPrefix(l, handoverNextKey)
		case strings.HasPrefix(l, handoverNextOrigin):
			h.NextOrigin = strings.TrimPrefix(l, handoverNextOrigin)
		}
	}
	if _, err := note.NewVerifier(h.NextKey); err != nil {
		return Handover{}, true, fmt.Errorf("final checkpoint: next key %q: %w", h.NextKey, err)
	}
	if h.NextOrigin == "" {
		return Handover{}, true, errors.New("final checkpoint: no next origin")
	}
	return h, true, nil
}

// HandoverState is what a log's checkpoints say about its retirement.
type HandoverState struct {
	// Final is the log's handover note, if it has one.
	Final *Handover
	// After counts the checkpoints signed after the final one: a retired
	// log that went on.
	After int
	// Origin is the first checkpoint's origin ("" when none verifies).
	Origin string
	// Signed is the final checkpoint's signed note, as the retiring key
	// signed it: the new log's leaf 0 is its record hash (GenesisLeaf).
	Signed []byte
}

// ReadHandover reads the checkpoints sidecar of the audit file at path and
// finds its final checkpoint. Records that do not verify with v are
// skipped (Checker reports them).
func ReadHandover(path string, v note.Verifier) (HandoverState, error) {
	var st HandoverState
	f, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return st, err
	}
	defer func() { _ = f.Close() }()
	nr := NewNoteReader(f)
	for {
		rec, err := nr.Next()
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, nil // Checker reports a damaged sidecar
		}
		n, err := note.Open(rec, note.VerifierList(v))
		if err != nil {
			continue
		}
		c, err := ParseCheckpoint([]byte(n.Text))
		if err != nil {
			continue
		}
		if st.Origin == "" {
			st.Origin = c.Origin
		}
		if st.Final != nil {
			st.After++
			continue
		}
		h, ok, err := ParseHandover([]byte(n.Text))
		if err != nil {
			return st, err
		}
		if ok {
			st.Final, st.Signed = &h, rec
		}
	}
}

// ErrRetired means a log ends with its final checkpoint: it was handed
// over to another key and is never sealed again.
var ErrRetired = errors.New("the log was handed over to another key")

// refuseRetired refuses to seal a file whose checkpoints end with a final
// one (a retired log put back at a path the collector writes): signing on
// would continue a log whose key was retired. Checked once per file and
// process; logged at ERROR.
func (s *Sealer) refuseRetired(path string) error {
	s.wit.mu.Lock()
	err, seen := s.wit.retired[path]
	s.wit.mu.Unlock()
	if seen {
		return err
	}
	st, rerr := ReadHandover(path, s.set.Keys.Verifier)
	if rerr == nil && st.Final != nil {
		err = fmt.Errorf("%s: %w (final checkpoint at %d lines; the log goes on as %q): "+
			"the collector does not sign a retired log; %s, then the collector starts with the key it names, %s",
			path, ErrRetired, st.Final.N, st.Final.NextOrigin, finishHandover, keyIDOf(st.Final.NextKey))
		s.set.Logger.Error("integrity: file not sealed", zap.String("path", path), zap.Error(err))
	}
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	if s.wit.retired == nil || len(s.wit.retired) >= maxIdleLogs {
		s.wit.retired = map[string]error{}
	}
	s.wit.retired[path] = err
	return err
}

// finishHandover is what a log whose checkpoints end with a final one at
// the audit path needs: the handover to move it aside.
const finishHandover = "a handover that stopped midway is finished by running `sandboxaudit log handover` again"

// keyIDOf is the name+hash of a verifier key ParseHandover accepted.
func keyIDOf(vkey string) string {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return vkey
	}
	return KeyID(v.Name(), v.KeyHash())
}

// handsOverTo reports whether the checkpoints of path, read without a
// key, hold a final checkpoint naming v: the log of a handover to v that
// was not moved aside. It only chooses what an error advises.
func handsOverTo(path string, v note.Verifier) bool {
	want, found := KeyID(v.Name(), v.KeyHash()), false
	eachCheckpointText(path, func(text []byte) bool {
		h, ok, err := ParseHandover(text)
		found = ok && err == nil && keyIDOf(h.NextKey) == want
		return !found
	})
	return found
}

// eachCheckpointText gives fn the text of each record of path's
// checkpoints sidecar, unverified, in order, until fn returns false. A
// missing or damaged sidecar ends it early, without an error: its readers
// only choose what to say.
func eachCheckpointText(path string, fn func(text []byte) bool) {
	eachCheckpoint(path, func(_, text []byte) bool { return fn(text) })
}

// eachCheckpoint is eachCheckpointText, giving fn each signed record too.
func eachCheckpoint(path string, fn func(rec, text []byte) bool) {
	f, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	nr := NewNoteReader(f)
	for {
		rec, err := nr.Next()
		if err != nil { // io.EOF, or a damaged sidecar: read no further
			return
		}
		text, _, _ := cutNoteText(rec)
		if !fn(rec, text) {
			return
		}
	}
}

// FirstOrigin is the origin of the first record of the checkpoints sidecar
// of path, unverified: it says which key verify should try.
func FirstOrigin(path string) string {
	return RecordOrigin(FirstSigned(path))
}

// RecordOrigin is the origin of a signed checkpoint record, unverified.
func RecordOrigin(rec []byte) string {
	origin, _, _ := bytes.Cut(rec, []byte("\n"))
	return string(origin)
}

// FirstSigned is the first record of the checkpoints sidecar of path,
// unverified (nil when there is none): verify tries its signature with
// the keys it trusts.
func FirstSigned(path string) []byte {
	f, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	rec, err := NewNoteReader(f).Next()
	if err != nil {
		return nil
	}
	return rec
}

// AppendHandover appends a signed handover note to the checkpoints sidecar
// of path, synced.
func AppendHandover(path string, signed []byte) error {
	f, err := openNoFollow(CheckpointsPath(path), os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return fmt.Errorf("open checkpoints: %w", err)
	}
	return writeSynced(f, AppendRecord(nil, signed), "append final checkpoint", "sync checkpoints")
}

// NewestSigned returns the newest checkpoint of the audit file at path,
// verified with v, and its signed note.
func NewestSigned(path string, v note.Verifier) ([]byte, Checkpoint, error) {
	signed, _, err := newestCheckpoint(path)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	c, err := OpenCheckpoint(signed, v)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	return signed, c, nil
}
