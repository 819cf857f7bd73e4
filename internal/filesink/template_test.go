package filesink

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRejectsBadTemplates(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{"", "must be set"},
		{dir + "/{session}.jsonl", `unknown placeholder "{session}" in "` + dir + `/{session}.jsonl" (known: {session_id}, {session_id_hex})`},
		{dir + "/{SESSION_ID}.jsonl", "unknown placeholder"},
		{dir + "/{session_id.jsonl", "unmatched '{'"},
		{dir + "/session_id}.jsonl", "unmatched '}'"},
		{dir + "/{}.jsonl", `unknown placeholder "{}"`},
		{dir + "/{session_id}/", "names a directory"},
		{dir + "/{session_id}/../x.jsonl", `element ".."`},
		{dir + "/{session_id}/./x.jsonl", `element "."`},
		{dir + "/{session_id}//x.jsonl", `element ""`},
		{dir + "/a\x00b.jsonl", "NUL"},
		{dir + "/events.jsonl\n", "control character 0x0a"},
		{dir + "/x/.", "names a directory"},
		{dir + "/{session_id}/..", "names a directory"},
	} {
		_, err := New(Options{Path: tc.path})
		require.Error(t, err, tc.path)
		require.Contains(t, err.Error(), tc.want, tc.path)
		// ValidatePath refuses exactly what New refuses, naming no key.
		verr := ValidatePath(tc.path)
		require.Error(t, verr, tc.path)
		require.Contains(t, verr.Error(), tc.want, tc.path)
		require.NotContains(t, verr.Error(), "filesink", tc.path)
		require.False(t, strings.HasPrefix(verr.Error(), "path"), verr.Error())
	}
}

func TestNewAcceptsTemplates(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{
		dir + "/audit.jsonl",
		dir + "/{session_id}.jsonl",
		dir + "/{session_id_hex}/events.jsonl",
		dir + "/x/{session_id_hex}/{session_id}-audit.jsonl",
		"relative/{session_id}.jsonl",
	} {
		require.NoError(t, ValidatePath(p), p)
		s, err := New(Options{Path: p})
		require.NoError(t, err, p)
		require.NoError(t, s.Close())
	}
}

func TestPathForExpandsPlaceholders(t *testing.T) {
	dir := t.TempDir()
	const id = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
	s, err := New(Options{Path: dir + "/by-session/{session_id_hex}/{session_id}.jsonl"})
	require.NoError(t, err)
	got, err := s.PathFor(id)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "by-session", "0f1e2d3c4b5a49788695a4b3c2d1e0f9", id+".jsonl"), got)

	static, err := New(Options{Path: dir + "/all.jsonl"})
	require.NoError(t, err)
	got, err = static.PathFor("anything/at/all")
	require.NoError(t, err, "a template without placeholders ignores the session id")
	require.Equal(t, filepath.Join(dir, "all.jsonl"), got)
}

func TestPathForRejectsEscapes(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: dir + "/{session_id}.jsonl"})
	require.NoError(t, err)
	double, err := New(Options{Path: dir + "/{session_id}{session_id}/x.jsonl"})
	require.NoError(t, err)
	for _, id := range []string{
		"../../etc/x", "..", ".", "", "a/b", `a\b`, "a\x00b", "a\nb", "/etc/passwd",
		strings.Repeat("a", 129),
	} {
		p, err := s.PathFor(id)
		require.Error(t, err, "id %q gave %q", id, p)
	}
	// "." + "." would spell ".." once both placeholders are filled.
	_, err = double.PathFor(".")
	require.Error(t, err)
	p, err := double.PathFor("ab")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "abab", "x.jsonl"), p)
}

func TestFsyncModeValidate(t *testing.T) {
	for _, m := range []FsyncMode{"", FsyncNever, FsyncBatch, FsyncAlways} {
		require.NoError(t, m.Validate(), m)
	}
	for _, m := range []FsyncMode{"Always", "sometimes", "none"} {
		require.Error(t, m.Validate(), m)
		_, err := New(Options{Path: t.TempDir() + "/x.jsonl", Fsync: m})
		require.Error(t, err, m)
	}
	_, err := New(Options{Path: t.TempDir() + "/x.jsonl", MaxOpenFiles: -1})
	require.Error(t, err)
}

// TestValidatePathRefusesWhatEveryWriteWouldRefuse: a fixed path that is a
// symlink, a FIFO or a spool used to pass at start, after which every
// batch failed while the collector said it was ready.
func TestValidatePathRefusesWhatEveryWriteWouldRefuse(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	link, fifo, spoolFile := filepath.Join(dir, "link.jsonl"), filepath.Join(dir, "fifo.jsonl"), filepath.Join(dir, "spool.jsonl")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.NoError(t, os.WriteFile(spoolFile, nil, 0o600))
	require.NoError(t, os.WriteFile(spoolFile+".offset", []byte("{}"), 0o600))
	require.NoError(t, os.WriteFile(spoolFile+".lock", nil, 0o600))
	// Another tool's .offset alone (a log shipper's) is not a spool.
	shipped := filepath.Join(dir, "shipped.jsonl")
	require.NoError(t, os.WriteFile(shipped, nil, 0o600))
	require.NoError(t, os.WriteFile(shipped+".offset", []byte("1\n2\n"), 0o600))
	require.NoError(t, ValidatePath(shipped))

	require.ErrorIs(t, ValidatePath(link), ErrSymlink)
	require.ErrorContains(t, ValidatePath(fifo), "is not a regular file (p")
	require.ErrorIs(t, ValidatePath(spoolFile), ErrSpoolFile)
	require.NoError(t, ValidatePath(target))
	require.NoError(t, ValidatePath(filepath.Join(dir, "new.jsonl")))
}

// Matcher names the files a path gives and nothing else below its base:
// integrity seals only those at start.
func TestMatcher(t *testing.T) {
	dir := t.TempDir()
	const id = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	matches := func(path string) func(string) bool {
		m, err := Matcher(path)
		require.NoError(t, err)
		return m
	}
	tmpl := matches(filepath.Join(dir, "audit", "{session_id}", "events.jsonl"))
	for file, want := range map[string]bool{
		filepath.Join(dir, "audit", id, "events.jsonl"):                  true,
		filepath.Join(dir, "audit", id, "events.jsonl.1"):                false,
		filepath.Join(dir, "audit", "x", "notes.txt"):                    false,
		filepath.Join(dir, "audit", "x", "events.jsonl"):                 false,
		filepath.Join(dir, "audit", strings.ToUpper(id), "events.jsonl"): false,
		filepath.Join(dir, "audit", id, "y", "events.jsonl"):             false,
		filepath.Join(dir, "other", id, "events.jsonl"):                  false,
	} {
		assert.Equal(t, want, tmpl(file), file)
	}
	hexTmpl := matches(filepath.Join(dir, "s-{session_id_hex}.jsonl"))
	for file, want := range map[string]bool{
		filepath.Join(dir, "s-"+strings.ReplaceAll(id, "-", "")+".jsonl"): true,
		filepath.Join(dir, "s-"+id+".jsonl"):                              false,
		filepath.Join(dir, "s-.jsonl"):                                    false,
	} {
		assert.Equal(t, want, hexTmpl(file), file)
	}
	plainPath := filepath.Join(dir, "events.jsonl")
	plain := matches(plainPath)
	for file, want := range map[string]bool{plainPath: true, plainPath + ".1": false} {
		assert.Equal(t, want, plain(file), file)
	}
}

// TestValidatePathSaysSymlinkOnce: the refusal of a symlinked path is one
// sentence, not the reason followed by ErrSymlink saying it again.
func TestValidatePathSaysSymlinkOnce(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(filepath.Join(dir, "target.jsonl"), link))
	err := ValidatePath(link)
	require.ErrorIs(t, err, ErrSymlink)
	require.Equal(t, 1, strings.Count(err.Error(), "symbolic link"), err.Error())
	require.ErrorContains(t, err, "; name the file itself")
}
