package witness

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"
)

const (
	// maxProofLines is the protocol's bound on consistency proof lines.
	maxProofLines = 63
	// maxBodyBytes bounds what is read from a witness or parsed from a
	// request: a cosignature line is about 150 bytes, a checkpoint 200.
	maxBodyBytes = 64 << 10
	// sigPrefix starts every note signature line (U+2014, a space).
	sigPrefix = "\u2014 "
)

// AddCheckpointBody is the add-checkpoint request body: the old size line,
// the consistency proof from it, an empty line and the signed checkpoint.
func AddCheckpointBody(old int64, proof tlog.TreeProof, signed []byte) []byte {
	b := fmt.Appendf(nil, "old %d\n", old)
	for _, h := range proof {
		b = base64.StdEncoding.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, signed...)
}

// ParseAddCheckpointBody splits a request body the way a witness reads it.
func ParseAddCheckpointBody(body []byte) (old int64, proof tlog.TreeProof, signed []byte, err error) {
	if len(body) > maxBodyBytes {
		return 0, nil, nil, fmt.Errorf("request body: %d bytes, limit %d", len(body), maxBodyBytes)
	}
	head, signed, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return 0, nil, nil, errors.New("request body: no empty line before the checkpoint")
	}
	lines := bytes.Split(head, []byte("\n"))
	size, ok := bytes.CutPrefix(lines[0], []byte("old "))
	if !ok {
		return 0, nil, nil, errors.New("request body: first line is not \"old <size>\"")
	}
	if old, err = parseSize(size); err != nil {
		return 0, nil, nil, fmt.Errorf("request body: old size: %w", err)
	}
	if len(lines)-1 > maxProofLines {
		return 0, nil, nil, fmt.Errorf("request body: %d proof lines, limit %d", len(lines)-1, maxProofLines)
	}
	for i, l := range lines[1:] {
		h, err := tlog.ParseHash(string(l))
		if err != nil {
			return 0, nil, nil, fmt.Errorf("request body: proof line %d: %w", i+1, err)
		}
		proof = append(proof, h)
	}
	if old == 0 && len(proof) > 0 {
		return 0, nil, nil, errors.New("request body: a proof from size 0")
	}
	return old, proof, signed, nil
}

// ParseConflictSize reads a 409 body (text/x.tlog.size): the size of the
// newest checkpoint the witness cosigned, in decimal, and a newline.
func ParseConflictSize(body []byte) (int64, error) {
	s, ok := bytes.CutSuffix(body, []byte("\n"))
	if !ok {
		return 0, errors.New("conflict body: no newline after the size")
	}
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("conflict body: %w", err)
	}
	return n, nil
}

// parseSize reads a tree size: ASCII decimal, no sign, no leading zero.
// The bytes are not quoted (an endpoint may echo the request's headers),
// nor counted: other junk each time is one cause, logged once.
func parseSize(s []byte) (int64, error) {
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != string(s) {
		return 0, errors.New("not a canonical tree size (decimal digits, no sign, no leading zero)")
	}
	return n, nil
}

// SplitSignatureLines checks that body is one or more note signature lines
// and returns them, each with its newline.
func SplitSignatureLines(body []byte) ([][]byte, error) {
	if len(body) == 0 {
		return nil, errors.New("no signature lines")
	}
	if len(body) > maxBodyBytes {
		return nil, fmt.Errorf("signature lines: %d bytes, limit %d", len(body), maxBodyBytes)
	}
	var out [][]byte
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		if i < 0 {
			return nil, errors.New("signature line without a newline")
		}
		line := body[:i+1]
		body = body[i+1:]
		if !bytes.HasPrefix(line, []byte(sigPrefix)) {
			// Not quoted: an endpoint may echo the request's headers.
			return nil, errors.New("a line is not a note signature line")
		}
		out = append(out, line)
	}
	return out, nil
}
