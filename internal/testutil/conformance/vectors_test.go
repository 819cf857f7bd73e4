package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The in-repository file is always loaded, and SANDBOXAUDIT_VECTORS adds files.
func TestLoadAllAddsEnvFiles(t *testing.T) {
	shared, err := LoadAll()
	if err != nil {
		t.Fatalf("shared vectors: %v", err)
	}
	dir := t.TempDir()
	extra := filepath.Join(dir, "extra.jsonl")
	line := `{"kind":"safe_decode","name":"extra-one","bytes_b64":"YQ==","max_chars":1,"expect":"a"}` + "\n"
	if err := os.WriteFile(extra, []byte(line+"\n"+line), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, extra+": "+extra)
	all, err := LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), len(shared)+4; got != want {
		t.Fatalf("loaded %d vectors, want %d (shared %d + 2 files × 2)", got, want, len(shared))
	}
	last := all[len(all)-1]
	if last.Name != "extra-one" || !strings.HasPrefix(last.Source, extra+":3 ") {
		t.Fatalf("last vector %q from %q", last.Name, last.Source)
	}
}

// A listed file that does not exist fails the load: vectors are the
// contract, never optional.
func TestLoadAllMissingFileFails(t *testing.T) {
	t.Setenv(EnvVar, filepath.Join(t.TempDir(), "nope.jsonl"))
	if _, err := LoadAll(); err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Fatalf("LoadAll with a missing file: %v", err)
	}
}

func TestLoadRejectsBadLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(p, []byte("{not json}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Fatalf("Load of a bad file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(empty); err == nil {
		t.Fatal("Load accepted a file with no vectors")
	}
}

// The in-repository copy must equal the published vectors wherever the
// shared folder sits beside the checkout (the developers' machines and CI),
// so the copy cannot drift. A user's clone has no shared folder: skip.
func TestRepoCopyMatchesShared(t *testing.T) {
	shared, err := SharedPath()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(shared)
	if os.IsNotExist(err) {
		t.Skipf("no %s beside the checkout", shared)
	}
	if err != nil {
		t.Fatal(err)
	}
	repo, err := RepoPath()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(repo)
	if err != nil {
		t.Fatalf("in-repository vectors: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from %s: copy the published vectors again", repo, shared)
	}
}
