package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

const rebuildSynopsis = "log rebuild-store --key NAME.pub|--signing-key NAME.key PATH"

// runLogRebuildStore writes an audit path's hash store again from its
// trail, checked against the log's signed segment records and checkpoints:
// a lost or cut store no longer forces a new log.
func runLogRebuildStore(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("log rebuild-store", rebuildSynopsis, s.Stderr)
	pubFile := fs.String("key", "", "the log's verifier key (sandboxaudit keygen's NAME.pub)")
	keyFile := fs.String("signing-key", "", "or the collector's signing key (file.integrity.signing_key_file); only its verifier key is used")
	rest, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 1 && (*pubFile != "" || *keyFile != "") })
	if !ok {
		return status
	}
	s = s.shown() // the messages name files and the log's origin
	if *pubFile != "" && *keyFile != "" {
		_, _ = fmt.Fprintln(s.Stderr, "log rebuild-store: give --key or --signing-key, not both")
		return exitUsage
	}
	v, err := rebuildVerifier(*pubFile, *keyFile)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log rebuild-store: %v\n", err)
		return exitUsage
	}
	path, err := filepath.Abs(rest[0])
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log rebuild-store: %v\n", err)
		return exitUsage
	}
	return rebuildLockedStore(ctx, integrity.LockLog, path, v, s)
}

// rebuildLockedStore rebuilds path's store under its owner lock, taken by lock.
func rebuildLockedStore(ctx context.Context, lock lockFunc, path string, v note.Verifier, s Streams) int {
	owner, ok := lockLogWith(lock, "log rebuild-store", path, s.Stderr)
	if !ok {
		return exitProblems
	}
	defer owner.Release()
	res, err := integrity.RebuildStore(ctx, owner, path, v)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log rebuild-store: %v\n", err)
		if errors.Is(err, integrity.ErrStoreNotRebuilt) {
			_, _ = fmt.Fprintln(s.Stderr, "log rebuild-store: nothing was written")
		}
		return exitProblems
	}
	_, _ = fmt.Fprintf(s.Stdout, "log rebuild-store: %s: wrote %s: %s from %s; %s the newest checkpoint (origin \"%s\"), "+
		"%s for the collector to seal\n",
		path, res.Store, leaves(res.Leaves), plural.Count(res.Parts, "file"),
		plural.Pick(res.Signed, "the first matches", fmt.Sprintf("the first %d match", res.Signed)),
		res.Checkpoint.Origin, unsealedLeft(res.Leaves-res.Signed))
	return exitOK
}

func leaves(n int64) string { return plural.Pick(n, "1 leaf", fmt.Sprintf("%d leaves", n)) }

// unsealedLeft words the n leaves past the newest checkpoint.
func unsealedLeft(n int64) string {
	switch n {
	case 0:
		return "none after it is left"
	case 1:
		return "1 after it is left"
	}
	return fmt.Sprintf("%d after it are left", n)
}

func rebuildVerifier(pubFile, keyFile string) (note.Verifier, error) {
	if pubFile != "" {
		v, err := integrity.LoadVerifierKey(pubFile)
		if err != nil {
			return nil, fmt.Errorf("--key: %w", err)
		}
		return v, nil
	}
	keys, err := integrity.LoadSigningKey(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--signing-key: %w", err)
	}
	return keys.Verifier, nil
}
