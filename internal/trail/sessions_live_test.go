package trail

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionsOfALiveFileReadTwiceSeeTheSameBytes appends to a file
// between ReadSessions' two reads (a repeated line makes it read the file
// again): the second read stops where the first one ended, so the sums
// are those of the bytes the first read saw, and the appended line of a
// new session is not in them.
func TestSessionsOfALiveFileReadTwiceSeeTheSameBytes(t *testing.T) {
	_, content := writeTrail(t, 3, 20)
	first, _, _ := bytes.Cut(content, []byte("\n"))
	seen := append(bytes.Clone(content), first...) // the first line again: a repeat
	seen = append(seen, '\n')
	var ev struct {
		SessionID string `json:"session_id"`
	}
	require.NoError(t, json.Unmarshal(first, &ev))
	later := bytes.Replace(first, []byte(ev.SessionID), []byte("0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f"), 1)
	require.NotEqual(t, first, later)

	dir := t.TempDir()
	want, _, err := ReadSessions(context.Background(), []string{writeFile(t, dir, "copy.jsonl", seen)}, Options{})
	require.NoError(t, err)
	require.Len(t, want, 3)

	p := writeFile(t, dir, "events.jsonl", seen)
	appended := false
	got, st, err := readSessions(context.Background(), []string{p}, Options{}, &sessionSeams{between: func() {
		appended = true
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write(append(later, '\n'))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}})
	require.NoError(t, err)
	require.True(t, appended, "the repeat makes ReadSessions read the file again")
	assert.Equal(t, want, got)
	assert.EqualValues(t, bytes.Count(seen, []byte("\n")), st.Lines)
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}
