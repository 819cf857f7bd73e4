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

// Every generated span maps to a start and a finish event, and every
// event id in a run is unique.
func TestRequestsMapToUniqueEvents(t *testing.T) {
	reqs, err := Requests(Shape{Spans: 250, PerRequest: 100, Sessions: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
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
			t.Fatalf("mapping stats %+v, %d events", st, len(events))
		}
		for _, ev := range events {
			if seen[ev.EventID] {
				t.Fatalf("duplicate event id %s", ev.EventID)
			}
			seen[ev.EventID] = true
		}
	}
	if len(seen) != 500 {
		t.Fatalf("%d events, want 500", len(seen))
	}
}
