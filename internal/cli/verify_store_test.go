package cli

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// verify --key of a rotated trail checks the hash store against the newest
// checkpoint: one that is garbage, another log's, cut, missing or a
// symbolic link is a warning naming it (the lines and checkpoints, the
// evidence, are intact), and with --strict a problem. --alone, --checkpoint
// after retention and the collector's next start need the store.
func TestVerifyTrailChecksTheHashStore(t *testing.T) {
	cases := map[string]struct {
		spoil func(t *testing.T, store, other string)
		want  string
	}{
		"random bytes": {func(t *testing.T, store, _ string) {
			fi, err := os.Stat(store)
			require.NoError(t, err)
			b := make([]byte, fi.Size())
			_, _ = rand.Read(b)
			require.NoError(t, os.WriteFile(store, b, 0o600))
		}, "the hash store is damaged (the hash it holds over lines 1-2 of the log is not the one their own hashes give"},
		"another log's": {func(t *testing.T, store, other string) {
			require.NoError(t, os.WriteFile(store, wellFormedStore(t, 120), 0o600))
		}, "the hash store is damaged (its first 120 lines do not have the root hash of the newest checkpoint"},
		"cut": {func(t *testing.T, store, _ string) {
			require.NoError(t, os.Truncate(store, 32*100))
		}, "the hash store is damaged (it holds the hashes of 51 lines, fewer than the 120 of the newest checkpoint"},
		"missing": {func(t *testing.T, store, _ string) {
			require.NoError(t, os.Remove(store))
		}, "the hash store is not used (there is no hash store)"},
		"a symbolic link": {func(t *testing.T, store, other string) {
			require.NoError(t, os.Remove(store))
			require.NoError(t, os.Symlink(other, store))
		}, "the hash store is not used (" + "STORE is a symbolic link, and an audit file's sidecars are never followed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path, _, pub, _ := rotatedFixture(t, 30)
			other := filepath.Join(t.TempDir(), "other.tlog")
			require.NoError(t, os.WriteFile(other, wellFormedStore(t, 120), 0o600))
			store := integrity.StorePath(path)

			res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
			require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
			require.NotContains(t, res.stdout, "hash store")

			tc.spoil(t, store, other)
			want := store + ": integrity: warning: " + strings.ReplaceAll(tc.want, "STORE", store)
			res = run(t, "", "verify", "--key", pub, filepath.Dir(path))
			require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, want)
			require.Contains(t, res.stdout, "log rebuild-store")

			res = run(t, "", "verify", "--key", pub, "--strict", filepath.Dir(path))
			require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, store+": integrity: "+strings.ReplaceAll(tc.want, "STORE", store))
			require.Contains(t, res.stdout, "(--strict)\n")
			require.Contains(t, res.stdout, "problems=1 ")
		})
	}
}

// wellFormedStore is the hash store of a log of n lines other than any
// fixture's: every hash in it is the one its lines give.
func wellFormedStore(t *testing.T, n int64) []byte {
	t.Helper()
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("not this log's line %d\n", i)
	}
	return storeOf(t, lines)
}

// The flags of the integrity checks are refused without --key, as --alone
// and --checkpoint are: the plain checks' OK would read as if those checks
// had passed.
func TestVerifyIntegrityFlagsNeedKey(t *testing.T) {
	path, _, _ := sealedFixture(t)
	require.Equal(t, exitOK, run(t, "", "verify", path).code)
	for _, flags := range [][]string{{"--strict"}, {"--allow-unsealed", "100"}, {"--allow-unsealed", "30s"}, {"--allow-renamed"}} {
		res := run(t, "", append(append([]string{"verify"}, flags...), path)...)
		require.Equal(t, exitUsage, res.code, "%v: %s", flags, res.stdout)
		require.Contains(t, res.stderr, "need --key", flags)
		require.NotContains(t, res.stdout, "OK")
	}
}

// A duration of 0 or below is named as such, not as something that is
// neither a count nor a duration.
func TestVerifyAllowUnsealedZeroDuration(t *testing.T) {
	path, _, pub := sealedFixture(t)
	for _, v := range []string{"0s", "-5s"} {
		res := run(t, "", "verify", "--key", pub, "--allow-unsealed", v, path)
		require.Equal(t, exitUsage, res.code)
		require.Contains(t, res.stderr, "a duration must be above 0", v)
	}
	res := run(t, "", "verify", "--key", pub, "--allow-unsealed", "-1", path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "is neither a line count")
}

// verify --key of a single file judges its hash store as it does a
// trail's, against the newest checkpoint: a damage no consistency proof
// between its checkpoints reads (a line's own hash, a cut store) is
// reported too, since prove reads those hashes.
func TestVerifyFileChecksTheHashStoreAsATrail(t *testing.T) {
	cases := map[string]struct {
		spoil func(t *testing.T, store string)
		want  string
	}{
		"the first line's hash changed": {func(t *testing.T, store string) {
			b, err := os.ReadFile(store)
			require.NoError(t, err)
			b[0] ^= 0x5a
			require.NoError(t, os.WriteFile(store, b, 0o600))
		}, "the hash store is damaged (the hash it holds over lines 1-2 of the log is not the one their own hashes give"},
		"cut": {func(t *testing.T, store string) {
			require.NoError(t, os.Truncate(store, 32*10))
		}, "the hash store is damaged (it holds the hashes of 6 lines, fewer than the 8 of the newest checkpoint"},
		"another log's": {func(t *testing.T, store string) {
			require.NoError(t, os.WriteFile(store, wellFormedStore(t, 8), 0o600))
		}, "the hash store is damaged (its first 8 lines do not have the root hash of the newest checkpoint"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path, _, pub := sealedFixture(t)
			store := integrity.StorePath(path)
			res := run(t, "", "verify", "--key", pub, path)
			require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
			require.NotContains(t, res.stdout, "hash store")

			tc.spoil(t, store)
			res = run(t, "", "verify", "--key", pub, path)
			require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, store+": integrity: warning: "+tc.want)
			require.Contains(t, res.stdout, "; the lines are intact.")

			res = run(t, "", "verify", "--key", pub, "--strict", path)
			require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, "problems=1 ")
		})
	}
}
