package trail

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// genTrail writes ops operations spread over sessions as the collector
// writes them: sessions interleaved, each operation's start written ahead
// and its finish after the next operation's start (so the file is not in
// seq order), every seventh exec failing. It returns the bytes written.
func genTrail(w io.Writer, sessions, ops int) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	var buf []byte
	base := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	ids := make([]uuid.UUID, sessions)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "session-%d", i))
	}
	pending := make([]*auditevent.Event, sessions)
	for i := range ops {
		s := i % sessions
		k := int64(i / sessions)
		start, finish := genOp(ids[s], k, base.Add(time.Duration(i)*time.Millisecond))
		buf = auditevent.AppendLine(buf[:0], &start)
		if pending[s] != nil {
			buf = auditevent.AppendLine(buf, pending[s])
		}
		pending[s] = &finish
		m, err := bw.Write(buf)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	for _, f := range pending {
		if f != nil {
			buf = auditevent.AppendLine(buf[:0], f)
			m, _ := bw.Write(buf)
			n += int64(m)
		}
	}
	return n, bw.Flush()
}

// twoOps is operations 0 and 1 of the session named name.
func twoOps(name string) (s1, f1, s2, f2 auditevent.Event) {
	session := uuid.NewSHA1(uuid.NameSpaceOID, []byte(name))
	at := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	s1, f1 = genOp(session, 0, at)
	s2, f2 = genOp(session, 1, at)
	return s1, f1, s2, f2
}

// eventLine is e's canonical line, newline and all.
func eventLine(e auditevent.Event) string { return string(auditevent.AppendLine(nil, &e)) }

// genOp is operation k of a session: an exec, seqs 2k+1 and 2k+2.
func genOp(session uuid.UUID, k int64, at time.Time) (start, finish auditevent.Event) {
	span := fmt.Sprintf("%016x", uint64(k+1)*0x9e3779b97f4a7c15)
	trace := fmt.Sprintf("%032x", session[:])
	start = auditevent.Event{
		Version: 1, EventID: uuid.NewSHA1(session, []byte(span+"/start")), TS: auditevent.TimestampFromTime(at),
		SessionID: session, Seq: 2*k + 1, Op: "exec", Phase: auditevent.PhaseStart, SpanID: span, TraceID: &trace,
		Data: auditevent.MustParseData(fmt.Sprintf(`{"command":["sh","-lc","make test %d"],"shell":true,"timeout_s":30.0,"user":null}`, k)),
	}
	finish = start
	finish.EventID = uuid.NewSHA1(session, []byte(span+"/finish"))
	finish.TS = auditevent.TimestampFromTime(at.Add(250 * time.Millisecond))
	finish.Seq, finish.Phase, finish.OK, finish.DurationMS = 2*k+2, auditevent.PhaseFinish, true, 250.125
	exit := 0
	if k%7 == 3 {
		finish.OK, exit = false, 2
		finish.ErrorCode = auditevent.Ptr("exec_nonzero")
	}
	finish.Data = auditevent.MustParseData(fmt.Sprintf(`{"command":["sh","-lc","make test %d"],"exit_code":%d,"shell":true,"timeout_s":30.0,"user":null}`, k, exit))
	return start, finish
}
