package trail

import (
	"io"
	"time"

	"github.com/google/uuid"
)

// Filter keeps the operations that match every field set.
type Filter struct {
	Session *uuid.UUID // nil: any (the nil UUID is a session id like another)
	TraceID string     // of either line; hex in any case; also as a table shows it
	SpanID  string     // hex in any case; an id that is not hex, as written or as a table shows it
	Op      string
	Failed  bool       // finished with ok false
	Since   *time.Time // the operation's first event at or after; nil: any (the zero time is a time like another)
	Until   *time.Time // the operation's first event before; nil: any
	Grep    string     // in either line, as written, as the line escapes it or as a table shows it
}

// Options control a read.
type Options struct {
	Filter Filter
	// KeepLines carries each event's line through the sort (show's jsonl
	// and json outputs, serve); without it only the fields a table shows
	// are carried.
	KeepLines bool
	// SkipWhat leaves Op.What empty, for a caller that never shows it:
	// reading the command out of every event's data then costs nothing.
	SkipWhat bool
	// RunBytes bounds the records sorted in memory before a run is
	// spilled to a temporary file. Zero means DefaultRunBytes.
	RunBytes int
	// TempDir holds the spilled runs; "" is the system's.
	TempDir string
	// Workers decode lines in parallel. Zero means GOMAXPROCS.
	Workers int
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Tap, when set, is asked for a writer as each source is opened and
	// gets the source's bytes as read, before decompression (nil: none),
	// so a check over them is about what was read.
	Tap func(source string) io.Writer
	// Bad is told of every line that is not an event: its source, its
	// number and why, never its text.
	Bad func(source string, line int64, reason string)
	// Damaged, when set, is told instead of Bad of a compressed source
	// that cannot be read to its end, at most once a source: a caller
	// that stops naming a source's bad lines still names its damage.
	Damaged func(source string, line int64, reason string)
	// Incomplete is told of a last line left out as incomplete: the last
	// line of an active file or of standard input, without its newline and
	// not an event, which a writer is still appending.
	Incomplete func(source string, line int64)
	// Joined is told of a line read as the whole event line after a piece
	// (a writer killed mid-line, or before its newline, then another
	// appending after it): its source, its number, the piece's length in
	// bytes, and what the piece is.
	Joined func(source string, line int64, pieceBytes int, piece Piece)

	// readBytes, when set, gets each source's bytes read (before
	// decompression), by its index in the sources; bounds, when set,
	// stops the read of each source a writer may append to at its
	// entry, so a second read sees what a first one did.
	readBytes []int64
	bounds    []int64
}

// DefaultRunBytes is the in-memory sort budget.
const DefaultRunBytes = 8 << 20

// maxLineBytes bounds one line held in memory; a longer one is reported
// as bad and skipped. It is verify's bound, well above the longest line
// the collector writes by default (max_line_bytes, 24 MiB).
const maxLineBytes = 64 << 20

// Piece is what the piece before a joined line's whole event line is
// (Options.Joined).
type Piece int

const (
	// PieceTorn is a write cut short mid-line, left out.
	PieceTorn Piece = iota
	// PieceEvent is a whole event line that lost only its newline, read
	// as an event before the other.
	PieceEvent
	// PieceRepeated is the whole line's very bytes without its newline:
	// one event written twice, read as an event and its copy.
	PieceRepeated
)

// Stats count what a read saw.
type Stats struct {
	Sources    int
	Lines      int64
	Bad        int64
	Ops        int64 // operations passed to the caller
	Open       int64 // of those, started and never finished
	Failed     int64 // of those, finished with ok false
	Duplicates int64 // repeated copies of an event left out
	// InLine counts the Duplicates on the line of the event they repeat:
	// an event line without its newline, then the same line whole after
	// it.
	InLine     int64
	Incomplete int64 // incomplete last lines left out (Options.Incomplete)
	Joined     int64 // lines read past a piece (Options.Joined)
}
