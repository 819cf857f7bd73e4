package trail

import (
	"os"
	"strconv"
	"testing"
)

// TestGenerate writes a large trail for manual runs:
// SANDBOXAUDIT_GEN=path SANDBOXAUDIT_GEN_OPS=500000 go test -run TestGenerate.
func TestGenerate(t *testing.T) {
	path := os.Getenv("SANDBOXAUDIT_GEN")
	if path == "" {
		t.Skip("SANDBOXAUDIT_GEN not set")
	}
	ops, _ := strconv.Atoi(os.Getenv("SANDBOXAUDIT_GEN_OPS"))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := genTrail(f, 100, ops); err != nil {
		t.Fatal(err)
	}
}
