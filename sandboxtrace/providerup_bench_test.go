package sandboxtrace

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// providerUpSession is a session on an SDK provider that is up, as in
// BenchmarkDo, for the cost of the check each best-effort finish makes.
func providerUpSession(b *testing.B) *Session {
	b.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s, err := NewSession(context.Background(), tp)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCheckProviderUp is the check alone; BenchmarkDo is an operation
// with it, so the two give its share of an operation.
func BenchmarkCheckProviderUp(b *testing.B) {
	s := providerUpSession(b)
	for b.Loop() {
		s.checkProviderUp()
	}
}

// BenchmarkCheckProviderUpParallel is the check from many goroutines on
// one provider, as BenchmarkDoParallel makes it.
func BenchmarkCheckProviderUpParallel(b *testing.B) {
	s := providerUpSession(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.checkProviderUp()
		}
	})
}
