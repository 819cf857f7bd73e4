package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// keyName is what keygen accepts: a note key name (no space, no '+') that
// is also a plain file name.
var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// runKeygen writes DIR/NAME.key (signer, 0600) and DIR/NAME.pub (verifier).
func runKeygen(_ context.Context, args []string, s Streams) int {
	fs := newFlagSet("keygen", "keygen --name NAME --out DIR", s.Stderr)
	name := fs.String("name", "", "key name, shown in every signature (letters, digits, . _ -)")
	out := fs.String("out", "", "directory for NAME.key and NAME.pub (created 0700 if missing)")
	_, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 0 && *name != "" && *out != "" })
	if !ok {
		return status
	}
	s = s.shown() // --out's path resolves through symbolic links on disk
	if !keyName.MatchString(*name) {
		_, _ = fmt.Fprintf(s.Stderr, "keygen: --name \"%s\": use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit\n", *name)
		return exitUsage
	}
	if _, err := fsutil.MkdirAll(*out); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "keygen: --out: %v\n", err)
		if errors.Is(err, fsutil.ErrNotDir) {
			return exitUsage // a bad flag value: --out names a file
		}
		return exitProblems
	}
	warnSwappable(*out, s.Stderr)
	keyPath, pubPath, err := integrity.GenerateKeyFiles(*out, *name)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "keygen: %v\n", err)
		return exitProblems
	}
	_, _ = fmt.Fprintf(s.Stdout, "signing key (keep secret, mode 0600): %s\n", keyPath)
	_, _ = fmt.Fprintf(s.Stdout, "verifier key: %s\n", pubPath)
	return exitOK
}

// warnSwappable warns of each directory on out's path that others (its
// group, or everyone) can write to without its sticky bit: out itself,
// where they can rename the keys and put their own in their place, and
// every directory above it, where they can do the same with out or a
// directory on its path. The path is walked as given and as its symlinks
// resolve. The keys are still written: the signing key is 0600 and nobody
// else reads it, and the operator may move it.
func warnSwappable(out string, stderr io.Writer) {
	// Stat follows a symlink: out's mode is its target's.
	if fi, who := swappable(out); who != "" {
		_, _ = fmt.Fprintf(stderr, "keygen: WARN --out %s is writable by %s (mode %04o, no sticky bit): "+
			"another user can swap the keys written there; move them to a directory only you can write to\n", out, who, fi.Mode().Perm())
	}
	for _, dir := range dirsAbove(out) {
		if fi, who := swappable(dir); who != "" {
			_, _ = fmt.Fprintf(stderr, "keygen: WARN --out %s is inside %s, which is writable by %s (mode %04o, no sticky bit): "+
				"another user can rename what is in it and put keys of their own in the place of these; "+
				"move them to a directory only you can write to\n", out, dir, who, fi.Mode().Perm())
		}
	}
}

// swappable stats dir and names who besides its owner can rename its
// entries ("" for nobody, or when it cannot be read).
func swappable(dir string) (os.FileInfo, string) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, ""
	}
	return fi, writers(fi.Mode())
}

// writers names who besides the owner can rename the entries of a
// directory of mode m: nobody with the sticky bit, which lets only an
// entry's owner do it.
func writers(m os.FileMode) string {
	switch {
	case m&os.ModeSticky != 0:
		return ""
	case m.Perm()&0o002 != 0:
		return "everyone"
	case m.Perm()&0o020 != 0:
		return "its group"
	}
	return ""
}

// dirsAbove is each directory above out, up to the root, along its
// absolute path and along the path its symlinks resolve to, each once.
func dirsAbove(out string) []string {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil
	}
	var above []string
	seen := map[string]bool{abs: true}
	up := func(p string) {
		for d := filepath.Dir(p); !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			above = append(above, d)
		}
	}
	up(abs)
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		seen[real] = true
		up(real)
	}
	return above
}
