package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

const showSynopsis = "show [--session ID] [--trace ID] [--span ID] [--op OP] [--failed] [--since T] [--until T] " +
	"[--grep TEXT] [--output table|jsonl|json] PATH... (a file, a trail's directory, or - for stdin)"

// runShow prints a trail's operations in session and seq order.
func runShow(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("show", showSynopsis, s.Stderr)
	session := fs.String("session", "", "only this session (UUID)")
	traceID := fs.String("trace", "", "only operations of this trace id, named by their start or their finish (hex in any case; another id as written or as the tools show it)")
	spanID := fs.String("span", "", "only the operation of this span id (hex in any case; another id as written or as the tools show it)")
	op := fs.String("op", "", "only this operation ("+fmt.Sprint(auditevent.Ops())+")")
	failed := fs.Bool("failed", false, "only operations whose finish has ok: false")
	since := fs.String("since", "", "only operations that started at or after T (RFC 3339 time, a date, or a duration such as 2h meaning that long ago)")
	until := fs.String("until", "", "only operations that started before T (as --since)")
	grep := fs.String("grep", "", "only operations whose lines hold TEXT (as typed, as the line escapes it, or as the table shows it)")
	output := fs.String("output", "table", "table, jsonl (the lines unchanged: pipe into verify or canon) or json")
	paths, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) > 0 })
	if !ok {
		return status
	}
	f, err := showFilter(*session, *traceID, *spanID, *op, *failed, *since, *until, *grep, time.Now())
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "show: %s\n", errorText(err))
		return exitUsage
	}
	out, err := newOpWriter(*output, s.Stdout)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "show: --output: %v\n", err)
		return exitUsage
	}
	sources, err := trail.Expand(paths)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "show: %s\n", errorText(err))
		return exitProblems
	}
	w := bufio.NewWriterSize(s.Stdout, 256<<10)
	out.reset(w)
	opts := readerOptions("show", s)
	opts.Filter, opts.KeepLines, opts.SkipWhat = f, out.needsLines(), !out.needsWhat()
	st, err := trail.ReadOps(ctx, sources, opts, out.op)
	if err == nil {
		err = out.end(st)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "show: %s\n", errorText(err))
		return exitProblems
	}
	reportRepeated(s.Stderr, "show", "shown once", st)
	if st.Bad > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "show: %s\n", notAuditEvents(st.Bad))
		return exitProblems
	}
	return exitOK
}

// readerOptions are the options show, sessions and serve read a trail
// with: standard input, and a report on stderr of each line that is not
// an event, is left out as incomplete, or is read past a torn piece.
func readerOptions(cmd string, s Streams) trail.Options {
	return trail.Options{Stdin: s.Stdin, Bad: badLineReporter(cmd, s.Stderr), Damaged: lineReporter(cmd, s.Stderr),
		Incomplete: incompleteReporter(cmd, s.Stderr), Joined: joinedReporter(cmd, s.Stderr)}
}

// badLineReporter names a bad line by file and number, never by its text:
// the line may hold anything, terminal escapes included. It names the
// first maxListedProblems of a file, as verify does (a compressed segment
// of kilobytes can hold billions of blank lines); the summary counts them
// all.
func badLineReporter(cmd string, stderr io.Writer) func(string, int64, string) {
	naming := firstOfFile(cmd, stderr, "lines are not audit events: the others are counted, not named")
	name := lineReporter(cmd, stderr)
	return func(source string, line int64, reason string) {
		if naming(source) {
			name(source, line, reason)
		}
	}
}

// firstOfFile reports whether a line of source is among the first
// maxListedProblems of its file a reporter names; at the next one it says
// so, more saying what the lines are and what became of the others.
func firstOfFile(cmd string, stderr io.Writer, more string) func(source string) bool {
	named := map[string]int{}
	return func(source string) bool {
		n := named[source]
		if n > maxListedProblems {
			return false
		}
		named[source] = n + 1
		if n == maxListedProblems {
			_, _ = fmt.Fprintf(stderr, "%s: %s: more than %d %s\n", cmd, displayText(source), maxListedProblems, more)
			return false
		}
		return true
	}
}

// lineReporter names a line of a file and why it is not read: a bad line,
// or, every time (Options.Damaged), where a compressed file cannot be read
// to its end, however many of its lines were bad before.
func lineReporter(cmd string, stderr io.Writer) func(string, int64, string) {
	return func(source string, line int64, reason string) {
		_, _ = fmt.Fprintf(stderr, "%s: %s:%d: %s\n", cmd, displayText(source), line, reason)
	}
}

// notAuditEvents words the n bad lines a command left out.
func notAuditEvents(n int64) string {
	return plural.Count(n, "line") + plural.Pick(n, " is not an audit event and was", " are not audit events and were") + " left out"
}

// reportRepeated notes the repeated copies of events a command left out
// (st.Duplicates); done says what became of each ("shown once"). A copy
// on the line of the event it repeats is half a line, not a repeated
// line: the line holds the event twice.
func reportRepeated(stderr io.Writer, cmd, done string, st trail.Stats) {
	if n := st.Duplicates - st.InLine; n > 0 {
		_, _ = fmt.Fprintf(stderr, "%s: %s (the same bytes again, as at-least-once delivery writes them) %s\n", cmd, plural.Count(n, "repeated line"), done)
	}
	if n := st.InLine; n > 0 {
		_, _ = fmt.Fprintf(stderr, "%s: %s an event twice (its line without its newline, then the same line whole after it), %s%s\n",
			cmd, plural.Count(n, "line")+plural.Pick(n, " holds", " hold"), plural.Pick(n, "", "each "), done)
	}
}

// incompleteReporter notes a live file's last line left out: a writer is
// appending it, so it is neither an event yet nor a problem.
func incompleteReporter(cmd string, stderr io.Writer) func(string, int64) {
	return func(source string, line int64) {
		_, _ = fmt.Fprintf(stderr, "%s: %s:%d: skipped an incomplete last line (no newline yet: a writer is appending it)\n", cmd, displayText(source), line)
	}
}

// joinedReporter warns of a line read past a piece: the event is whole
// and read, but the piece before it is a write cut short (a writer killed
// mid-line, or before its newline), named by its length, never quoted.
// A piece that lost only its newline is an event, read too; one that is
// the same line as the whole one is the same event, its copy left out as a
// repeat. It names the first maxListedProblems of a file, as
// badLineReporter does.
func joinedReporter(cmd string, stderr io.Writer) func(string, int64, int, trail.Piece) {
	naming := firstOfFile(cmd, stderr, "lines begin with a piece cut short: the others are read too, not named")
	return func(source string, line int64, piece int, kind trail.Piece) {
		if naming(source) {
			_, _ = fmt.Fprintf(stderr, "%s: %s:%d: warning: %s\n", cmd, displayText(source), line, joinedWarning(piece, kind))
		}
	}
}

// joinedWarning words a line read past a piece of pieceBytes bytes.
func joinedWarning(pieceBytes int, kind trail.Piece) string {
	switch kind {
	case trail.PieceRepeated:
		return "an event line of " + plural.Count(pieceBytes, "byte") + " without its newline (a write cut short) " +
			"comes before the same event line whole; it is one event, read once"
	case trail.PieceEvent:
		return "an event line of " + plural.Count(pieceBytes, "byte") + " without its newline (a write cut short) " +
			"comes before a whole event line; both events are read"
	}
	return "a torn piece of " + plural.Count(pieceBytes, "byte") + " (a write cut short) comes before a whole event line; " +
		"the event is read, the piece left out"
}

// showFilter builds the filter from the flags.
func showFilter(session, traceID, spanID, op string, failed bool, since, until, grep string, now time.Time) (trail.Filter, error) {
	f := trail.Filter{TraceID: traceID, SpanID: spanID, Op: op, Failed: failed, Grep: grep}
	if session != "" {
		id, err := auditevent.ParseUUID(session)
		if err != nil {
			return f, fmt.Errorf("--session: not a UUID")
		}
		f.Session = &id
	}
	if op != "" && !auditevent.IsOp(op) {
		return f, fmt.Errorf("--op: not a sandbox operation (one of %v)", auditevent.Ops())
	}
	var err error
	if f.Since, err = parseWhen(since, now); err != nil {
		return f, fmt.Errorf("--since: %w", err)
	}
	if f.Until, err = parseWhen(until, now); err != nil {
		return f, fmt.Errorf("--until: %w", err)
	}
	if f.Since != nil && f.Until != nil && !f.Until.After(*f.Since) {
		return f, fmt.Errorf("--until %s is not after --since %s: no operation can match (are the two swapped?)",
			f.Until.UTC().Format(time.RFC3339Nano), f.Since.UTC().Format(time.RFC3339Nano))
	}
	return f, nil
}

// parseWhen reads a time: RFC 3339 (the lines' own ts form included), a
// date (midnight UTC), or a duration before now; nil for "".
func parseWhen(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if ts, err := auditevent.ParseTimestamp(s); err == nil {
		return auditevent.Ptr(ts.Time()), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return &t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return auditevent.Ptr(now.Add(-d)), nil
	}
	return nil, fmt.Errorf("want an RFC 3339 time (2026-03-14T15:09:26Z), a date (2026-03-14) or a duration (2h)")
}
