package sandboxtrace_test

import (
	"context"
	"fmt"
	"log"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

func Example() {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()

	s, err := sandboxtrace.NewSession(ctx, tp,
		sandboxtrace.WithSessionID(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")),
		sandboxtrace.WithBackend("docker"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.End()

	_ = s.StartSandbox(ctx, func(ctx context.Context) error {
		return nil // start the sandbox here
	})
	res, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"false"}},
		func(ctx context.Context) (sandboxtrace.ExecResult, error) {
			return sandboxtrace.ExecResult{ExitCode: 1}, nil // run the command here
		})
	fmt.Println("exit code:", res.ExitCode, "error:", err)

	for _, span := range exp.GetSpans() {
		attrs := map[string]string{}
		for _, kv := range span.Attributes {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		fmt.Printf("%s seq=%s,%s ok=%s code=%q\n", span.Name, attrs[semconv.AttrStartSeq],
			attrs[semconv.AttrFinishSeq], attrs[semconv.AttrOK], attrs[semconv.AttrErrorCode])
		fmt.Println("  finish_data", attrs[semconv.AttrFinishData])
	}
	// Output:
	// exit code: 1 error: <nil>
	// sandbox.start seq=1,2 ok=true code=""
	//   finish_data {}
	// sandbox.exec seq=3,4 ok=false code=""
	//   finish_data {"command":["false"],"exit_code":1,"process.exit.code":1,"shell":false,"timeout_s":null,"user":null}
}
