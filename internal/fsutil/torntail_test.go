package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCutTornTail(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // past LastLineEnd's 64 KiB chunk
	for name, c := range map[string]struct{ whole, torn string }{
		"empty":                  {"", ""},
		"whole lines":            {"{\"a\":1}\n{\"b\":2}\n", ""},
		"torn after lines":       {"{\"a\":1}\n", "{\"b\":"},
		"only a torn line":       {"", "{\"b\":"},
		"long torn line":         {"{\"a\":1}\n", "{\"b\":\"" + long},
		"torn after a long line": {"{\"a\":\"" + long + "\"}\n", "{"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(c.whole+c.torn), 0o600))
			f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
			require.NoError(t, err)
			defer func() { _ = f.Close() }()
			wrote := false
			size, torn, err := CutTornTail(f, path, int64(len(c.whole+c.torn)), func([]byte) error { wrote = true; return nil })
			require.NoError(t, err)
			require.False(t, wrote, "saved aside, not closed in place")
			require.Equal(t, int64(len(c.whole)), size)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, c.whole, string(got))
			kept, err := filepath.Glob(path + TornSuffix + "*")
			require.NoError(t, err)
			if c.torn == "" {
				require.Equal(t, TornTail{}, torn)
				require.Empty(t, kept)
				return
			}
			require.Equal(t, int64(len(c.torn)), torn.Bytes)
			require.NoError(t, torn.NotKept)
			require.Equal(t, []string{torn.KeptIn}, kept)
			saved, err := os.ReadFile(torn.KeptIn)
			require.NoError(t, err)
			require.Equal(t, c.torn, string(saved))
			fi, err := os.Lstat(torn.KeptIn)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode())
			require.Contains(t, torn.String(), filepath.Base(torn.KeptIn))
		})
	}
}

// A torn line that cannot be saved aside (here its side file's name is
// taken by a directory) is closed with a newline where it is.
func TestCutTornTailClosesWhatItCannotSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"a\":1}\n{\"b\""), 0o600))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	side := path + TornSuffix + "1"
	require.NoError(t, os.Mkdir(side, 0o700))
	var closed []byte
	size, torn, err := cutTornTail(f, path, side, 12, func(b []byte) error {
		closed = append(closed, b...)
		_, err := f.Write(b)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, "\n", string(closed))
	require.Equal(t, int64(13), size)
	require.DirExists(t, side, "what was there is left alone")
	require.Equal(t, int64(4), torn.Bytes)
	require.Empty(t, torn.KeptIn)
	require.Error(t, torn.NotKept)
	require.Contains(t, torn.String(), "could not be saved aside")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{\"a\":1}\n{\"b\"\n", string(got))
}

// tornFile writes whole+torn to dir/name and opens it as a writer does.
func tornFile(t *testing.T, dir, name, content string) (string, *os.File) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return path, f
}

// appendTo is the write a caller gives CutTornTail.
func appendTo(f *os.File) func([]byte) error {
	return func(b []byte) error { _, err := f.Write(b); return err }
}

// A directory swapped for a symlink after the file was opened is not
// followed: the side file would land wherever it leads. The line is closed
// with a newline where it is instead.
func TestCutTornTailRefusesSwappedDirectory(t *testing.T) {
	for name, decoy := range map[string]bool{"nothing there": false, "another file there": true} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(root, "s1"), 0o700))
			path, f := tornFile(t, filepath.Join(root, "s1"), "events.jsonl", "{\"a\":1}\n{\"b\"")
			elsewhere := filepath.Join(root, "elsewhere")
			require.NoError(t, os.Mkdir(elsewhere, 0o700))
			if decoy {
				require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "events.jsonl"), nil, 0o600))
			}
			require.NoError(t, os.Rename(filepath.Join(root, "s1"), filepath.Join(root, "moved")))
			require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "s1")))

			size, torn, err := CutTornTail(f, path, 12, appendTo(f))
			require.NoError(t, err)
			require.ErrorIs(t, torn.NotKept, ErrTornDirMoved)
			require.Empty(t, torn.KeptIn)
			require.Equal(t, int64(13), size, "closed with a newline")
			kept, err := filepath.Glob(filepath.Join(elsewhere, "*"+TornSuffix+"*"))
			require.NoError(t, err)
			require.Empty(t, kept, "nothing created through the symlink")
			got, err := os.ReadFile(filepath.Join(root, "moved", "events.jsonl"))
			require.NoError(t, err)
			require.Equal(t, "{\"a\":1}\n{\"b\"\n", string(got))
		})
	}
}

// The side file lands beside the file when its directory is reached
// through a symlink that still leads to it (an operator's symlinked base).
func TestCutTornTailThroughSymlinkedDirectory(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "real"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "base")))
	path, f := tornFile(t, filepath.Join(root, "base"), "events.jsonl", "{\"a\":1}\n{\"b\"")
	size, torn, err := CutTornTail(f, path, 12, appendTo(f))
	require.NoError(t, err)
	require.NoError(t, torn.NotKept)
	require.Equal(t, int64(8), size)
	require.FileExists(t, filepath.Join(root, "real", filepath.Base(torn.KeptIn)))
}

// A symlink already at the side file's name is not followed, whether it
// leads to an existing file or to none (O_CREAT alone would create it).
func TestCutTornTailRefusesPlantedSideSymlink(t *testing.T) {
	for name, exists := range map[string]bool{"to a file": true, "dangling": false} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path, f := tornFile(t, dir, "events.jsonl", "{\"a\":1}\n{\"b\"")
			target := filepath.Join(t.TempDir(), "target")
			if exists {
				require.NoError(t, os.WriteFile(target, []byte("theirs"), 0o600))
			}
			side := path + TornSuffix + "1"
			require.NoError(t, os.Symlink(target, side))

			size, torn, err := cutTornTail(f, path, side, 12, appendTo(f))
			require.NoError(t, err)
			require.Error(t, torn.NotKept)
			require.Equal(t, int64(13), size, "closed with a newline")
			fi, err := os.Lstat(side)
			require.NoError(t, err)
			require.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the symlink is left alone")
			if !exists {
				require.NoFileExists(t, target)
				return
			}
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			require.Equal(t, "theirs", string(got))
		})
	}
}

func TestIsTornKept(t *testing.T) {
	for name, want := range map[string]bool{
		"/a/events.jsonl.torn-1796618487841304661":    true,
		"events-20261207T044129Z-000907.jsonl.torn-1": true,
		"/a/events.jsonl":          false,
		"/a/events.jsonl.torn-":    false,
		"/a/events.jsonl.torn-12x": false,
		"/a/events.torn-1.jsonl":   false,
	} {
		require.Equal(t, want, IsTornKept(name), name)
	}
}

func TestParseTornKept(t *testing.T) {
	file, at, ok := ParseTornKept("/a/events.jsonl.torn-1796618487841304661")
	require.True(t, ok)
	require.Equal(t, "/a/events.jsonl", file)
	require.Equal(t, int64(1796618487841304661), at.UnixNano())
	_, _, ok = ParseTornKept("/a/events.jsonl.torn-99999999999999999999")
	require.False(t, ok, "past int64")
}

func TestIsTornKeptFile(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		content string
		want    bool
	}{
		"events.jsonl.torn-1": {"{\"b\":", true},
		"events.jsonl.torn-2": {strings.Repeat("x", 200<<10), true},
		"events.jsonl.torn-3": {"{\"a\":1}\n", false},
		"events.jsonl.torn-4": {strings.Repeat("x", 100<<10) + "\n", false},
		"events.jsonl":        {"{\"b\":", false},
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(c.content), 0o600))
		got, err := IsTornKeptFile(p)
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}
	link := filepath.Join(dir, "x.jsonl.torn-5")
	require.NoError(t, os.Symlink(filepath.Join(dir, "events.jsonl.torn-1"), link))
	got, err := IsTornKeptFile(link)
	require.Error(t, err, "a symlink is not followed")
	require.False(t, got)
}
