package sandboxtrace

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostsAndPathsAsPythonWritesThem checks isLoopback and pythonPath
// against what the reference's own expressions gave on Python 3.11 for
// hand-picked and mutated hosts and paths (testdata/python_parity.py).
func TestHostsAndPathsAsPythonWritesThem(t *testing.T) {
	f, err := os.Open("testdata/python_parity.jsonl")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var hosts, paths int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct {
			Host          *string `json:"host"`
			ServerAddress bool    `json:"server_address"`
			Path          *string `json:"path"`
			StrPath       string  `json:"str_path"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		switch {
		case c.Host != nil:
			hosts++
			assert.Equal(t, c.ServerAddress, isLoopback(*c.Host), "host %q", *c.Host)
		case c.Path != nil:
			paths++
			assert.Equal(t, c.StrPath, pythonPath(*c.Path), "path %q", *c.Path)
		}
	}
	require.NoError(t, sc.Err())
	require.Greater(t, hosts, 600)
	require.Greater(t, paths, 600)
}
