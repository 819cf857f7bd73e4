package trail

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenTapsWhatIsRead: with a bound and a tap together, the tap gets
// the bytes read within the bound, and the count says how many.
func TestOpenTapsWhatIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600))
	var tap bytes.Buffer
	var n int64
	rc, err := open(path, nil, nil, &tap, extent{limit: 8, count: &n})
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, "one\ntwo\n", string(got))
	require.Equal(t, "one\ntwo\n", tap.String())
	require.Equal(t, int64(8), n)
}
