package witness

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// MaxWitnesses bounds the witnesses of a log, and verify's --witness keys:
// a quorum of more would be unusual, each key is checked against every
// cosigned record, and a note holds at most 100 signatures.
const MaxWitnesses = 64

// DefaultTimeout bounds one add-checkpoint request unless configured: a
// witness that hangs must not hold a seal round, nor a command, for ever.
const DefaultTimeout = 10 * time.Second

// MaxClockSkew is how far after this host's clock a cosignature may be
// dated. A C2SP cosignature carries the time the witness signed; one
// dated later than that (a witness whose clock is wrong) would vouch for
// a checkpoint's freshness long after it is stale, so it is refused.
const MaxClockSkew = 10 * time.Minute

// Witness is one witness: where its add-checkpoint endpoint is, and the
// key its cosignatures must verify with.
type Witness struct {
	// Name is the witness key's name, which also names it in logs.
	Name     string
	url      string
	verifier *torchwood.CosignatureVerifier
	client   *http.Client
	// redact hides secrets (a password in the URL, header values) in
	// transport errors; nil keeps the error as it is.
	redact func(error) error
}

// NewWitness returns a witness reached at the submission prefix endpoint
// (add-checkpoint is appended) whose cosignatures verify with vkey.
func NewWitness(endpoint, vkey string, client *http.Client, redact func(error) error) (*Witness, error) {
	v, err := ParseKey(vkey)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &Witness{
		Name:     v.Name(),
		url:      addCheckpointURL(endpoint),
		verifier: v,
		client:   client,
		redact:   redact,
	}, nil
}

// addCheckpointURL appends add-checkpoint to the prefix's path, so that a
// query on the endpoint (an access token, say) stays a query.
func addCheckpointURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		// Config validation refuses such an endpoint; the request names
		// the error.
		return strings.TrimSuffix(endpoint, "/") + "/add-checkpoint"
	}
	// Not JoinPath: it would also clean the prefix's own path.
	u.Path = strings.TrimSuffix(u.Path, "/") + "/add-checkpoint"
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + "/add-checkpoint"
	}
	return u.String()
}

// ParseKey reads a witness's cosignature verifier key (C2SP signed-note
// vkey, Ed25519 or ML-DSA-44 tlog-cosignature).
func ParseKey(vkey string) (*torchwood.CosignatureVerifier, error) {
	v, err := torchwood.NewCosignatureVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("not a witness cosignature key (name+hash+base64): %w", err)
	}
	return v, nil
}

// PublicKey is the key v's cosignatures verify with, whatever its name
// (the vkey's base64 part). A cosignature/v1 signs no name: one key given
// under two names verifies one witness's cosignature as two.
func PublicKey(v *torchwood.CosignatureVerifier) string {
	_, rest, _ := strings.Cut(v.String(), "+")
	_, key, _ := strings.Cut(rest, "+")
	return key
}

// SameKey reports whether the verifier keys a and b (name+hash+base64: a
// log's note key or a witness's cosignature key) hold one public key,
// whatever their names and algorithm bytes. A witness that signs with the
// log's key vouches for nothing: the key's holder cosigns what it rewrote.
func SameKey(a, b string) bool {
	ka, okA := rawKey(a)
	kb, okB := rawKey(b)
	return okA && okB && bytes.Equal(ka, kb)
}

// SignedNote reports whether the public key of wkey (a witness's
// cosignature key, or any verifier key) signed msg, a signed note, as an
// Ed25519 note key under whatever name: the witness holds a key that
// signed the log, such as one the log was handed over from, whose
// verifier key no file keeps (a note names only its signer's name and
// key hash).
func SignedNote(msg []byte, wkey string) bool {
	raw, ok := rawKey(wkey)
	if !ok || len(raw) != ed25519.PublicKeySize {
		return false
	}
	_, err := note.Open(msg, note.VerifierList())
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return false
	}
	key := base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, raw...))
	for _, s := range unverified.Note.UnverifiedSigs {
		// NewVerifier refuses a hash that is not of this name and key.
		v, err := note.NewVerifier(fmt.Sprintf("%s+%08x+%s", s.Name, s.Hash, key))
		if err != nil {
			continue
		}
		if _, err := note.Open(msg, note.VerifierList(v)); err == nil {
			return true
		}
	}
	return false
}

// algEd25519 is the signed-note algorithm byte of an Ed25519 key.
const algEd25519 = 1

// rawKey is vkey's public key without its algorithm byte.
func rawKey(vkey string) ([]byte, bool) {
	_, rest, _ := strings.Cut(strings.TrimSpace(vkey), "+")
	_, b64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) < 2 {
		return nil, false
	}
	return raw[1:], true
}

// Verifier is the witness's cosignature verifier.
func (w *Witness) Verifier() note.Verifier { return w.verifier }

// ConflictError is a 409 answer: the witness last cosigned a tree of Size
// leaves, not the old size sent (Size equal to it means that the witness
// holds another tree of that size).
type ConflictError struct{ Size int64 }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("409 Conflict: the witness last cosigned a tree of size %d", e.Size)
}

// RefusedError is any other answer than 200 and 409.
type RefusedError struct{ Status int }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), refusalMeaning(e.Status))
}

// refusalMeaning says what the protocol means by each status; the body is
// not shown (an endpoint may echo the request's headers).
func refusalMeaning(status int) string {
	switch status {
	case http.StatusNotFound:
		return "the witness does not know this log's origin (add the log and its key to the witness)"
	case http.StatusForbidden:
		return "the checkpoint's signature does not verify with the key the witness holds for this origin"
	case http.StatusUnprocessableEntity:
		return "the consistency proof does not verify: this log's tree does not extend the one the witness cosigned (history rewritten or forked)"
	case http.StatusBadRequest:
		return "the witness could not read the request"
	}
	return "the witness did not cosign"
}

// Reason is a short metric label for err.
func Reason(err error) string {
	var ce *ConflictError
	var re *RefusedError
	switch {
	case errors.As(err, &ce):
		return "conflict"
	case errors.As(err, &re) && re.Status == http.StatusNotFound:
		return "unknown_log"
	case errors.As(err, &re) && re.Status == http.StatusForbidden:
		return "bad_signature"
	case errors.As(err, &re) && re.Status == http.StatusUnprocessableEntity:
		return "inconsistent"
	case errors.As(err, &re):
		return "refused"
	case errors.Is(err, errBadCosignature):
		return "bad_cosignature"
	case errors.Is(err, errFutureCosignature):
		return "dated_ahead"
	case errors.Is(err, errBadConflict), errors.Is(err, errConflicts):
		return "conflict"
	case errors.Is(err, errNoProof):
		return "inconsistent"
	}
	return "unreachable"
}

var (
	errBadCosignature = errors.New("the witness's answer holds no valid cosignature by its key")
	// errFutureCosignature is a bad answer too; the date is not shown, so
	// the same cause is logged once.
	errFutureCosignature = fmt.Errorf("the witness's cosignature is dated more than %s after this host's clock "+
		"(check the witness's clock, and this host's)", MaxClockSkew)
	errBadConflict = errors.New("409 Conflict with an unreadable size")
	// errConflicts: each retry from the size a 409 named got another 409
	// (the sizes are not shown: each round would be another cause).
	errConflicts = errors.New("the witness answered 409 Conflict, each time with another size")
	// errNoProof: this log cannot prove its tree consistent with the size
	// the witness cosigned (its hash store is short or damaged).
	errNoProof = errors.New("no consistency proof")
)

// AddCheckpoint submits signed (a checkpoint with the log's signature)
// with the consistency proof from old, and returns the witness's
// cosignature line after checking it with the witness's key.
func (w *Witness) AddCheckpoint(ctx context.Context, old int64, proof tlog.TreeProof, signed []byte) ([]byte, error) {
	body := AddCheckpointBody(old, proof, signed)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		if w.redact != nil {
			err = w.redact(err)
		}
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the witness's answer: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return w.cosignature(signed, answer)
	case http.StatusConflict:
		size, err := ParseConflictSize(answer)
		if err != nil {
			// The witness answered: not a witness to rest as unreachable.
			return nil, fmt.Errorf("%w: %w", errBadConflict, err)
		}
		return nil, &ConflictError{Size: size}
	}
	return nil, &RefusedError{Status: resp.StatusCode}
}

// cosignature returns the witness's own valid cosignature line from
// answer; lines by other keys are ignored, as the protocol says.
func (w *Witness) cosignature(signed, answer []byte) ([]byte, error) {
	lines, err := SplitSignatureLines(answer)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadCosignature, err)
	}
	n, err := note.Open(append(bytes.Clone(signed), bytes.Join(lines, nil)...), note.VerifierList(w.verifier))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadCosignature, err)
	}
	for _, s := range n.Sigs {
		if s.Name == w.verifier.Name() && s.Hash == w.verifier.KeyHash() {
			if DatedAhead(s, time.Now()) {
				return nil, errFutureCosignature
			}
			return []byte(sigPrefix + s.Name + " " + s.Base64 + "\n"), nil
		}
	}
	return nil, errBadCosignature
}

// DatedAhead reports whether the cosignature s is dated more than
// MaxClockSkew after now (or its date cannot be read).
func DatedAhead(s note.Signature, now time.Time) bool {
	t, err := torchwood.CosignatureTimestamp(s)
	return err != nil || t > now.Add(MaxClockSkew).Unix()
}
