package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --out naming a file, or a path through one, is a bad flag value: exit 2.
func TestKeygenOutAFileIsAUsageError(t *testing.T) {
	file := writeFile(t, "not-a-dir", "x")
	for _, out := range []string{file, filepath.Join(file, "keys")} {
		res := run(t, "", "keygen", "--name", "ci", "--out", out)
		require.Equal(t, exitUsage, res.code, out)
		require.Contains(t, res.stderr, "keygen: --out: "+file+" exists and is not a directory")
	}
}

// Others who can write to --out (without the sticky bit) can swap the key:
// keygen writes it and warns, naming the directory and its mode.
func TestKeygenWarnsOfAWorldWritableOut(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	res := run(t, "", "keygen", "--name", "ci", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "keygen: WARN --out "+dir+" is writable by everyone (mode 0777, no sticky bit)")
	_, err := os.Stat(filepath.Join(dir, "ci.key"))
	require.NoError(t, err, "the key is still written")

	sticky := t.TempDir()
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	res = run(t, "", "keygen", "--name", "ci", "--out", sticky)
	require.Equal(t, 0, res.code, res.stderr)
	require.Empty(t, res.stderr, "with the sticky bit, only the owner renames or removes the key")
}

// Members of --out's group can swap the key as everyone can, and so can
// whoever may write to a directory above --out without its sticky bit: they
// rename --out, or a directory on its path, and put their own in its
// place. keygen warns, naming each such directory and its mode.
func TestKeygenWarnsOfADirectoryOthersCanWriteToOnItsPath(t *testing.T) {
	cases := map[string]struct {
		modes func(parent, out string) // set before keygen
		want  func(parent, out string) []string
	}{
		"group-writable out": {
			modes: func(_, out string) { mkdirMode(t, out, 0o770) },
			want: func(_, out string) []string {
				return []string{"keygen: WARN --out " + out + " is writable by its group (mode 0770, no sticky bit): another user can swap the keys written there"}
			},
		},
		"world-writable parent": {
			modes: func(parent, _ string) { chmod(t, parent, 0o777) },
			want: func(parent, out string) []string {
				return []string{"keygen: WARN --out " + out + " is inside " + parent + ", which is writable by everyone (mode 0777, no sticky bit): another user can rename"}
			},
		},
		"group-writable grandparent": {
			modes: func(parent, _ string) { chmod(t, filepath.Dir(parent), 0o775) },
			want: func(parent, out string) []string {
				return []string{"keygen: WARN --out " + out + " is inside " + filepath.Dir(parent) + ", which is writable by its group (mode 0775, no sticky bit)"}
			},
		},
		"both": {
			modes: func(parent, out string) { chmod(t, parent, 0o770); mkdirMode(t, out, 0o777) },
			want: func(parent, out string) []string {
				return []string{
					"keygen: WARN --out " + out + " is writable by everyone (mode 0777, no sticky bit)",
					"keygen: WARN --out " + out + " is inside " + parent + ", which is writable by its group (mode 0770, no sticky bit)",
				}
			},
		},
		"sticky parent": {
			modes: func(parent, _ string) { chmod(t, parent, 0o777|os.ModeSticky) },
		},
		"only the owner writes": {
			modes: func(parent, out string) { chmod(t, parent, 0o755); mkdirMode(t, out, 0o755) },
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "p")
			require.NoError(t, os.Mkdir(parent, 0o700))
			out := filepath.Join(parent, "keys")
			c.modes(parent, out)
			res := run(t, "", "keygen", "--name", "ci", "--out", out)
			require.Equal(t, 0, res.code, res.stderr)
			_, err := os.Stat(filepath.Join(out, "ci.key"))
			require.NoError(t, err, "the key is still written")
			if c.want == nil {
				require.Empty(t, res.stderr)
				return
			}
			want := c.want(parent, out)
			require.Len(t, strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n"), len(want), res.stderr)
			for _, w := range want {
				require.Contains(t, res.stderr, w)
			}
		})
	}
}

// An --out that is a symlink is checked along the path it resolves to too:
// whoever can write to a directory there can swap the keys as well.
func TestKeygenWarnsOfAWritableDirectoryAboveASymlinkedOut(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "shared")
	require.NoError(t, os.Mkdir(elsewhere, 0o700))
	chmod(t, elsewhere, 0o777)
	target := filepath.Join(elsewhere, "keys")
	require.NoError(t, os.Mkdir(target, 0o700))
	out := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.Symlink(target, out))

	res := run(t, "", "keygen", "--name", "ci", "--out", out)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "keygen: WARN --out "+out+" is inside "+elsewhere+", which is writable by everyone (mode 0777, no sticky bit): "+
		"another user can rename what is in it and put keys of their own in the place of these; move them to a directory only you can write to\n", res.stderr)
}

// A relative --out is checked along its absolute path, and named as given.
func TestKeygenWarnsOfAWritableParentOfARelativeOut(t *testing.T) {
	parent := t.TempDir()
	chmod(t, parent, 0o777)
	t.Chdir(parent)
	res := run(t, "", "keygen", "--name", "ci", "--out", "keys")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "keygen: WARN --out keys is inside "+parent+", which is writable by everyone (mode 0777, no sticky bit)")
}

func chmod(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.Chmod(dir, mode))
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.Mkdir(dir, 0o700))
	chmod(t, dir, mode)
}
