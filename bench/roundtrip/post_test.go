package roundtrip

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/bench/rawpost"
)

// TestPostReportsACutAnswer: a 200 whose body the server cuts short is an
// error, not a round trip counted as done.
func TestPostReportsACutAnswer(t *testing.T) {
	url, stop, err := rawpost.StartCutAnswer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	err = post(client, url, "application/json", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "answer") {
		t.Fatalf("post of a cut answer = %v, want an error about the answer", err)
	}
}
