package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// The stand-in does what the sync sink does: per operation a start and
// then a finish event, one valid event per POST, each on a new connection,
// and one duration per operation on stdout.
func TestPythonStandInPostsTwoEventsPerOperation(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("SANDBOXAUDIT_E2E") != "" {
			t.Fatal("python3 is not installed (.ci/run installs it)")
		}
		t.Skip("python3 is not installed: skipping the Python stand-in's test")
	}
	var (
		mu     sync.Mutex
		events []auditevent.Event
		conns  = map[net.Conn]bool{}
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.URL.Path != "/v1/sandbox/events" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		ev, err := auditevent.Decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns[c] = true
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()

	const ops = 3
	r, _, err := runPythonScript(context.Background(), python, "../../sync/proxy_sink.py", srv.URL+"/v1/sandbox/events", ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != ops {
		t.Fatalf("%d durations, want %d", len(r), ops)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2*ops || len(conns) != 2*ops {
		t.Fatalf("%d events over %d connections, want %d over %d", len(events), len(conns), 2*ops, 2*ops)
	}
	for i, ev := range events {
		want := auditevent.PhaseStart
		if i%2 == 1 {
			want = auditevent.PhaseFinish
		}
		if ev.Phase != want || ev.Seq != int64(i+1) || ev.Op != "exec" || ev.SessionID != events[0].SessionID {
			t.Fatalf("event %d: phase %s seq %d op %s session %s", i, ev.Phase, ev.Seq, ev.Op, ev.SessionID)
		}
		if i%2 == 1 && ev.SpanID != events[i-1].SpanID {
			t.Fatalf("event %d: finish span %s, start span %s", i, ev.SpanID, events[i-1].SpanID)
		}
	}
}
