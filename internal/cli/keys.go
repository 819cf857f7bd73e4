package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	if !keyName.MatchString(*name) {
		_, _ = fmt.Fprintf(s.Stderr, "keygen: --name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit\n", *name)
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
	_, _ = fmt.Fprintf(s.Stdout, "signing key (keep secret, mode 0600): %s\nverifier key: %s\n", keyPath, pubPath)
	return exitOK
}

// warnSwappable warns when others can write to dir without its sticky bit:
// they can then rename the key written there and put their own in its
// place. The key is still written: it is 0600 and nobody else reads it,
// and the operator may move it.
func warnSwappable(dir string, stderr io.Writer) {
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o002 == 0 || fi.Mode()&os.ModeSticky != 0 {
		return
	}
	_, _ = fmt.Fprintf(stderr, "keygen: WARN --out %s is writable by everyone (mode %04o, no sticky bit): "+
		"another user can swap the keys written there; move them to a directory only you can write to\n", dir, fi.Mode().Perm())
}
