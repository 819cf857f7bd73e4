package webview

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// auditLine is one canonical audit event of session 6f1c2a8e-…, span
// 00f067aa0ba902b7.
func auditLine(seq int, phase, cmd string) string {
	data := `{}`
	if cmd != "" {
		data = fmt.Sprintf(`{"argv":[%q]}`, cmd)
	}
	extra := ""
	if phase == "finish" {
		extra = `"duration_ms":1,"ok":true,`
	}
	return fmt.Sprintf(`{"data":%s,%s"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d%02d","op":"exec","parent_span_id":null,"phase":%q,"seq":%d,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.535897Z","version":1}`+"\n",
		data, extra, seq, phase, seq)
}

// The verdict on a file's seals is about the bytes the view shows: a file
// swapped once the view has read it does not lend its seals to what is
// shown.
func TestServeSealVerdictIsAboutTheBytesShown(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath, err := integrity.GenerateKeyFiles(dir, "swap-test")
	require.NoError(t, err)
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	key, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)

	path := filepath.Join(dir, "audit.jsonl")
	good := auditLine(1, "start", "ls") + auditLine(2, "finish", "")
	require.NoError(t, os.WriteFile(path, []byte(good), 0o600))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background()))

	tampered := strings.Replace(good, `"ls"`, `"rm"`, 1)
	require.NoError(t, os.WriteFile(path, []byte(tampered), 0o600))
	srv, err := newServer(context.Background(), Config{Sources: []string{path}, Key: key}, func() {
		require.NoError(t, os.WriteFile(path, []byte(good), 0o600)) // the sealed bytes back
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	resp, err := http.Get(hs.URL + "/session/6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b/op/0")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Contains(t, string(body), "rm", "the view shows the bytes it read")
	resp, err = http.Get(hs.URL + "/")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NotContains(t, string(body), "through checkpoint")
	require.Contains(t, string(body), "line 1:")
}
