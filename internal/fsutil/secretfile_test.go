package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.key", "secret-value\n", 0o600)
	if b, err := ReadSecretFile(ok, "a test key", 64); err != nil || string(b) != "secret-value\n" {
		t.Fatalf("ReadSecretFile(0600) = %q, %v", b, err)
	}
	open := write("open.key", "secret-value", 0o640)
	if _, err := ReadSecretFile(open, "a test key", 64); err == nil || !strings.Contains(err.Error(), "mode 0640; a test key must be 0600") {
		t.Fatalf("ReadSecretFile(0640) error = %v; want the mode named", err)
	}
	big := write("big.key", strings.Repeat("x", 65), 0o600)
	_, err := ReadSecretFile(big, "a test key", 64)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 bytes: not a test key") {
		t.Fatalf("ReadSecretFile(65 bytes) error = %v; want the limit named", err)
	}
	if strings.Contains(err.Error(), "xxx") || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("error shows the file's content: %v", err)
	}
	if _, err := ReadSecretFile(dir, "a test key", 64); err == nil {
		t.Fatal("ReadSecretFile read a directory")
	}
}
