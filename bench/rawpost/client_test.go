package rawpost

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestPostToBare(t *testing.T) {
	b, err := StartBare()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	c, err := Dial(b.URL, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	for _, body := range []string{"", "{}", strings.Repeat("x", 70000)} {
		if err := c.Post([]byte(body)); err != nil { // one connection, kept alive
			t.Fatalf("%d bytes: %v", len(body), err)
		}
	}
}

// TestPostSendsBodyAndWantsOK: the server sees the path, type and body, and
// an answer other than 200 is an error naming the status.
func TestPostSendsBodyAndWantsOK(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		if string(b) == "refuse" {
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c, err := Dial(srv.URL+"/v1/logs", "application/x-protobuf")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if err := c.Post([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	err = c.Post([]byte("refuse"))
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("want a 503 error, got %v", err)
	}
	want := []string{"POST /v1/logs application/x-protobuf hello", "POST /v1/logs application/x-protobuf refuse"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("server saw %q, want %q", got, want)
	}
}

// TestPostReportsACutAnswer: a 200 whose body the server cuts short is an
// error, not a round trip counted as done (the connection is unusable).
func TestPostReportsACutAnswer(t *testing.T) {
	url, stop, err := StartCutAnswer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := Dial(url, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if err := c.Post([]byte("{}")); err == nil || !strings.Contains(err.Error(), "answer") {
		t.Fatalf("Post of a cut answer = %v, want an error about the answer", err)
	}
}
