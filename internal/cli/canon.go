package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	jsonl "github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// runCanon rewrites event JSON lines from stdin as canonical lines. A bad
// line is reported on stderr and skipped; the good lines are still written,
// so one typo does not lose a whole batch, and the exit status says that
// something was skipped.
func runCanon(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("canon", "canon < events.jsonl > canonical.jsonl", s.Stderr)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	if len(rest) > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "canon: unexpected arguments %q (input is read from stdin)\n", rest)
		return exitUsage
	}
	bad, err := canon(ctx, s.Stdin, s.Stdout, s.Stderr)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "canon: %v\n", err)
		return exitProblems
	}
	if bad > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "canon: %d bad line(s) skipped\n", bad)
		return exitProblems
	}
	return exitOK
}

// canon copies in to out line by line in canonical form and returns the
// number of lines it could not decode. Blank lines are skipped silently.
// The error is for I/O failures only.
func canon(ctx context.Context, in io.Reader, out, errOut io.Writer) (int, error) {
	lr := jsonl.NewReader(in, 64<<10, maxLineBytes)
	w := bufio.NewWriterSize(out, 64<<10)
	var buf []byte
	bad := 0
	for {
		if err := ctx.Err(); err != nil {
			return bad, err
		}
		ln, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad, fmt.Errorf("reading stdin: %w", err)
		}
		if ln.TooLong {
			bad++
			_, _ = fmt.Fprintf(errOut, "line %d: longer than %d bytes\n", ln.Num, maxLineBytes)
			continue
		}
		if len(bytes.TrimSpace(ln.Text)) == 0 {
			continue
		}
		ev, err := auditevent.Decode(ln.Text)
		if err != nil {
			bad++
			_, _ = fmt.Fprintf(errOut, "line %d: %v\n", ln.Num, err)
			continue
		}
		buf = auditevent.AppendLine(buf[:0], &ev)
		if _, err := w.Write(buf); err != nil {
			return bad, fmt.Errorf("writing stdout: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return bad, fmt.Errorf("writing stdout: %w", err)
	}
	return bad, nil
}
