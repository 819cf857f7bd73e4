package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// runSessions prints one row per session of a trail.
func runSessions(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("sessions", "sessions [--output table|jsonl] PATH... (a file, a trail's directory, or - for stdin)", s.Stderr)
	output := fs.String("output", "table", "table or jsonl (one JSON object per session)")
	paths, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) > 0 })
	if !ok {
		return status
	}
	if *output != "table" && *output != "jsonl" {
		_, _ = fmt.Fprintf(s.Stderr, "sessions: --output: %q is not table or jsonl\n", displayText(*output))
		return exitUsage
	}
	sources, err := trail.Expand(paths)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "sessions: %s\n", errorText(err))
		return exitProblems
	}
	list, st, err := trail.ReadSessions(ctx, sources, readerOptions("sessions", s))
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "sessions: %s\n", errorText(err))
		return exitProblems
	}
	w := bufio.NewWriter(s.Stdout)
	if *output == "jsonl" {
		writeSessionsJSONL(w, list)
	} else {
		writeSessionsTable(w, list)
	}
	if err := w.Flush(); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "sessions: %s\n", errorText(err))
		return exitProblems
	}
	reportRepeated(s.Stderr, "sessions", "counted once", st)
	if st.Bad > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "sessions: %s\n", notAuditEvents(st.Bad))
		return exitProblems
	}
	return exitOK
}

func writeSessionsTable(w *bufio.Writer, list []trail.Session) {
	row := func(cols ...string) {
		_, _ = w.WriteString(strings.TrimRight(strings.Join(cols, " "), " ") + "\n")
	}
	row(pad("SESSION", 36), pad("FIRST", colTime), pad("LAST", colTime),
		fmt.Sprintf("%7s", "OPS"), fmt.Sprintf("%7s", "FAILED"), fmt.Sprintf("%5s", "OPEN"), fmt.Sprintf("%7s", "MISSING"), "TRACE")
	for _, s := range list {
		row(s.ID.String(), pad(displayCut(s.FirstTS, colTime), colTime), pad(displayCut(s.LastTS, colTime), colTime),
			fmt.Sprintf("%7d", s.Ops), fmt.Sprintf("%7d", s.Failures), fmt.Sprintf("%5d", s.Open), fmt.Sprintf("%7s", missingCell(s.Missing)), displayCut(s.TraceID, 32))
	}
	_, _ = fmt.Fprintf(w, "%s\n", plural.Count(len(list), "session"))
}

// missingCell is the MISSING column: blank for none, so the sessions
// with holes stand out.
func missingCell(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// sessionJSON is a session row of --output jsonl.
type sessionJSON struct {
	SessionID  string  `json:"session_id"`
	First      string  `json:"first"`
	Last       string  `json:"last"`
	Operations int64   `json:"operations"`
	Failures   int64   `json:"failures"`
	Open       int64   `json:"open"`
	Events     int64   `json:"events"`
	TraceID    *string `json:"trace_id"`
	// TraceIDBytes and TraceIDSHA256 describe a trace id longer than
	// trail.MaxTraceIDChars characters, whose beginning TraceID is.
	TraceIDBytes  int    `json:"trace_id_bytes,omitempty"`
	TraceIDSHA256 string `json:"trace_id_sha256,omitempty"`
	// MissingSeqs counts the seqs below the highest read that no line
	// read carries; MissingRanges are the first of them, [lo, hi] each.
	MissingSeqs   int64      `json:"missing_seqs"`
	MissingRanges [][2]int64 `json:"missing_ranges"`
}

// writeSessionsJSONL writes a row per session, its trace id with the
// characters that act on a terminal as JSON escapes (see jsonString). A
// long trace id is its beginning, with the whole id's length and hash.
func writeSessionsJSONL(w *bufio.Writer, list []trail.Session) {
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	for _, s := range list {
		row := sessionJSON{SessionID: s.ID.String(), First: s.FirstTS, Last: s.LastTS, Operations: s.Ops,
			Failures: s.Failures, Open: s.Open, Events: s.Events, MissingSeqs: s.Missing, MissingRanges: [][2]int64{}}
		for _, r := range s.MissingRanges {
			row.MissingRanges = append(row.MissingRanges, [2]int64{r.Lo, r.Hi})
		}
		if s.TraceID != "" {
			row.TraceID = &s.TraceID
		}
		if s.LongTrace != nil {
			row.TraceIDBytes, row.TraceIDSHA256 = s.LongTrace.Bytes, hex.EncodeToString(s.LongTrace.SHA256[:])
		}
		line.Reset()
		_ = enc.Encode(row)
		_, _ = w.WriteString(safetext.EscapeJSON(line.String()))
	}
}
