package integrity

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// maxKeyFileBytes bounds what is read from a key file; a key is ~100 bytes.
const maxKeyFileBytes = 4096

// Keys is a loaded signing key: the signer and the verifier derived from it
// (the writer checks its own earlier checkpoints with it).
type Keys struct {
	Signer   note.Signer
	Verifier note.Verifier
	// VKey is the verifier key's text (name+hash+base64), to tell the
	// log's key given where another's is expected.
	VKey string
}

// KeyID names a note key the way messages and reports show it: its name
// and key hash, "name+1a2b3c4d". Two keys with one name differ by the hash.
func KeyID(name string, hash uint32) string {
	return fmt.Sprintf("%s+%08x", name, hash)
}

// LoadSigningKey reads a note signer key ("PRIVATE+KEY+name+hash+base64")
// from path. The file must not be readable or writable by group or others.
// Errors never contain the key material.
func LoadSigningKey(path string) (*Keys, error) {
	b, err := fsutil.ReadSecretFile(path, "a signing key", maxKeyFileBytes)
	if err != nil {
		return nil, err
	}
	skey := strings.TrimSpace(string(b))
	signer, err := note.NewSigner(skey)
	if err != nil {
		// note's errors name no key bytes; say which file, not what is in it.
		return nil, fmt.Errorf("%s does not hold a note signer key (PRIVATE+KEY+...): %w", path, err)
	}
	vkey, err := verifierKeyOf(skey, signer.Name())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%s: derived verifier key: %w", path, err)
	}
	return &Keys{Signer: signer, Verifier: v, VKey: vkey}, nil
}

// verifierKeyOf derives the verifier key from an Ed25519 signer key that
// note.NewSigner has already accepted.
func verifierKeyOf(skey, name string) (string, error) {
	// PRIVATE+KEY+name+hash+base64; the base64 may hold '+' itself.
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("signer key is malformed")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("signer key is not an Ed25519 key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(name, pub)
}

// LoadVerifierKey reads a note verifier key ("name+hash+base64") from path.
func LoadVerifierKey(path string) (note.Verifier, error) {
	_, v, err := ReadVerifierKey(path)
	return v, err
}

// ReadVerifierKey is LoadVerifierKey that also returns the key's text, for
// callers that write the key elsewhere: the file is read once, so the text
// is the key that was checked.
func ReadVerifierKey(path string) (string, note.Verifier, error) {
	f, _, err := fsutil.OpenRegular(path, os.O_RDONLY, 0) // a symlink is fine; a FIFO would hang
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return "", nil, err
	}
	if len(b) > maxKeyFileBytes {
		return "", nil, fmt.Errorf("%s is larger than %d bytes: not a verifier key", path, maxKeyFileBytes)
	}
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, "PRIVATE+KEY+") {
		// Said without the key; the operator gave the signing key.
		return "", nil, fmt.Errorf("%s is a signing key (NAME.key); give its verifier key, NAME.pub", path)
	}
	v, err := note.NewVerifier(text)
	if err != nil {
		return "", nil, fmt.Errorf("%s does not hold a note verifier key (name+hash+base64): %w", path, err)
	}
	return text, v, nil
}

// GenerateKeyFiles writes dir/name.key (the signer key, 0600, created
// exclusively) and dir/name.pub (the verifier key, 0644).
func GenerateKeyFiles(dir, name string) (keyPath, pubPath string, err error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", "", fmt.Errorf("generate key: %w", err)
	}
	keyPath = dir + string(os.PathSeparator) + name + ".key"
	pubPath = dir + string(os.PathSeparator) + name + ".pub"
	if err := writeNew(keyPath, skey+"\n", 0o600); err != nil {
		return "", "", err
	}
	if err := writeNew(pubPath, vkey+"\n", 0o644); err != nil {
		_ = os.Remove(keyPath)
		return "", "", err
	}
	return keyPath, pubPath, nil
}

func writeNew(path, text string, perm os.FileMode) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
