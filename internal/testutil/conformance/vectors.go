// Package conformance loads the conformance vectors computed by the Python
// reference (the in-repository copy testdata/conformance/events.jsonl, plus
// any files named in SANDBOXAUDIT_VECTORS) for tests in every package.
package conformance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// EnvVar names extra vector files: colon-separated absolute paths.
const EnvVar = "SANDBOXAUDIT_VECTORS"

// Vector is one line of a vector file; which keys are set depends on Kind.
type Vector struct {
	Name       string                               `json:"name"`
	Kind       string                               `json:"kind"`
	Input      string                               `json:"input"`
	Expect     json.RawMessage                      `json:"expect"`
	Error      string                               `json:"error"`
	Loc        []any                                `json:"loc"`
	StdoutB64  *string                              `json:"stdout_b64"`
	StderrB64  *string                              `json:"stderr_b64"`
	Policy     *auditevent.PolicyOverride           `json:"policy"`
	PolicyByOp map[string]auditevent.PolicyOverride `json:"policy_by_op"`
	SinkPolicy *auditevent.PolicyOverride           `json:"sink_policy"`
	BytesB64   string                               `json:"bytes_b64"`
	MaxChars   int                                  `json:"max_chars"`

	// Source is the file and line the vector came from, for messages.
	Source string `json:"-"`
}

// ExpectString returns the expect value as a string (encode, policy and
// safe_decode vectors hold a JSON string there).
func (v Vector) ExpectString() (string, error) {
	var s string
	if err := json.Unmarshal(v.Expect, &s); err != nil {
		return "", fmt.Errorf("%s: expect is not a string: %w", v.Source, err)
	}
	return s, nil
}

// LocField returns the last element of loc, the field name, or "".
func (v Vector) LocField() string {
	if len(v.Loc) == 0 {
		return ""
	}
	s, _ := v.Loc[len(v.Loc)-1].(string)
	return s
}

// RepoPath is the in-repository copy of the public vectors
// (testdata/conformance/events.jsonl), found by walking up from the working
// directory to the module root, so that a clone with nothing beside it tests.
func RepoPath() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "conformance", "events.jsonl"), nil
}

// SharedPath is where the published vectors sit in a checkout that has the
// project's shared folder beside it (../shared/conformance/events.jsonl).
// Only the drift check reads it; it may not exist.
func SharedPath() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(root), "shared", "conformance", "events.jsonl"), nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Files returns the in-repository vector file followed by the files listed
// in SANDBOXAUDIT_VECTORS.
func Files() ([]string, error) {
	repo, err := RepoPath()
	if err != nil {
		return nil, err
	}
	files := []string{repo}
	for _, p := range strings.Split(os.Getenv(EnvVar), ":") {
		if p = strings.TrimSpace(p); p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// LoadAll loads every vector of every file from Files. A missing file is an
// error: the vectors are the contract, not an optional extra.
func LoadAll() ([]Vector, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	var all []Vector
	for _, f := range files {
		vs, err := Load(f)
		if err != nil {
			return nil, err
		}
		all = append(all, vs...)
	}
	return all, nil
}

// Load reads one vector file.
func Load(path string) ([]Vector, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open conformance vectors: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	var out []Vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v Vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("conformance vectors %s:%d: %w", path, line, err)
		}
		v.Source = fmt.Sprintf("%s:%d (%s)", path, line, v.Name)
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read conformance vectors %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no conformance vectors", path)
	}
	return out, nil
}
