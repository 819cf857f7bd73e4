package cli

import (
	"context"
	"fmt"
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
		return exitProblems
	}
	keyPath, pubPath, err := integrity.GenerateKeyFiles(*out, *name)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "keygen: %v\n", err)
		return exitProblems
	}
	_, _ = fmt.Fprintf(s.Stdout, "signing key (keep secret, mode 0600): %s\nverifier key: %s\n", keyPath, pubPath)
	return exitOK
}
