package trail

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A record is one event as the sort carries it: a fixed key that orders
// records by memory comparison, then the fields show needs, so that the
// merged stream is never decoded again.
//
//	key:  session(16) opSeq(8) spanHash(8) phase(1) seq(8) order(8)
//	body: flags(1) tsMicros(8) duration(8) lineHash(8), the uvarint-prefixed
//	      line, then the strings ts, op, spanID, traceID, errorCode, exit,
//	      what, eventID
//
// A string is uvarint(len<<1|inLine): with inLine set, the uvarint position
// of the same bytes in the line follows, else the bytes. With the line kept,
// most strings are text of it, so the record carries them once.
//
// opSeq is the seq of the operation's start (a finish takes it from its
// start), so an operation's two events sort side by side at the start's
// place; order (source, line) keeps the sort stable.
const keyLen = 16 + 8 + 8 + 1 + 8 + 8

// bodyFixed is the body's fixed part: flags, tsMicros, duration, lineHash.
const bodyFixed = 1 + 8 + 8 + 8

const (
	flagOK      = 1 << iota // finish ok
	flagMatch               // the line holds --grep's text
	flagPhaseOK             // phase is start or finish (always set)
	flagTrace               // the line's trace id is --trace's
)

// Event is one event of an operation, as read.
type Event struct {
	Seq        int64
	TS         string // as in the line
	TSMicros   int64
	OK         bool
	DurationMS float64
	ErrorCode  string // "" for null
	Exit       string // data.exit_code of a finish, as JSON text; "" when absent
	EventID    string
	Line       []byte // the canonical line, with its newline when one follows it; nil unless Options.KeepLines; valid as the Op is
	Source     int    // index into Reader.Sources
	LineNum    int64
	match      bool
	traceMatch bool
	hash       uint64 // of the line, to tell a repeated line from another event
}

// Op is one operation: its start and its finish, either nil when the
// trail does not hold it (an open operation has no Finish).
type Op struct {
	Session [16]byte
	SpanID  string
	TraceID string // "" for null
	Op      string
	What    string // the command or path, from the start's data (the finish's when there is no start); over 1 KiB, cut and ending in …
	Start   *Event
	Finish  *Event
}

// Open reports whether the operation started and never finished.
func (o *Op) Open() bool { return o.Start != nil && o.Finish == nil }

// Failed reports whether the operation finished with ok false.
func (o *Op) Failed() bool { return o.Finish != nil && !o.Finish.OK }

// First is the operation's first event present.
func (o *Op) First() *Event {
	if o.Start != nil {
		return o.Start
	}
	return o.Finish
}

// The record's strings, in their order.
const (
	strTS = iota
	strOp
	strSpanID
	strTraceID
	strErrorCode
	strExit
	strWhat
	strEventID
	numStrings
)

// rec is a record's fields before encoding.
type rec struct {
	session  [16]byte
	opSeq    int64
	spanHash uint64
	phase    byte // 0 start, 1 finish
	order    uint64
	spanID   string
	traceID  string
	op       string
	what     string
	data     []byte // the canonical data object, while the line is read
	// light is ScanLine's reading of the line, nil when the line took the
	// full decode; valid while the line is read.
	light *auditevent.LineFields
	// at holds where each string sits in the line (ev.Line), plus one; 0
	// when it is not known to be text of the line. dataAt is data's.
	at     [numStrings]int
	dataAt int
	ev     Event
}

// orderOf packs a source index and a line number into the key's last field.
func orderOf(source int, line int64) uint64 { return uint64(source)<<40 | uint64(line)&(1<<40-1) }

// sortable maps a signed integer onto an unsigned one of the same order.
func sortable(v int64) uint64 { return uint64(v) ^ 1<<63 }

func hashSpan(seed maphash.Seed, span string) uint64 { return maphash.String(seed, span) }

// appendRec encodes r (without a length prefix) onto dst.
func appendRec(dst []byte, r *rec) []byte {
	dst = append(dst, r.session[:]...)
	dst = binary.BigEndian.AppendUint64(dst, sortable(r.opSeq))
	dst = binary.BigEndian.AppendUint64(dst, r.spanHash)
	dst = append(dst, r.phase)
	dst = binary.BigEndian.AppendUint64(dst, sortable(r.ev.Seq))
	dst = binary.BigEndian.AppendUint64(dst, r.order)
	flags := byte(flagPhaseOK)
	if r.ev.OK {
		flags |= flagOK
	}
	if r.ev.match {
		flags |= flagMatch
	}
	if r.ev.traceMatch {
		flags |= flagTrace
	}
	dst = append(dst, flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.ev.TSMicros))
	dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(r.ev.DurationMS))
	dst = binary.BigEndian.AppendUint64(dst, r.ev.hash)
	line := r.ev.Line
	dst = binary.AppendUvarint(dst, uint64(len(line)))
	dst = append(dst, line...)
	for i, s := range [numStrings]string{r.ev.TS, r.op, r.spanID, r.traceID, r.ev.ErrorCode, r.ev.Exit, r.what, r.ev.EventID} {
		if at := r.at[i] - 1; at >= 0 && len(s) > 0 && at+len(s) <= len(line) {
			dst = binary.AppendUvarint(dst, uint64(len(s))<<1|1)
			dst = binary.AppendUvarint(dst, uint64(at))
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(len(s))<<1)
		dst = append(dst, s...)
	}
	return dst
}

// decodeRec reads a record appendRec wrote into r. The strings are copied
// (a string equal to r's previous one is kept: an operation's two records
// share most), so they outlive b; the line is a view of b.
func decodeRec(b []byte, r *rec) bool {
	if len(b) < keyLen+bodyFixed {
		return false
	}
	copy(r.session[:], b[:16])
	r.opSeq = int64(binary.BigEndian.Uint64(b[16:]) ^ 1<<63)
	r.spanHash = binary.BigEndian.Uint64(b[24:])
	r.phase = b[32]
	r.ev.Seq = int64(binary.BigEndian.Uint64(b[33:]) ^ 1<<63)
	r.order = binary.BigEndian.Uint64(b[41:])
	r.ev.Source, r.ev.LineNum = int(r.order>>40), int64(r.order&(1<<40-1))
	flags := b[keyLen]
	r.ev.OK, r.ev.match, r.ev.traceMatch = flags&flagOK != 0, flags&flagMatch != 0, flags&flagTrace != 0
	r.ev.TSMicros = int64(binary.BigEndian.Uint64(b[keyLen+1:]))
	r.ev.DurationMS = math.Float64frombits(binary.BigEndian.Uint64(b[keyLen+9:]))
	r.ev.hash = binary.BigEndian.Uint64(b[keyLen+17:])
	line, b, ok := cutBytes(b[keyLen+bodyFixed:])
	if !ok {
		return false
	}
	r.ev.Line = nil
	if len(line) > 0 {
		r.ev.Line = line
	}
	for _, p := range [numStrings]*string{&r.ev.TS, &r.op, &r.spanID, &r.traceID, &r.ev.ErrorCode, &r.ev.Exit, &r.what, &r.ev.EventID} {
		var s []byte
		if s, b, ok = cutString(b, line); !ok {
			return false
		}
		if string(s) != *p {
			*p = string(s)
		}
	}
	return true
}

// cutString reads one string appendRec wrote: its bytes in b, or its
// position in line.
func cutString(b, line []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, false
	}
	b = b[k:]
	size := n >> 1
	if n&1 == 0 {
		if uint64(len(b)) < size {
			return nil, nil, false
		}
		return b[:size], b[size:], true
	}
	at, k := binary.Uvarint(b)
	if k <= 0 || at > uint64(len(line)) || uint64(len(line))-at < size {
		return nil, nil, false
	}
	return line[at : at+size], b[k:], true
}

func cutBytes(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// errCorruptRun means a spilled run did not read back as written.
var errCorruptRun = errorString("temporary sort file: a record does not decode")

type errorString string

func (e errorString) Error() string { return string(e) }

// groupKeyLen is the key's prefix an operation's records share: session,
// opSeq and spanHash.
const groupKeyLen = 16 + 8 + 8
