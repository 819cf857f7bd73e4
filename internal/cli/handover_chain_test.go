package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// sessionID is the session of the templated file dir: one each, as the
// collector's {session_id} files hold, so no seq is read twice.
func sessionID(dir string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(dir))
}

// sealSession appends one operation (seqs seq and seq+1) to base/dir/audit.jsonl
// and seals it with the key, as the collector seals a templated path's file:
// its origin holds the directories below base.
func sealSession(t *testing.T, base, dir string, seq int64, keyFile string) string {
	t.Helper()
	path := filepath.Join(base, dir, "audit.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	s, f := op(sessionID(dir), "exec", fmt.Sprintf("%016x", seq), seq, seq+1)
	appendFlocked(t, path, canonLines(s, f))
	keys, err := integrity.LoadSigningKey(keyFile)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, OriginBase: base})
	require.NoError(t, err)
	defer func() { require.NoError(t, sealer.Close(context.Background())) }()
	require.NoError(t, sealer.Seal(context.Background(), path))
	return path
}

// handOverFile hands the log at path over from the key to the next key,
// with the default next origin.
func handOverFile(t *testing.T, path, keyFile, nextPub string) {
	t.Helper()
	res := run(t, "", "log", "handover", "--signing-key", keyFile, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
}

// rotatedKeyTrail is a templated trail (base/{session}/audit.jsonl) whose
// signing key was handed over: sess-1 and sess-2 were sealed by the first
// key and handed over to cli-test-2027, sess-1 went on with the new key,
// and sess-3 was made after the handover, with the new key.
type rotatedKeyTrail struct {
	base, firstKey, firstPub, nextKey, nextPub string
}

func newRotatedKeyTrail(t *testing.T) rotatedKeyTrail {
	t.Helper()
	tr := rotatedKeyTrail{base: t.TempDir()}
	tr.firstKey, tr.firstPub = keyFiles(t, "cli-test")
	tr.nextKey, tr.nextPub = keyFiles(t, "cli-test-2027")
	for _, dir := range []string{"sess-1", "sess-2"} {
		handOverFile(t, sealSession(t, tr.base, dir, 1, tr.firstKey), tr.firstKey, tr.nextPub)
	}
	sealSession(t, tr.base, "sess-1", 3, tr.nextKey)
	sealSession(t, tr.base, "sess-3", 1, tr.nextKey)
	return tr
}

func (tr rotatedKeyTrail) path(dir string) string { return filepath.Join(tr.base, dir, "audit.jsonl") }

// keyID is the name+hash of the verifier key in the file pub.
func keyID(t *testing.T, pub string) string {
	t.Helper()
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	return integrity.KeyID(v.Name(), v.KeyHash())
}

// A session file the collector made after the handover is a log of the
// new key that no note ties to the first. verify with the first key
// trusts the key a handover it verified names, checks the log with it,
// and says which key signed it and which note named that key.
func TestVerifyTrustsTheKeyAHandoverNames(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: handover: signed by %s, the next key of the handover note in %s, which %s signed\n",
		tr.path("sess-3"), keyID(t, tr.nextPub), integrity.HandoverPath(tr.path("sess-1")), keyID(t, tr.firstPub)))
	require.Contains(t, res.stdout, tr.path("sess-3")+": integrity: lines=2 sealed=2 unsealed=0")
	require.Contains(t, res.stdout, tr.path("sess-1")+": handover: the log starts from the handover of ")
	require.NotContains(t, res.stdout, tr.path("sess-1")+": handover: signed by", "a log a handover names is followed as before")

	// The note beside a new log is a note as good as the retired log's
	// final checkpoint: the retired logs archived elsewhere, the new key
	// is trusted all the same.
	archive := t.TempDir()
	for _, dir := range []string{"sess-1", "sess-2"} {
		matches, err := filepath.Glob(tr.path(dir) + ".retired-*")
		require.NoError(t, err)
		require.NotEmpty(t, matches)
		for _, m := range matches {
			require.NoError(t, os.Rename(m, filepath.Join(archive, dir+"-"+filepath.Base(m))))
		}
	}
	res = run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.path("sess-3"), tr.path("sess-1"))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, tr.path("sess-3")+": handover: signed by "+keyID(t, tr.nextPub))
	require.Contains(t, res.stdout, tr.path("sess-1")+": handover: the log starts from a handover note that no retired log read names")
}

// Handovers chain: a session made after the second handover is signed by
// the third key, which a note of the second names; a session made between
// the two is signed by the second.
func TestVerifyTrustsAChainOfHandedOverKeys(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	lastKey, lastPub := keyFiles(t, "cli-test-2028")
	handOverFile(t, tr.path("sess-1"), tr.nextKey, lastPub)
	sealSession(t, tr.base, "sess-4", 1, lastKey)
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, tr.path("sess-3")+": handover: signed by "+keyID(t, tr.nextPub))
	// The note is the final checkpoint of sess-1's second log, retired.
	require.Regexp(t, regexp.QuoteMeta(tr.path("sess-4")+": handover: signed by "+keyID(t, lastPub)+
		", the next key of the handover note in "+tr.path("sess-1")+".retired-")+`[0-9TZ-]+`+
		regexp.QuoteMeta(".checkpoints, which "+keyID(t, tr.nextPub)+" signed\n"), res.stdout)

	// The second key's note alone names the third key to no one: the
	// first key's notes are not read. (The note the second log started
	// from moved aside with it, and names the second key.)
	retired := retiredFiles(t, tr.path("sess-1"))
	require.Len(t, retired, 2)
	// The second log, retired, read first: its final checkpoint, signed by
	// the second key, before the note it started from, which names that
	// key. It is read again once the chain holds the second key.
	res = run(t, "", "verify", "--key", tr.firstPub, "--allow-open", retired[1], tr.path("sess-4"))
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, tr.path("sess-4")+": handover: signed by "+keyID(t, lastPub))

	require.NoError(t, os.Rename(integrity.HandoverPath(retired[1]), filepath.Join(t.TempDir(), "moved.handover")))
	res = run(t, "", "verify", "--key", tr.firstPub, "--allow-open", retired[1], tr.path("sess-4"))
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, integrity.CheckpointsPath(tr.path("sess-4"))+": integrity: checkpoint #1: not signed by key "+keyID(t, tr.firstPub))
}

// A log signed by a key no handover names fails as before, beside a trail
// whose key was handed over.
func TestVerifyRefusesAnUnrelatedKeyBesideAHandover(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	otherKey, _ := keyFiles(t, "cli-other")
	other := sealSession(t, tr.base, "sess-9", 1, otherKey)
	alone := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", other)
	require.Equal(t, 1, alone.code, alone.stdout)
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "problems=1 ")
	require.Equal(t, linesNaming(alone.stdout, other), linesNaming(res.stdout, other), "reported as when read alone")
	require.Contains(t, res.stdout, integrity.CheckpointsPath(other)+": integrity: checkpoint #1: not signed by key "+keyID(t, tr.firstPub))
}

// A log of a key the chain trusts is checked as any log: a --checkpoint
// kept of it is checked with that key, and so are its witnesses'
// cosignatures.
func TestVerifyChecksATrustedKeysLogAsAnyLog(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	path := tr.path("sess-3")
	saved := savedCheckpoint(t, path, tr.nextPub, 2)
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", "--checkpoint", saved, tr.base)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": integrity: lines 1-2 of the log are in the checkpoint given in "+saved+" (2 lines)")

	// sess-4, made after the handover, is sealed with a witness that
	// knows the new key; the witness check reads its cosignatures.
	keys, err := integrity.LoadSigningKey(tr.nextKey)
	require.NoError(t, err)
	fake := witnesstest.Start(t, "w1.example/w", keys.Verifier)
	wkey := filepath.Join(t.TempDir(), "w1.vkey")
	require.NoError(t, os.WriteFile(wkey, []byte(fake.VKey+"\n"), 0o644))
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fake), 1, nil, nil)
	require.NoError(t, err)
	witnessed := filepath.Join(tr.base, "sess-4", "audit.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(witnessed), 0o700))
	s, f := op(sessionID("sess-4"), "exec", "0000000000000001", 1, 2)
	appendFlocked(t, witnessed, canonLines(s, f))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, OriginBase: tr.base, Witnesses: pool})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), witnessed))
	require.NoError(t, sealer.Close(context.Background()))
	res = run(t, "", "verify", "--key", tr.firstPub, "--witness", wkey, "--allow-open", tr.base)
	require.Equal(t, 1, res.code, "the logs before the handover were never witnessed: %s", res.stdout)
	require.Contains(t, res.stdout, witnessed+": handover: signed by "+keyID(t, tr.nextPub))
	require.Contains(t, res.stdout, witnessed+": witness: lines=2 witnessed=2 unwitnessed=0 records=1 quorum=1/1")
	require.Contains(t, res.stdout, path+": witness: no checkpoint is cosigned by 1 of the 1 witnesses")
}

// A handover note whose signer is not trusted names a key to no one, even
// when that signer has --key's name.
func TestVerifyDoesNotTrustAKeyAnUntrustedNoteNames(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	forgerKey, _ := keyFiles(t, "cli-test") // --key's name, another key
	evilKey, evilPub := keyFiles(t, "cli-evil")
	forged := sealSession(t, tr.base, "sess-7", 1, forgerKey)
	handOverFile(t, forged, forgerKey, evilPub)
	sealSession(t, tr.base, "sess-7", 3, evilKey)
	evil := sealSession(t, tr.base, "sess-8", 1, evilKey)

	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 1, res.code, res.stdout)
	require.NotContains(t, res.stdout, "handover: signed by "+keyID(t, evilPub))
	require.Contains(t, res.stdout, integrity.CheckpointsPath(evil)+": integrity: checkpoint #1: not signed by key "+keyID(t, tr.firstPub))
	require.Contains(t, res.stdout, tr.path("sess-3")+": handover: signed by "+keyID(t, tr.nextPub), "the trusted chain still holds")
}

// A key handed over to does not make the retired log acceptable when it
// grew past its final checkpoint.
func TestVerifyTrustedNextKeyKeepsARetiredLogFinal(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	retired := retiredFiles(t, tr.path("sess-2"))[0]
	s, f := op(sessionID("sess-2"), "stop", "00000000000000ff", 3, 4)
	appendFlocked(t, retired, canonLines(s, f))
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", "--allow-unsealed", "10", tr.base)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, retired+":3: handover: the log was retired at 2 lines by its final checkpoint, but the file has 4")
	require.NotContains(t, res.stdout, retired+": handover: signed by")
}

// A log the new key signs under an origin that is not that key's (here
// the first key's name) is not the collector's log of that key.
func TestVerifyRefusesATrustedKeysLogOfAnotherKeysOrigin(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	path := tr.path("sess-3")
	keys, err := integrity.LoadSigningKey(tr.nextKey)
	require.NoError(t, err)
	resignOrigin(t, path, keys.Verifier, keys.Signer, "cli-test/sess-3/audit.jsonl")
	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, path+`: handover: signed by `+keyID(t, tr.nextPub)+`, the next key of a handover note, `+
		`but its checkpoints name the log "cli-test/sess-3/audit.jsonl", not one of that key ("cli-test-2027/…"), as the collector names its logs`)
	require.Contains(t, res.stdout, "problems=1 ")
}

// resignOrigin signs every checkpoint of the log at path again with the
// origin given.
func resignOrigin(t *testing.T, path string, v note.Verifier, s note.Signer, origin string) {
	t.Helper()
	f, err := os.Open(integrity.CheckpointsPath(path))
	require.NoError(t, err)
	nr := integrity.NewNoteReader(f)
	var out []byte
	for {
		rec, err := nr.Next()
		if err != nil {
			break
		}
		c, err := integrity.OpenCheckpoint(rec, v)
		require.NoError(t, err)
		c.Origin = origin
		signed, err := integrity.SignCheckpoint(c, s)
		require.NoError(t, err)
		out = integrity.AppendRecord(out, signed)
	}
	require.NoError(t, f.Close())
	require.NotEmpty(t, out)
	require.NoError(t, os.WriteFile(integrity.CheckpointsPath(path), out, 0o600))
}

// linesNaming is the lines of out that name path.
func linesNaming(out, path string) string {
	var b bytes.Buffer
	for l := range strings.Lines(out) {
		if strings.Contains(l, path) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// retiredFiles is the retired audit files of path, oldest first.
func retiredFiles(t *testing.T, path string) []string {
	t.Helper()
	matches, err := filepath.Glob(path + ".retired-*")
	require.NoError(t, err)
	var out []string
	for _, m := range matches {
		if !slices.ContainsFunc(integrity.LogSidecarSuffixes(), func(s string) bool { return strings.HasSuffix(m, s) }) {
			out = append(out, m)
		}
	}
	require.NotEmpty(t, out, "%v", matches)
	return out
}

// A retired key's holder (the key leaked after the handover) hands a log
// over again, to a key of its own: a key hands over to one key, so verify
// refuses the second handover and trusts the key only the first names.
func TestVerifyRefusesASecondHandoverByARetiredKey(t *testing.T) {
	tr := newRotatedKeyTrail(t)
	evilKey, evilPub := keyFiles(t, "cli-evil")
	forged := sealSession(t, tr.base, "sess-8", 1, tr.firstKey)
	handOverFile(t, forged, tr.firstKey, evilPub)
	sealSession(t, tr.base, "sess-8", 3, evilKey)
	evil := sealSession(t, tr.base, "sess-9", 1, evilKey)

	res := run(t, "", "verify", "--key", tr.firstPub, "--allow-open", tr.base)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: handover: %s signed a handover to %s in %s, and this one to %s: "+
		"a key hands over to one key, so one of the two notes is not the collector's; %s, read second, is not trusted\n",
		integrity.HandoverPath(forged), keyID(t, tr.firstPub), keyID(t, tr.nextPub), integrity.HandoverPath(tr.path("sess-1")),
		keyID(t, evilPub), keyID(t, evilPub)))
	require.NotContains(t, res.stdout, evil+": handover: signed by")
	require.Contains(t, res.stdout, integrity.CheckpointsPath(evil)+": integrity: checkpoint #1: not signed by key "+keyID(t, tr.firstPub))
	require.Contains(t, res.stdout, tr.path("sess-3")+": handover: signed by "+keyID(t, tr.nextPub), "the first handover still holds")
	// The log the second handover names is not checked with its key either.
	require.Contains(t, res.stdout, fmt.Sprintf(`: handover: final at 2 lines; the log goes on as "cli-evil/sess-8/audit.jsonl", signed by %s, not trusted: `+
		"the key that signed this handover handed over to %s first\n", keyID(t, evilPub), keyID(t, tr.nextPub)))
	require.Contains(t, res.stdout, integrity.CheckpointsPath(forged)+": checkpoint #1: not signed by key "+keyID(t, tr.firstPub))
	require.NotContains(t, res.stdout, forged+": handover: the log starts from")
}
