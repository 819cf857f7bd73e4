package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func measure(name string, f func() error) {
	var d []time.Duration
	for i := 0; i < 3000; i++ {
		t := time.Now()
		if err := f(); err != nil {
			fmt.Println(name, err)
			return
		}
		d = append(d, time.Since(t))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	fmt.Printf("%-20s p50 %v p90 %v\n", name, d[len(d)/2], d[len(d)*9/10])
}

func main() {
	addr0 := "127.0.0.1:0"
	if a := os.Getenv("RTT_SERVE"); a != "" {
		addr0 = a
	}
	ln, _ := net.Listen("tcp", addr0)
	if os.Getenv("RTT_SERVE") != "" {
		http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 4096)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(200)
	}))
	ctx := context.Background()
	var rec log.Record
	rec.SetBody(attribute.StringValue(`{"version":1,"event_id":"1b4e28ba-2fa1-41d2-883f-0016d3cca427","ts":"2026-01-01T00:00:00.000000Z","session_id":"1b4e28ba-2fa1-41d2-883f-0016d3cca427","seq":1,"op":"exec","phase":"start","span_id":"0123456789abcdef","trace_id":"0123456789abcdef0123456789abcdef","data":{"command":["true"]}}`))
	rec.AddAttributes(attribute.String("sandbox.session.id", "x"), attribute.String("sandbox.operation", "exec"))
	for _, addr := range append([]string{ln.Addr().String()}, os.Args[1:]...) {
		exp, _ := otlploghttp.New(ctx, otlploghttp.WithEndpoint(addr), otlploghttp.WithInsecure())
		var got []sdklog.Record
		p := &capt{out: &got}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
		lp.Logger("x").Emit(ctx, rec)
		measure("otlploghttp "+addr, func() error { return exp.Export(ctx, got) })
		c := &http.Client{}
		measure("plain post "+addr, func() error {
			resp, err := c.Post("http://"+addr+"/v1/nothing", "application/x-protobuf", nil)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		})
		for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliverySync, sandboxtrace.DeliverySyncFinish} {
			exp2, _ := otlploghttp.New(ctx, otlploghttp.WithEndpoint(addr), otlploghttp.WithInsecure())
			s, err := sandboxtrace.NewSession(ctx, sdktrace.NewTracerProvider(), sandboxtrace.WithLogExporter(exp2), sandboxtrace.WithDelivery(d))
			if err != nil {
				panic(err)
			}
			measure("session "+d.String()+" "+addr, func() error {
				return s.Do(ctx, "read", nil, func(context.Context, *sandboxtrace.Op) error { return nil })
			})
		}
	}
}

type capt struct{ out *[]sdklog.Record }

func (c *capt) OnEmit(ctx context.Context, r *sdklog.Record) error { *c.out = append(*c.out, r.Clone()); return nil }
func (c *capt) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *capt) Shutdown(context.Context) error                          { return nil }
func (c *capt) ForceFlush(context.Context) error                        { return nil }
