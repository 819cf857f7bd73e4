package load

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// The generated span must carry the attributes a real sandboxtrace exec
// span carries, no more and no fewer, or the benchmark measures another
// workload.
func TestExecSpanHasSandboxtraceAttributes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx := context.Background()
	s, err := sandboxtrace.NewSession(ctx, tp, sandboxtrace.WithBackend("docker"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"python", "-V"}, Timeout: sandboxtrace.Timeout(30 * time.Second)},
		func(context.Context) (sandboxtrace.ExecResult, error) { return sandboxtrace.ExecResult{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, sp := range exp.GetSpans() {
		if sp.Name == "sandbox.exec" {
			for _, kv := range sp.Attributes {
				want = append(want, string(kv.Key))
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("sandboxtrace recorded no exec span")
	}

	td, err := newGenerator(1).traces(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().All() {
		got = append(got, k)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("generated attributes %v, sandboxtrace records %v", got, want)
	}
}

// Every generated span of either shape maps to a start and a finish event,
// and every event id in a run is unique.
func TestRequestsMapToUniqueEvents(t *testing.T) {
	for _, light := range []bool{false, true} {
		reqs, err := Requests(Shape{Spans: 250, PerRequest: 100, Sessions: 7, Light: light})
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 3 {
			t.Fatalf("light %v: %d requests, want 3", light, len(reqs))
		}
		m := spanmap.NewMapper(0)
		seen := map[uuid.UUID]bool{}
		for _, b := range reqs {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Fatal(err)
			}
			events, st := m.AppendTraces(nil, req.Traces())
			if st.Invalid+st.NotSandbox != 0 || len(events) != 2*st.Spans {
				t.Fatalf("light %v: mapping stats %+v, %d events", light, st, len(events))
			}
			for _, ev := range events {
				if seen[ev.EventID] {
					t.Fatalf("light %v: duplicate event id %s", light, ev.EventID)
				}
				seen[ev.EventID] = true
			}
		}
		if len(seen) != 500 {
			t.Fatalf("light %v: %d events, want 500", light, len(seen))
		}
	}
}

// A light span has no parent, no event ids and no GenAI attributes, runs
// "ls", and has a trace of its own.
func TestLightSpans(t *testing.T) {
	g := newGenerator(3)
	g.light = true
	td, err := g.traces(0, 50)
	if err != nil {
		t.Fatal(err)
	}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	traces := map[string]bool{}
	for i := range spans.Len() {
		sp := spans.At(i)
		if !sp.ParentSpanID().IsEmpty() {
			t.Fatalf("span %d has a parent", i)
		}
		traces[sp.TraceID().String()] = true
		a := sp.Attributes()
		for _, k := range []string{"sandbox.event.start_id", "sandbox.event.finish_id", "gen_ai.tool.name", "sandbox.backend"} {
			if _, ok := a.Get(k); ok {
				t.Fatalf("span %d carries %s", i, k)
			}
		}
		if v, _ := a.Get("sandbox.start_data"); v.Str() != `{"command":["ls"],"shell":false,"timeout_s":null,"user":null}` {
			t.Fatalf("span %d start data %s", i, v.Str())
		}
	}
	if len(traces) != 50 {
		t.Fatalf("%d distinct traces over 50 spans, want 50", len(traces))
	}
}
