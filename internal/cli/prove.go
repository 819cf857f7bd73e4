package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// maxBundleBytes bounds a proof bundle read by verify-proof: one line plus
// a few hundred bytes.
const maxBundleBytes = maxLineBytes + 64<<10

// runProve prints line N of FILE with its inclusion proof and the newest
// checkpoint: a bundle verify-proof checks without the file.
func runProve(_ context.Context, args []string, s Streams) int {
	fs := newFlagSet("prove", "prove FILE --line N", s.Stderr)
	line := fs.Int64("line", 0, "line number, from 1")
	rest, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 1 })
	if !ok {
		return status
	}
	// The bundle goes to stdout as it is, for verify-proof; the messages
	// name the file and quote what it holds.
	s.Stderr = shownLines{s.Stderr}
	if !isSet(fs, "line") {
		_, _ = fmt.Fprintln(s.Stderr, "prove: --line is required: the number of the line to prove, from 1")
		return exitUsage
	}
	if *line < 1 {
		_, _ = fmt.Fprintf(s.Stderr, "prove: --line must be a line number from 1, got %d\n", *line)
		return exitUsage
	}
	b, err := integrity.Prove(rest[0], *line)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "prove: %s: %v\n", rest[0], err)
		return exitProblems
	}
	_, _ = s.Stdout.Write(b.Format())
	return exitOK
}

// runVerifyProof checks a bundle alone against a verifier key.
func runVerifyProof(_ context.Context, args []string, s Streams) int {
	fs := newFlagSet("verify-proof", "verify-proof --key NAME.pub PROOF (\"-\" reads stdin)", s.Stderr)
	keyFile := fs.String("key", "", "verifier key (NAME.pub)")
	rest, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 1 && *keyFile != "" })
	if !ok {
		return status
	}
	s = s.shown() // the origin and the errors are the bundle's text
	v, err := integrity.LoadVerifierKey(*keyFile)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "verify-proof: --key: %v\n", err)
		return exitUsage
	}
	data, err := readBounded(rest[0], s.Stdin)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "verify-proof: %v\n", err)
		return exitProblems
	}
	b, err := integrity.ParseBundle(data)
	if err == nil {
		var cp integrity.Checkpoint
		if cp, err = integrity.VerifyBundle(b, v); err == nil {
			_, _ = fmt.Fprintf(s.Stdout, "OK: line %d%s is in %s at tree size %d, signed by %s\n", b.Line, leafNote(b), cp.Origin, cp.N, v.Name())
			return exitOK
		}
	}
	_, _ = fmt.Fprintf(s.Stdout, "%s: %v\n", rest[0], err)
	_, _ = fmt.Fprintln(s.Stdout, "FAILED")
	return exitProblems
}

// leafNote places a line whose file does not start the log (a segment,
// a rotated log's active file) at its leaf, as the bundle's first-leaf says.
func leafNote(b *integrity.Bundle) string {
	if b.First == 0 {
		return ""
	}
	return fmt.Sprintf(" of its file (the log's leaf %d)", b.First+b.Line-1)
}

// readBounded reads the bundle name names ("-": stdin), refusing one larger
// than maxBundleBytes. A file's size is checked before it is read, so an
// oversized one costs no memory; the read stays bounded for a file that
// grows meanwhile, and for stdin.
func readBounded(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := openRegular(name)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		if fi, err := f.Stat(); err == nil && fi.Size() > maxBundleBytes {
			return nil, tooLarge(name)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxBundleBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBundleBytes {
		return nil, tooLarge(name)
	}
	return data, nil
}

func tooLarge(name string) error {
	return fmt.Errorf("%s: larger than %d bytes: not a proof bundle", name, maxBundleBytes)
}
