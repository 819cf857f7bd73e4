package cli

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplaySaysItCutATornLine: a spool whose last line is torn (a crash
// mid-append) has that line moved aside when replay opens it. The run
// says so and names the file, as the collector's log would: the operator
// who replays by hand has no other log.
func TestReplaySaysItCutATornLine(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)
	appendTo(t, path, `{"data":{},"event_id":"0b9d`)

	r := run(t, "", "replay", path, "--endpoint", srv.URL)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, rc.requests(), 1)
	assert.Equal(t, content, rc.requests()[0].body)
	kept, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	require.Len(t, kept, 1)
	assert.Contains(t, r.stderr, "incomplete last line")
	assert.Contains(t, r.stderr, kept[0])
}

// TestReplaySaysADamagedLineWasNotKept: a damaged line the quarantine file
// cannot take (a symlink planted at its path, never followed) is not sent
// and not kept; the summary must not say it is in the quarantine file.
func TestReplaySaysADamagedLineWasNotKept(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	path, content := spoolFixture(t)
	damageFirstLine(t, path, content)
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	require.NoError(t, os.Symlink(target, path+".quarantine"))

	r := run(t, "", "replay", path, "--endpoint", srv.URL)
	require.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sent 2 lines")
	assert.NotContains(t, r.stderr, "it is in", "the line is in no file")
	assert.Contains(t, r.stderr, "1 damaged line was not a valid audit event and was not sent; it could not be kept")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Empty(t, b, "the link's target is left alone")
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, errors.Join(err, f.Close()))
}
