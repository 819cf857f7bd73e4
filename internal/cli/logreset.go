package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// runLog runs the log subcommands.
func runLog(ctx context.Context, args []string, s Streams) int {
	switch {
	case len(args) > 0 && args[0] == "reset":
		return runLogReset(ctx, args[1:], s)
	case len(args) > 0 && args[0] == "handover":
		return runLogHandover(ctx, args[1:], s)
	case len(args) > 0 && args[0] == "rebuild-store":
		return runLogRebuildStore(ctx, args[1:], s)
	}
	if len(args) > 0 && !isHelp(args[0]) {
		_, _ = fmt.Fprintf(s.Stderr, "log: unknown subcommand %q\n", args[0])
	}
	_, _ = fmt.Fprintln(s.Stderr, "usage: sandboxaudit log reset --signing-key NAME.key PATH\n       sandboxaudit "+handoverSynopsis+
		"\n       sandboxaudit "+rebuildSynopsis)
	if len(args) == 1 && isHelp(args[0]) {
		return exitOK // asked for, as every command's -h
	}
	return exitUsage
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// runLogReset starts a new log over an audit path: the operator's explicit
// act the collector never does on its own. The old sidecars are kept
// beside the file under a reset name (PATH.reset-<UTC time>.checkpoints,
// ...), and the file's lines, and any closed segment no record names, are
// sealed as the new log's first leaves.
func runLogReset(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("log reset", "log reset --signing-key NAME.key PATH", s.Stderr)
	keyFile := fs.String("signing-key", "", "the collector's signing key (file.integrity.signing_key_file)")
	rest, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 1 && *keyFile != "" })
	if !ok {
		return status
	}
	s = s.shown() // the messages name files found on disk
	keys, err := integrity.LoadSigningKey(*keyFile)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log reset: --signing-key: %v\n", err)
		return exitUsage
	}
	path, err := filepath.Abs(rest[0])
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log reset: %v\n", err)
		return exitUsage
	}
	owner, ok := lockResetLog(path, s.Stderr)
	if !ok {
		return exitProblems
	}
	defer owner.Release()
	kept, err := moveSidecarsAside(path, time.Now().UTC())
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log reset: %v\n", err)
		return exitProblems
	}
	if err := sealOnce(ctx, keys, path, s.Stderr); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log reset: seal %s: %v\n", path, err)
		return exitProblems
	}
	_, _ = fmt.Fprintf(s.Stdout, "log reset: %s: a new log starts over the lines it holds now; it is not tied to the old one\n", path)
	for _, k := range kept {
		_, _ = fmt.Fprintf(s.Stdout, "log reset: kept the old %s as %s\n", filepath.Base(k[0]), k[1])
	}
	return exitOK
}

// sealOnce seals the log of path with keys, as the CLI's commands that
// own the log do. What the seal mends (a torn last line cut off into
// PATH.torn-<time>) is logged on warn: the file changes, and the operator
// learns it and where the line is kept.
func sealOnce(ctx context.Context, keys *integrity.Keys, path string, warn io.Writer) error {
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second, CallerOwns: true, Logger: stderrLogger(warn)})
	if err != nil {
		return err
	}
	return sealer.Seal(ctx, path)
}

// resetKept matches the name log reset keeps an old log's sidecars under,
// without the sidecar's suffix (PATH.reset-<time>).
var resetKept = regexp.MustCompile(`\.reset-\d{8}T\d{6}Z$`)

// isResetKept reports whether owner is the PATH.reset-<time> of sidecars
// log reset kept aside: no audit file goes with them.
func isResetKept(owner string) bool { return resetKept.MatchString(owner) }

// moveSidecarsAside renames each sidecar of path to
// PATH.reset-<time><suffix>, never over an existing file.
func moveSidecarsAside(path string, now time.Time) ([][2]string, error) {
	stamp := now.Format("20060102T150405Z")
	var kept [][2]string
	// A pending handover note goes too: the new log is tied to nothing.
	for _, suffix := range integrity.LogSidecarSuffixes() {
		from := path + suffix
		if _, err := os.Lstat(from); errors.Is(err, os.ErrNotExist) {
			continue
		}
		to := path + ".reset-" + stamp + suffix
		if _, err := os.Lstat(to); err == nil {
			return kept, fmt.Errorf("%s exists already; try again in a second", to)
		}
		if err := os.Rename(from, to); err != nil {
			return kept, err
		}
		kept = append(kept, [2]string{from, to})
	}
	return kept, nil
}
