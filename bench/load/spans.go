// Package load generates and sends the end-to-end benchmark's load: OTLP/HTTP
// trace export requests of sandbox exec spans shaped exactly as sandboxtrace
// records them (same attributes, canonical data from the same encoder).
package load

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// Shape says what to generate.
type Shape struct {
	// Spans is the total number of exec spans.
	Spans int
	// PerRequest is the number of spans in one export request.
	PerRequest int
	// Sessions is how many sandbox sessions (one trace each) the spans are
	// spread over, round robin.
	Sessions int
	// Light makes light spans instead of sandboxtrace's: no parent, no
	// event ids, no GenAI attributes, a short command, and a random trace
	// per span (the session ids still go round robin). Other producers
	// send spans like these, and they show a collector's fixed cost per
	// span.
	Light bool
}

// Name is the shape's name in reports.
func (s Shape) Name() string {
	if s.Light {
		return "light"
	}
	return "sandboxtrace"
}

// Validate refuses shapes that cannot be generated.
func (s Shape) Validate() error {
	switch {
	case s.Spans <= 0:
		return fmt.Errorf("spans must be > 0, got %d", s.Spans)
	case s.PerRequest <= 0:
		return fmt.Errorf("per-request must be > 0, got %d", s.PerRequest)
	case s.Sessions <= 0:
		return fmt.Errorf("sessions must be > 0, got %d", s.Sessions)
	}
	return nil
}

// epoch is the first span's start; spans follow 1 ms apart.
var epoch = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// Requests builds every request of the run as OTLP protobuf bytes, so
// sending costs the load generator no encoding. Every span and event id is
// unique within the run.
func Requests(s Shape) ([][]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	g := newGenerator(s.Sessions)
	g.light = s.Light
	var reqs [][]byte
	for first := 0; first < s.Spans; first += s.PerRequest {
		n := min(s.PerRequest, s.Spans-first)
		td, err := g.traces(first, n)
		if err != nil {
			return nil, err
		}
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			return nil, fmt.Errorf("marshal request: %w", err)
		}
		reqs = append(reqs, b)
	}
	return reqs, nil
}

// generator holds the per-session state: ids and the next seq.
type generator struct {
	sessions []session
	light    bool
	rand     *rand.ChaCha8 // the light shape's trace ids, reproducible
}

type session struct {
	id      string
	traceID pcommon.TraceID
	rootID  pcommon.SpanID
	seq     int64
}

func newGenerator(n int) *generator {
	g := &generator{sessions: make([]session, n), rand: rand.NewChaCha8([32]byte{'b', 'e', 'n', 'c', 'h'})}
	for i := range g.sessions {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "bench-session-%d", i))
		var root pcommon.SpanID
		binary.BigEndian.PutUint64(root[:], uint64(i)+1)
		g.sessions[i] = session{id: id.String(), traceID: pcommon.TraceID(id), rootID: root}
	}
	return g
}

// traces returns spans first..first+n-1 in one resource and scope, as a
// sandboxtrace-instrumented process exports them.
func (g *generator) traces(first, n int) (ptrace.Traces, error) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "sandbox-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(sandboxtrace.ScopeName)
	spans := ss.Spans()
	spans.EnsureCapacity(n)
	for i := first; i < first+n; i++ {
		fill := g.execSpan
		if g.light {
			fill = g.lightSpan
		}
		if err := fill(spans.AppendEmpty(), i); err != nil {
			return td, err
		}
	}
	return td, nil
}

// execSpan fills span i: a successful exec, attributes in the order
// sandboxtrace sets them (Start, then Finish with the flat exit code).
func (g *generator) execSpan(span ptrace.Span, i int) error {
	s := &g.sessions[i%len(g.sessions)]
	start := epoch.Add(time.Duration(i) * time.Millisecond)
	dur := time.Duration(2000+i%5000) * time.Microsecond
	end := start.Add(dur)

	span.SetName(semconv.SpanNamePrefix + "exec")
	span.SetKind(ptrace.SpanKindInternal)
	span.SetTraceID(s.traceID)
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], uint64(i)+1<<40)
	span.SetSpanID(sid)
	span.SetParentSpanID(s.rootID)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(end))

	cmd := []any{"python", "-m", "pytest", "-q", fmt.Sprintf("tests/test_module_%d.py", i%97)}
	startData, err := auditevent.MarshalData(map[string]any{"command": cmd, "timeout_s": 30, "shell": false, "user": nil})
	if err != nil {
		return err
	}
	exit := 0
	finishData, err := auditevent.MarshalData(map[string]any{
		"command": cmd, "timeout_s": 30, "shell": false, "user": nil,
		"exit_code": exit, semconv.AttrProcessExitCode: exit,
	})
	if err != nil {
		return err
	}
	s.seq += 2
	a := span.Attributes()
	a.EnsureCapacity(16)
	a.PutStr(semconv.AttrOperation, "exec")
	a.PutStr(semconv.AttrSessionID, s.id)
	a.PutInt(semconv.AttrStartSeq, s.seq-1)
	a.PutStr(semconv.AttrStartID, eventID(i, 0))
	a.PutStr(semconv.AttrStartData, startData.String())
	a.PutStr(semconv.AttrBackend, "docker")
	a.PutStr(semconv.AttrGenAIOperationName, semconv.GenAIExecuteTool)
	a.PutStr(semconv.AttrGenAIToolName, semconv.SpanNamePrefix+"exec")
	a.PutStr(semconv.AttrGenAIToolType, semconv.GenAIToolTypeFunction)
	a.PutStr(semconv.AttrOpenInferenceSpanKind, semconv.OpenInferenceKindTool)
	a.PutInt(semconv.AttrFinishSeq, s.seq)
	a.PutStr(semconv.AttrFinishID, eventID(i, 1))
	a.PutBool(semconv.AttrOK, true)
	a.PutDouble(semconv.AttrDurationMS, float64(dur)/float64(time.Millisecond))
	a.PutStr(semconv.AttrFinishData, finishData.String())
	a.PutInt(semconv.AttrProcessExitCode, int64(exit))
	return nil
}

// eventID is a version 4 shaped UUID unique per span and phase, as
// sandboxtrace's uuid.NewString gives, but reproducible.
func eventID(span, phase int) string {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[8:], uint64(span)<<1|uint64(phase))
	u[6] = 0x40
	u[8] |= 0x80
	u[0], u[1] = 0xbe, 0x4c
	return u.String()
}

// lightCommand is the light shape's start and finish data, the same for
// every span.
var lightStart, lightFinish = func() (string, string) {
	start, err := auditevent.MarshalData(map[string]any{"command": []any{"ls"}, "timeout_s": nil, "shell": false, "user": nil})
	if err != nil {
		panic(err)
	}
	finish, err := auditevent.MarshalData(map[string]any{"command": []any{"ls"}, "timeout_s": nil, "shell": false, "user": nil, "exit_code": 0})
	if err != nil {
		panic(err)
	}
	return start.String(), finish.String()
}()

// lightSpan fills span i of the light shape: a successful exec of "ls"
// with a trace of its own, no parent and no event ids.
func (g *generator) lightSpan(span ptrace.Span, i int) error {
	s := &g.sessions[i%len(g.sessions)]
	start := epoch.Add(time.Duration(i) * time.Millisecond)
	dur := time.Duration(2000+i%5000) * time.Microsecond
	span.SetName(semconv.SpanNamePrefix + "exec")
	span.SetKind(ptrace.SpanKindInternal)
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[:8], g.rand.Uint64())
	binary.BigEndian.PutUint64(tid[8:], g.rand.Uint64())
	span.SetTraceID(tid)
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], uint64(i)+1<<40)
	span.SetSpanID(sid)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(dur)))
	s.seq += 2
	a := span.Attributes()
	a.EnsureCapacity(8)
	a.PutStr(semconv.AttrOperation, "exec")
	a.PutStr(semconv.AttrSessionID, s.id)
	a.PutInt(semconv.AttrStartSeq, s.seq-1)
	a.PutStr(semconv.AttrStartData, lightStart)
	a.PutInt(semconv.AttrFinishSeq, s.seq)
	a.PutBool(semconv.AttrOK, true)
	a.PutDouble(semconv.AttrDurationMS, float64(dur)/float64(time.Millisecond))
	a.PutStr(semconv.AttrFinishData, lightFinish)
	return nil
}
