package immutable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSetRefusesRemovalUntilUndone: an immutable file stays through a
// removal, and goes once undone.
func TestSetRefusesRemovalUntilUndone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	undo, ok := Set(t, file)
	if !ok {
		t.Skip("this process may not make a file immutable")
	}
	require.Error(t, os.Remove(file))
	undo()
	undo() // once
	require.NoError(t, os.Remove(file))
}
