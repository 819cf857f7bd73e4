package integrity

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// maxCheckpointBytes bounds one signed checkpoint note; a real one is about
// 200 bytes.
const maxCheckpointBytes = 16 << 10

// Checkpoint is a C2SP tlog-checkpoint: the log's origin, its tree size and
// the RFC 6962 root hash of that tree.
type Checkpoint struct {
	Origin string
	N      int64
	Hash   tlog.Hash
}

// originOf is the origin of the checkpoints the sealer writes for the file
// at path with the key named keyName: "<key name>/<path below base>",
// slash-separated, or "<key name>/<file name>" when base is empty or not
// above path. Below a templated directory ({session_id}/events.jsonl) the
// file name alone is every session's, and one session's directory swapped
// for another's would pass for it.
func originOf(keyName, path, base string) string {
	rel := filepath.Base(path)
	abs, err := filepath.Abs(path)
	if base != "" && err == nil {
		if r, err := filepath.Rel(base, abs); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			rel = filepath.ToSlash(r)
		}
	}
	return keyName + "/" + rel
}

// namesFile reports whether originFile (an origin without its key name)
// names the file at path: the file name starts with the origin's, so a
// rotated copy (events.jsonl.1, events.jsonl-20261203) still matches, and
// the file's directories end with the origin's. An origin of a file name
// alone (all earlier releases wrote) matches that name in any directory.
func namesFile(originFile, path string) bool {
	dir, name := pathpkg.Split(originFile)
	if name == "" || !strings.HasPrefix(filepath.Base(path), name) {
		return false
	}
	if dir == "" {
		return true
	}
	abs, err := filepath.Abs(path)
	return err == nil && strings.HasSuffix(filepath.ToSlash(filepath.Dir(abs))+"/", "/"+dir)
}

// originFileOf is origin without the name of the key that signed it: the
// file's path as originOf wrote it. An origin of another shape gives its
// part after the last "/" (a key name may hold "/"), or nothing.
func originFileOf(origin, keyName string) string {
	if rest, ok := strings.CutPrefix(origin, keyName+"/"); ok {
		return rest
	}
	i := strings.LastIndexByte(origin, '/')
	if i < 0 {
		return ""
	}
	return origin[i+1:]
}

// Format returns the checkpoint body: origin, size and base64 root hash,
// one per line.
func (c Checkpoint) Format() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.N, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// ParseCheckpoint parses a checkpoint body (the text of a note). Extension
// lines after the root hash are allowed by C2SP and ignored.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) > maxCheckpointBytes {
		return Checkpoint{}, fmt.Errorf("checkpoint: %d bytes, limit %d", len(text), maxCheckpointBytes)
	}
	lines := bytes.SplitN(text, []byte("\n"), 4)
	if len(lines) < 4 {
		return Checkpoint{}, errors.New("checkpoint: fewer than three lines")
	}
	origin := string(lines[0])
	if origin == "" {
		return Checkpoint{}, errors.New("checkpoint: empty origin line")
	}
	n, err := strconv.ParseInt(string(lines[1]), 10, 64)
	if err != nil || n < 0 || string(lines[1]) != strconv.FormatInt(n, 10) {
		return Checkpoint{}, fmt.Errorf("checkpoint: tree size %q is not a canonical non-negative decimal", lines[1])
	}
	h, err := base64.StdEncoding.Strict().DecodeString(string(lines[2]))
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: root hash %q is not %d bytes of base64", lines[2], tlog.HashSize)
	}
	if rest := lines[3]; len(rest) > 0 && bytes.Contains(rest, []byte("\n\n")) {
		return Checkpoint{}, errors.New("checkpoint: blank line among extension lines")
	}
	c := Checkpoint{Origin: origin, N: n}
	copy(c.Hash[:], h)
	return c, nil
}

// SignCheckpoint returns c as a signed note.
func SignCheckpoint(c Checkpoint, s note.Signer) ([]byte, error) {
	msg, err := note.Sign(&note.Note{Text: string(c.Format())}, s)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	return msg, nil
}

// OpenCheckpoint verifies a signed checkpoint note against v and parses it.
func OpenCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	return openCheckpoint(msg, v, "checkpoint note", maxCheckpointBytes)
}

// openCheckpoint is OpenCheckpoint for a note of at most limit bytes, what
// naming it in the error that says it is longer.
func openCheckpoint(msg []byte, v note.Verifier, what string, limit int) (Checkpoint, error) {
	if len(msg) > limit {
		return Checkpoint{}, fmt.Errorf("%s: %d bytes, limit %d", what, len(msg), limit)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, describeNoteError(err, v)
	}
	return ParseCheckpoint([]byte(n.Text))
}

// ErrNotSignedBy marks a note (a checkpoint, a segment record) that
// another key signed.
var ErrNotSignedBy = errors.New("not signed by key")

func describeNoteError(err error, v note.Verifier) error {
	var unverified *note.UnverifiedNoteError
	if errors.As(err, &unverified) {
		var names []string
		for _, s := range unverified.Note.UnverifiedSigs {
			// The file's, shown in a terminal: escaped, so a name cannot
			// reorder what it shows.
			names = append(names, safetext.Escape(KeyID(s.Name, s.Hash)))
		}
		return fmt.Errorf("%w %s (signed by %v)", ErrNotSignedBy, KeyID(v.Name(), v.KeyHash()), names)
	}
	var invalid *note.InvalidSignatureError
	if errors.As(err, &invalid) {
		return fmt.Errorf("signature of key %s does not match the checkpoint", KeyID(v.Name(), v.KeyHash()))
	}
	return fmt.Errorf("malformed signed note: %w", err)
}
