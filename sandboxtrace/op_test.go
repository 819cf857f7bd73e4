package sandboxtrace_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func TestOperationSpanShape(t *testing.T) {
	r := newRecorder(t)
	// Upper case and braces on purpose: the attribute must be canonical.
	id := uuid.MustParse("{6F1C2A8E-3B4D-4E5F-9A0B-1C2D3E4F5A6B}")
	s := r.session(t, sandboxtrace.WithSessionID(id), sandboxtrace.WithBackend("docker"))
	require.Equal(t, id, s.ID())

	_, op, err := s.Start(context.Background(), "read", map[string]any{"path": "/workspace/a.txt", "user": nil})
	require.NoError(t, err)
	require.NoError(t, op.Finish(sandboxtrace.FinishOptions{}))

	span := r.only(t)
	a := attrs(span)
	assert.Equal(t, "sandbox.read", span.Name)
	assert.Equal(t, trace.SpanKindInternal, span.SpanKind)
	assert.Equal(t, "github.com/sandboxaudit/sandboxaudit/sandboxtrace", span.InstrumentationScope.Name)
	assert.Equal(t, "read", a["sandbox.operation"].AsString())
	assert.Equal(t, "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", a["sandbox.session.id"].AsString())
	assert.Equal(t, "docker", a["sandbox.backend"].AsString())
	assert.Equal(t, attribute.INT64, a["sandbox.event.start_seq"].Type())
	assert.Equal(t, int64(1), a["sandbox.event.start_seq"].AsInt64())
	assert.Equal(t, int64(2), a["sandbox.event.finish_seq"].AsInt64())
	assert.Equal(t, `{"path":"/workspace/a.txt","user":null}`, a["sandbox.start_data"].AsString())
	assert.Equal(t, `{"path":"/workspace/a.txt","user":null}`, a["sandbox.finish_data"].AsString(), "finish data defaults to start data")
	assert.Equal(t, attribute.BOOL, a["sandbox.ok"].Type())
	assert.True(t, a["sandbox.ok"].AsBool())
	assert.Equal(t, codes.Unset, span.Status.Code)
	for _, k := range []string{"error.type", "sandbox.error.code", "sandbox.error.message", "sandbox.error.retryable",
		"sandbox.exec.stdout_bytes", "sandbox.exec.stderr_bytes"} {
		assert.NotContains(t, a, k)
	}

	// Event ids: random (version 4) UUIDs, one per event.
	startID, err := uuid.Parse(a["sandbox.event.start_id"].AsString())
	require.NoError(t, err)
	finishID, err := uuid.Parse(a["sandbox.event.finish_id"].AsString())
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(4), startID.Version())
	assert.Equal(t, uuid.Version(4), finishID.Version())
	assert.NotEqual(t, startID, finishID)

	// duration_ms is the measured time between the two events, which are
	// also the span's start and end.
	require.Equal(t, attribute.FLOAT64, a["sandbox.duration_ms"].Type())
	d := a["sandbox.duration_ms"].AsFloat64()
	assert.GreaterOrEqual(t, d, 0.0)
	wall := float64(span.EndTime.Sub(span.StartTime)) / float64(time.Millisecond)
	assert.InDelta(t, wall, d, 1.0)
}

func TestAllOpsAccepted(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	for _, op := range []string{"start", "stop", "exec", "read", "write", "shutdown", "running",
		"persist_workspace", "hydrate_workspace", "resolve_exposed_port", "materialize",
		"snapshot_persist", "snapshot_restore", "apply_patch"} {
		require.NoError(t, s.Do(context.Background(), op, nil, ok), op)
	}
	names := map[string]bool{}
	for _, span := range r.ops() {
		names[span.Name] = true
	}
	assert.Len(t, names, 14)
	assert.True(t, names["sandbox.resolve_exposed_port"])
}

func TestUnknownOpIsAnError(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	for _, op := range []string{"", "Exec", "exec ", "list"} {
		ctx, o, err := s.Start(context.Background(), op, nil)
		require.Error(t, err, op)
		assert.Contains(t, err.Error(), "unknown operation")
		assert.Nil(t, o)
		assert.NotNil(t, ctx)
		called := false
		err = s.Do(context.Background(), op, nil, func(context.Context, *sandboxtrace.Op) error { called = true; return nil })
		require.Error(t, err)
		assert.False(t, called, "fn must not run for an unknown op")
	}
	assert.Empty(t, r.ops())

	// Rejected ops take no seq.
	require.NoError(t, s.Do(context.Background(), "exec", nil, ok))
	assert.Equal(t, int64(1), attrs(r.only(t))["sandbox.event.start_seq"].AsInt64())
}

func TestUnencodableDataIsAnError(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	_, _, err := s.Start(context.Background(), "exec", map[string]any{"ch": make(chan int)})
	require.Error(t, err)

	_, o, err := s.Start(context.Background(), "exec", map[string]any{"a": 1})
	require.NoError(t, err)
	err = o.Finish(sandboxtrace.FinishOptions{Data: map[string]any{"x": 1.0, "bad": make(chan int)}})
	require.Error(t, err)
	span := r.only(t)
	a := attrs(span)
	assert.NotContains(t, a, "sandbox.finish_data", "absent finish data maps to the start data")
	assert.Equal(t, `{"a":1}`, a["sandbox.start_data"].AsString())
}

// Data keys that differ only in bytes that are not UTF-8 (two file names
// of a Latin-1 directory) would be written as one key twice, and the
// collector would keep one of the two entries without a word: the
// operation is refused as for any data that cannot be written, before its
// function runs.
func TestDataKeysThatWriteAlikeAreAnError(t *testing.T) {
	requireDataRefused(t, map[string]any{"files": map[string]any{"caf\xe9.txt": 1, "caf\xe8.txt": 2}}, "U+FFFD")
}

// Bytes in the data are the text they hold, as the reference writes bytes,
// so the collector's redaction sees a credential in them.
func TestBytesInDataAreText(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	require.NoError(t, s.Do(context.Background(), "materialize", map[string]any{"env": []byte("TOKEN=abc")}, ok))
	assert.Equal(t, `{"env":"TOKEN=abc"}`, attrs(r.only(t))["sandbox.start_data"].AsString())
}

// Bytes that are not UTF-8 (a digest) hold no text: the operation is
// refused, as the reference's pydantic refuses them, before it runs.
func TestBytesNotUTF8InDataAreAnError(t *testing.T) {
	requireDataRefused(t, map[string]any{"sha256": []byte{0x9f, 0x86, 0xd0}}, "UTF-8")
}

// requireDataRefused checks that an operation on data is refused with an
// error that says why, before its function runs and without a span.
func requireDataRefused(t *testing.T, data map[string]any, why string) {
	t.Helper()
	r := newRecorder(t)
	s := r.session(t)
	ran := false
	err := s.Do(context.Background(), "materialize", data,
		func(context.Context, *sandboxtrace.Op) error { ran = true; return nil })
	require.ErrorContains(t, err, why)
	assert.False(t, ran)
	assert.Empty(t, r.ops())
}

func TestSeqInterleavesLikePython(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	ctx := context.Background()
	_, a, err := s.Start(ctx, "exec", nil) // seq 1
	require.NoError(t, err)
	_, b, err := s.Start(ctx, "read", nil) // seq 2
	require.NoError(t, err)
	require.NoError(t, a.Finish(sandboxtrace.FinishOptions{})) // seq 3
	_, c, err := s.Start(ctx, "write", nil)                    // seq 4
	require.NoError(t, err)
	require.NoError(t, c.Finish(sandboxtrace.FinishOptions{})) // seq 5
	require.NoError(t, b.Finish(sandboxtrace.FinishOptions{})) // seq 6

	got := map[string][2]int64{}
	for _, span := range r.ops() {
		m := attrs(span)
		got[span.Name] = [2]int64{m["sandbox.event.start_seq"].AsInt64(), m["sandbox.event.finish_seq"].AsInt64()}
	}
	assert.Equal(t, map[string][2]int64{
		"sandbox.exec":  {1, 3},
		"sandbox.read":  {2, 6},
		"sandbox.write": {4, 5},
	}, got)
}

func TestSeqConcurrentOps(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	const workers, perWorker = 16, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				err := s.Do(context.Background(), "exec", map[string]any{"i": i}, func(context.Context, *sandboxtrace.Op) error {
					if i%3 == 0 {
						time.Sleep(50 * time.Microsecond) // widen the window for interleaving
					}
					return nil
				})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()

	spans := r.ops()
	require.Len(t, spans, workers*perWorker)
	seen := map[int64]bool{}
	type ev struct {
		seq int64
		ts  time.Time
	}
	var events []ev
	for _, span := range spans {
		m := attrs(span)
		start, finish := m["sandbox.event.start_seq"].AsInt64(), m["sandbox.event.finish_seq"].AsInt64()
		assert.Greater(t, finish, start)
		for _, seq := range []int64{start, finish} {
			assert.False(t, seen[seq], "duplicate seq %d", seq)
			seen[seq] = true
		}
		events = append(events, ev{start, span.StartTime}, ev{finish, span.EndTime})
	}
	// Every seq from 1 to 2n is used exactly once.
	for seq := int64(1); seq <= 2*workers*perWorker; seq++ {
		assert.True(t, seen[seq], "missing seq %d", seq)
	}
	// Seq order and time order agree.
	sort.Slice(events, func(i, j int) bool { return events[i].seq < events[j].seq })
	for i := 1; i < len(events); i++ {
		assert.False(t, events[i].ts.Before(events[i-1].ts), "seq %d is earlier than seq %d", events[i].seq, events[i-1].seq)
	}
}

func TestSessionsNumberSeparately(t *testing.T) {
	r := newRecorder(t)
	s1, s2 := r.session(t), r.session(t)
	require.NoError(t, s1.Do(context.Background(), "exec", nil, ok))
	require.NoError(t, s2.Do(context.Background(), "exec", nil, ok))
	for _, span := range r.ops() {
		assert.Equal(t, int64(1), attrs(span)["sandbox.event.start_seq"].AsInt64())
	}
	assert.NotEqual(t, s1.ID(), s2.ID())
	assert.NotEqual(t, s1.TraceID(), s2.TraceID())
}

func TestDataKeepsPythonFloatSpelling(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	data := map[string]any{"timeout_s": 30.0, "tiny": 1e-05, "big": 1e16, "n": 3, "neg": math.Copysign(0, -1), "nested": map[string]any{"z": 2.5, "a": []any{1.0, 2}}}
	require.NoError(t, s.Do(context.Background(), "exec", data, ok))
	got := attrs(r.only(t))["sandbox.start_data"].AsString()
	assert.Equal(t, `{"big":1e+16,"n":3,"neg":-0.0,"nested":{"a":[1.0,2],"z":2.5},"timeout_s":30.0,"tiny":1e-05}`, got)
	assert.True(t, json.Valid([]byte(got)))
}

func TestFinishIsIdempotent(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	_, o, err := s.Start(context.Background(), "write", nil)
	require.NoError(t, err)
	require.NoError(t, o.Finish(sandboxtrace.FinishOptions{Data: map[string]any{"first": true}}))
	require.NoError(t, o.Finish(sandboxtrace.FinishOptions{Err: errors.New("second")}))
	span := r.only(t)
	a := attrs(span)
	assert.True(t, a["sandbox.ok"].AsBool())
	assert.Equal(t, `{"first":true}`, a["sandbox.finish_data"].AsString())
	assert.Equal(t, int64(2), a["sandbox.event.finish_seq"].AsInt64())

	// The ignored Finish took no seq.
	require.NoError(t, s.Do(context.Background(), "read", nil, ok))
	for _, sp := range r.ops() {
		if sp.Name == "sandbox.read" {
			assert.Equal(t, int64(3), attrs(sp)["sandbox.event.start_seq"].AsInt64())
		}
	}
}

func TestDoAfterExplicitFinish(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	err := s.Do(context.Background(), "exec", map[string]any{"a": 1}, func(_ context.Context, o *sandboxtrace.Op) error {
		require.NoError(t, o.Finish(sandboxtrace.FinishOptions{Data: map[string]any{"done": "early"}}))
		return errors.New("returned after finishing")
	})
	require.EqualError(t, err, "returned after finishing", "Do still returns fn's error")
	a := attrs(r.only(t))
	assert.True(t, a["sandbox.ok"].AsBool(), "the explicit Finish is the one recorded")
	assert.Equal(t, `{"done":"early"}`, a["sandbox.finish_data"].AsString())
}

func TestDoUsesFinishDataAndOutputSetByFn(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(0))
	err := s.Do(context.Background(), "running", nil, func(_ context.Context, o *sandboxtrace.Op) error {
		o.SetFinishData(map[string]any{"alive": true})
		o.SetOutput([]byte("out"), nil)
		return nil
	})
	require.NoError(t, err)
	a := attrs(r.only(t))
	assert.Equal(t, `{}`, a["sandbox.start_data"].AsString())
	assert.Equal(t, `{"alive":true}`, a["sandbox.finish_data"].AsString())
	assert.Equal(t, "b3V0", a["sandbox.exec.stdout_bytes"].AsString()) // base64("out")
	assert.NotContains(t, a, "sandbox.exec.stderr_bytes")
}

func TestDoRecordsPanic(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	assert.PanicsWithValue(t, "boom", func() {
		_ = s.Do(context.Background(), "exec", nil, func(context.Context, *sandboxtrace.Op) error { panic("boom") })
	})
	span := r.only(t)
	a := attrs(span)
	assert.False(t, a["sandbox.ok"].AsBool())
	assert.Equal(t, "boom", a["sandbox.error.message"].AsString())
	assert.Equal(t, codes.Error, span.Status.Code)
}

func TestNoopProviderAndNil(t *testing.T) {
	_, err := sandboxtrace.NewSession(context.Background(), nil)
	require.Error(t, err)

	s, err := sandboxtrace.NewSession(context.Background(), noop.NewTracerProvider())
	require.NoError(t, err)
	require.NoError(t, s.Do(context.Background(), "exec", map[string]any{"x": 1.5}, ok))
	assert.False(t, s.TraceID().IsValid())
	s.End()
	s.End()
}

func TestFinishDataIsCanonicalForTheCore(t *testing.T) {
	// The span's data text must be what the core parses to the same value, so
	// the mapping can use it as the event's data unchanged.
	r := newRecorder(t)
	s := r.session(t)
	require.NoError(t, s.Do(context.Background(), "write", map[string]any{"path": "é/<x>", "bytes": int64(1) << 60}, ok))
	got := attrs(r.only(t))["sandbox.start_data"].AsString()
	d, err := auditevent.ParseData([]byte(got))
	require.NoError(t, err)
	assert.Equal(t, got, d.String())
	assert.Equal(t, `{"bytes":1152921504606846976,"path":"\u00e9/<x>"}`, got)
}
