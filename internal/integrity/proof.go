package integrity

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

const bundleHeader = "sandboxaudit inclusion proof v1\n"

// maxProofHashes bounds an inclusion proof: a tree of 2^63 leaves needs 63.
const maxProofHashes = 64

// Bundle shows one line of an audit file to a third party: the line, its
// inclusion proof and the signed checkpoint it is proven against.
//
// Text form:
//
//	sandboxaudit inclusion proof v1
//	line N
//	[first-leaf F]
//	proof K
//	<K base64 hashes, one per line>
//	<the audit line, with its newline>
//	<the signed checkpoint note>
//
// first-leaf is there when the file's line 1 is not the tree's leaf 0: a
// closed segment, the active file of a rotated log, or a log that starts
// from a handover note.
type Bundle struct {
	Line int64 // from 1
	// First is the leaf index of the file's line 1.
	First      int64
	Record     []byte
	Proof      tlog.RecordProof
	Checkpoint []byte
}

// Format returns the bundle's text form.
func (b *Bundle) Format() []byte {
	out := []byte(bundleHeader)
	out = fmt.Appendf(out, "line %d\n", b.Line)
	if b.First != 0 {
		out = fmt.Appendf(out, "first-leaf %d\n", b.First)
	}
	out = fmt.Appendf(out, "proof %d\n", len(b.Proof))
	for _, h := range b.Proof {
		out = append(out, base64.StdEncoding.EncodeToString(h[:])...)
		out = append(out, '\n')
	}
	out = append(out, b.Record...)
	return append(out, b.Checkpoint...)
}

// ParseBundle parses a bundle's text form (without checking it).
func ParseBundle(data []byte) (*Bundle, error) {
	if len(data) > 2*maxCheckpointBytes+MaxProvenLine {
		return nil, errors.New("proof bundle: too large")
	}
	rest, ok := bytes.CutPrefix(data, []byte(bundleHeader))
	if !ok {
		return nil, errors.New("proof bundle: first line is not \"sandboxaudit inclusion proof v1\"")
	}
	var b Bundle
	var line []byte
	line, rest = cutLine(rest)
	n, err := numberAfter(line, "line ")
	if err != nil || n < 1 {
		return nil, fmt.Errorf("proof bundle: line 2 must be \"line N\" with N >= 1, got %q", line)
	}
	b.Line = n
	line, rest = cutLine(rest)
	proofLine := 3 // the "proof K" line's number
	if bytes.HasPrefix(line, []byte("first-leaf ")) {
		// Not signed: what the bundle proves is the leaf, first-leaf +
		// line - 1; the line's number within its file rests on this value.
		f, err := numberAfter(line, "first-leaf ")
		if err != nil || f < 1 || f > math.MaxInt64-n {
			return nil, fmt.Errorf("proof bundle: line 3 must be \"first-leaf F\" with F >= 1, got %q", line)
		}
		b.First = f
		line, rest = cutLine(rest)
		proofLine++
	}
	k, err := numberAfter(line, "proof ")
	if err != nil || k > maxProofHashes {
		return nil, fmt.Errorf("proof bundle: line %d must be \"proof K\" with K <= %d, got %q", proofLine, maxProofHashes, line)
	}
	for i := range k {
		line, rest = cutLine(rest)
		h, err := base64.StdEncoding.Strict().DecodeString(string(line))
		if err != nil || len(h) != tlog.HashSize {
			return nil, fmt.Errorf("proof bundle: proof hash %d is not %d bytes of base64", i+1, tlog.HashSize)
		}
		b.Proof = append(b.Proof, tlog.Hash(h))
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		return nil, errors.New("proof bundle: the audit line is missing or has no newline")
	}
	b.Record, b.Checkpoint = rest[:i+1], rest[i+1:]
	if len(b.Checkpoint) == 0 {
		return nil, errors.New("proof bundle: the signed checkpoint is missing")
	}
	return &b, nil
}

func cutLine(b []byte) (line, rest []byte) {
	line, rest, _ = bytes.Cut(b, []byte("\n"))
	return line, rest
}

func numberAfter(line []byte, prefix string) (int64, error) {
	s, ok := bytes.CutPrefix(line, []byte(prefix))
	if !ok {
		return 0, errors.New("missing prefix")
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != string(s) {
		return 0, errors.New("not a canonical number")
	}
	return n, nil
}

// VerifyBundle checks b alone: the checkpoint's signature by v, and the
// line's inclusion in the checkpoint's tree at position Line.
func VerifyBundle(b *Bundle, v note.Verifier) (Checkpoint, error) {
	cp, err := OpenCheckpoint(b.Checkpoint, v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	leaf := b.First + b.Line - 1
	if leaf >= cp.N {
		return cp, fmt.Errorf("line %d is beyond the checkpoint's %d lines", b.Line, cp.N-b.First)
	}
	if err := tlog.CheckRecord(b.Proof, cp.N, cp.Hash, leaf, tlog.RecordHash(b.Record)); err != nil {
		return cp, fmt.Errorf("line %d is not proven by the checkpoint: %w", b.Line, err)
	}
	return cp, nil
}

// Prove builds the bundle for line (from 1) of the audit file at path, or
// of one of its closed segments, against the newest checkpoint in the
// audit file's sidecar. It checks the line and the store against that
// checkpoint first, so it never hands out a proof that cannot verify.
func Prove(path string, line int64) (*Bundle, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err // names the audit file, not its sidecar
	}
	part, err := locatePart(path)
	if err != nil {
		return nil, err
	}
	signed, cp, err := newestCheckpoint(part.log)
	if err != nil {
		return nil, err
	}
	first, covered := part.first, cp.N-part.first
	if part.count >= 0 {
		covered = min(covered, part.count)
	}
	if covered < 1 {
		return nil, fmt.Errorf("line %d: the newest checkpoint covers none of this file's lines", line)
	}
	if line < 1 || line > covered {
		return nil, fmt.Errorf("line %d: the newest checkpoint covers %s of this file", line, plural.Lines(1, covered))
	}
	record, err := readLine(part.file, line)
	if err != nil {
		return nil, err
	}
	st, _, err := openRegular(StorePath(part.log), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("open hash store: %w", err)
	}
	defer func() { _ = st.Close() }()
	r := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, idx := range indexes {
			if _, err := st.ReadAt(out[i][:], idx*tlog.HashSize); err != nil {
				return nil, fmt.Errorf("hash store: %w", err)
			}
		}
		return out, nil
	})
	root, err := tlog.TreeHash(cp.N, r)
	if err != nil {
		return nil, err
	}
	if root != cp.Hash {
		return nil, fmt.Errorf("the hash store does not match the newest checkpoint (run verify --key)")
	}
	proof, err := tlog.ProveRecord(cp.N, first+line-1, r)
	if err != nil {
		return nil, err
	}
	if err := tlog.CheckRecord(proof, cp.N, cp.Hash, first+line-1, tlog.RecordHash(record)); err != nil {
		return nil, fmt.Errorf("line %d does not match the hash sealed for it (run verify --key)", line)
	}
	return &Bundle{Line: line, First: first, Record: record, Proof: proof, Checkpoint: signed}, nil
}

// newestCheckpoint returns the last complete record of path's checkpoints,
// unverified: the bundle's reader verifies it.
func newestCheckpoint(path string) ([]byte, Checkpoint, error) {
	f, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, Checkpoint{}, fmt.Errorf("open checkpoints: %w", err)
	}
	defer func() { _ = f.Close() }()
	nr := NewNoteReader(f)
	var last []byte
	for {
		rec, err := nr.Next()
		if err == io.EOF || errors.Is(err, ErrTornRecord) {
			break
		}
		if err != nil {
			return nil, Checkpoint{}, err
		}
		last = append(last[:0], rec...)
	}
	if last == nil {
		return nil, Checkpoint{}, errors.New("no checkpoint yet")
	}
	body, _, _ := bytes.Cut(last, []byte("\n\n"))
	cp, err := ParseCheckpoint(append(body, '\n'))
	if err != nil {
		return nil, Checkpoint{}, err
	}
	return last, cp, nil
}

// readLine returns line n (from 1) of part with its newline.
func readLine(part TrailPart, n int64) ([]byte, error) {
	f, err := part.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 64<<10)
	for i := int64(1); ; i++ {
		if i < n {
			if err := skipLine(r); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		return readBoundedLine(r, n)
	}
}

// MaxProvenLine is the longest line a bundle carries: ParseBundle refuses
// a larger one, so prove refuses it before reading it whole.
const MaxProvenLine = 64 << 20

// readBoundedLine reads line n from r, up to MaxProvenLine bytes.
func readBoundedLine(r *bufio.Reader, n int64) ([]byte, error) {
	var b []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(b)+len(part) > MaxProvenLine {
			return nil, fmt.Errorf("line %d is longer than %d bytes, more than a proof bundle carries", n, MaxProvenLine)
		}
		b = append(b, part...)
		switch {
		case err == nil:
			return b, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
}

func skipLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}
