package fsutil

import (
	"fmt"
	"io"
	"os"
)

// ReadSecretFile reads a key file of at most limit bytes: a regular file
// that group and others cannot access, since a key readable by others is
// already leaked. what names the key in errors ("a signing
// key"), which never show the file's content.
func ReadSecretFile(path, what string, limit int) ([]byte, error) {
	f, fi, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s has mode %04o; %s must be 0600 (no group or other access)", path, perm, what)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not %s", path, limit, what)
	}
	return b, nil
}
