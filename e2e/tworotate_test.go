package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// TestTwoCollectorsRotatingOneTemplatedPath: two collectors write one
// templated path, each rotating every second and compressing, with the
// same signing key. One of them seals a session's file (its owner lock),
// the other only writes to it, and rotates it too. The sealing collector
// seals the other's rotations as rotations of the log, logs no ERROR
// about a file moved away, and every line is sealed: verify --key passes
// on the trail, and on each segment alone.
func TestTwoCollectorsRotatingOneTemplatedPath(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	auditDir := filepath.Join(dir, "audit")
	addrs := freeAddrs(t, 2)
	var cols []*collector
	for i, addr := range addrs {
		cfg := collectorYAML{sandboxAddr: addr, exporter: fmt.Sprintf("file:\n  path: %s\n  rotation:\n    interval: 1s\n    compression: zstd\n"+
			"  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms",
			filepath.Join(auditDir, "{session_id}.jsonl"), keyPath)}.String()
		cols = append(cols, startCollector(t, fmt.Sprint("collector", i), filepath.Join(dir, fmt.Sprint(i)), cfg, addr))
	}
	session := uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	lines := pairLines(session, 40)
	// Both write the session's file over several rotations of each.
	for i, l := range lines {
		postLines(t, addrs[i%2], []string{l})
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range cols {
		c.stop(t)
	}

	path := filepath.Join(auditDir, session.String()+".jsonl")
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2, "rotated")
	rotatedByOther := false
	for _, c := range cols {
		log := string(mustRead(t, c.log))
		require.NotContains(t, log, "moved away, removed or replaced", c.name)
		rotatedByOther = rotatedByOther || strings.Contains(log, "another writer of the path")
	}
	require.True(t, rotatedByOther, "the sealing collector saw the other's rotations")
	code, out := runCLI(t, "verify", "--key", pubPath, path)
	require.Equal(t, 0, code, "verify:\n%s", indent(out))
	require.Contains(t, out, fmt.Sprintf("lines=%d sealed=%d unsealed=0", len(lines), len(lines)), "every line is sealed")
	for _, s := range segs {
		code, out := runCLI(t, "verify", "--key", pubPath, "--alone", s.Path)
		require.Equal(t, 0, code, "verify --alone %s:\n%s", s.Path, indent(out))
	}
}
