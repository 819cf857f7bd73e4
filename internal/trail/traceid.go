package trail

import (
	"crypto/sha256"
	"strings"
)

// MaxTraceIDChars bounds the first trace id a Session keeps: the receiver
// takes an id of megabytes, and a session's entry must not grow with it.
// A longer id is kept as its first MaxTraceIDChars characters and a
// LongTraceID.
const MaxTraceIDChars = 1024

// LongTraceID stands for a first trace id longer than MaxTraceIDChars
// characters, of which the Session keeps the beginning only: enough to
// tell it from another id without holding it.
type LongTraceID struct {
	Bytes  int               // the whole id's length in bytes
	SHA256 [sha256.Size]byte // the whole id's SHA-256
}

// setTraceID makes id the session's first trace id, cut to
// MaxTraceIDChars characters.
func (s *Session) setTraceID(id string) {
	c := cutTraceID(id)
	s.TraceID, s.LongTrace = c.id, c.long
}

// cutTrace is a trace id as a Session keeps it.
type cutTrace struct {
	id   string
	long *LongTraceID // set when id is the beginning of a longer one
}

// cutTraceID is id cut to MaxTraceIDChars characters (an invalid byte
// counts as one), a copy: the line it is read from moves on.
func cutTraceID(id string) cutTrace {
	n := 0
	for i := range id {
		if n == MaxTraceIDChars {
			return cutTrace{strings.Clone(id[:i]), &LongTraceID{Bytes: len(id), SHA256: sha256.Sum256([]byte(id))}}
		}
		n++
	}
	return cutTrace{id: strings.Clone(id)}
}

// InFirstTrace reports whether id is the session's first trace id,
// whole: a long id is compared by its length, beginning and hash.
func (s *Session) InFirstTrace(id string) bool {
	if s.LongTrace == nil {
		return id == s.TraceID
	}
	return len(id) == s.LongTrace.Bytes && strings.HasPrefix(id, s.TraceID) && sha256.Sum256([]byte(id)) == s.LongTrace.SHA256
}
