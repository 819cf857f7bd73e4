package integrity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// ErrStoreNotRebuilt is wrapped by every refusal of RebuildStore: the
// trail does not give back the signed log, and nothing was written.
var ErrStoreNotRebuilt = errors.New("hash store not rebuilt")

// Rebuilt is what RebuildStore wrote.
type Rebuilt struct {
	Store      string // the store written
	Leaves     int64  // leaves hashed, the handover leaf included
	Signed     int64  // size of the newest checkpoint, matched
	Parts      int    // files read
	Checkpoint Checkpoint
}

// RebuildStore writes the hash store of the audit path again from its
// trail: every closed segment in order, then the active file. Nothing on
// disk is trusted: each recorded segment must start and end at the
// compact ranges its signed record gives, and the tree at each signed
// checkpoint's size must have its root. Lines after the newest checkpoint
// are kept, for the collector to seal. The store is written to a temporary
// file and renamed into place only once everything matched. Run it while
// the collector is stopped: a running sealer appends to the store, so the
// caller holds the path's owner lock (owner, from LockLog), which a
// running sealer would hold instead.
func RebuildStore(ctx context.Context, owner *OwnerLock, path string, v note.Verifier) (Rebuilt, error) {
	if owner == nil {
		return Rebuilt{}, fmt.Errorf("%s: rebuild the hash store under the owner lock", path)
	}
	// A rename cannot replace a directory: say so before reading the trail.
	if fi, err := os.Lstat(StorePath(path)); err == nil && fi.IsDir() {
		return Rebuilt{}, refusal(path, "%s is a directory: move it aside and run the command again", StorePath(path))
	}
	cps, err := readSignedCheckpoints(path, v)
	if err != nil {
		return Rebuilt{}, err
	}
	t, err := OpenTrail(path, v)
	if err != nil {
		return Rebuilt{}, refusal(path, "%v", err)
	}
	if len(t.Problems) > 0 {
		return Rebuilt{}, refusal(path, "the trail is not whole: %s", strings.Join(t.Problems, "; "))
	}
	if err := checkNothingRetired(path, t); err != nil {
		return Rebuilt{}, err
	}
	newest := cps[len(cps)-1]
	res := Rebuilt{Store: StorePath(path), Signed: newest.N, Parts: len(t.Parts), Checkpoint: newest}
	err = replaceStore(path, func(f *os.File) error {
		res.Leaves, err = hashTrail(ctx, path, t, cps, f)
		return err
	})
	return res, err
}

// hashTrail writes the stored hashes of the trail's leaves to f and returns
// their count.
func hashTrail(ctx context.Context, path string, t *Trail, cps []Checkpoint, f *os.File) (int64, error) {
	rb := &rebuilder{path: path, store: &hashStore{f: f, scratch: &storeScratch{}}, cps: cps}
	if g := t.Log.Genesis(); g != nil {
		if err := rb.add(g.EndRange[0]); err != nil {
			return 0, err
		}
	}
	for _, p := range t.Parts {
		if err := rb.part(ctx, p); err != nil {
			return 0, err
		}
	}
	if newest, lead := cps[len(cps)-1], t.Log.Lead(); rb.store.n < newest.N {
		return 0, refusal(path, "the trail holds %d lines, fewer than the %d the newest checkpoint signs: lines were removed",
			rb.store.n-lead, newest.N-lead)
	}
	return rb.store.n, rb.store.flush()
}

// replaceStore has fill write a temporary file (0600) beside path and, if
// it succeeds, syncs it and renames it over path's store: a crash leaves
// the old store or the new one, never a part. A rename replaces a symbolic
// link at the store's path, never its target.
func replaceStore(path string, fill func(*os.File) error) error {
	dir := filepath.Dir(path)
	prefix := "." + filepath.Base(StorePath(path)) + ".rebuild-"
	removeStaleTemps(dir, prefix)
	tmp, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return fmt.Errorf("create the new hash store: %w", err)
	}
	placed := false
	defer func() {
		if !placed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("create the new hash store: %w", err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync the new hash store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close the new hash store: %w", err)
	}
	if err := os.Rename(tmp.Name(), StorePath(path)); err != nil {
		return fmt.Errorf("put the new hash store in place: %w", err)
	}
	placed = true
	if err := fsutil.SyncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// removeStaleTemps removes the temporary stores in dir a killed run left.
// The caller holds the owner lock, so no other run is writing one. What
// cannot be removed stays: it holds up nothing.
func removeStaleTemps(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func refusal(path, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", path, ErrStoreNotRebuilt, fmt.Sprintf(format, args...))
}

// readSignedCheckpoints reads the checkpoints sidecar: every record signed
// by v, of one origin, each at least as large as the one before. A torn
// last record (a crash mid-append) is left out, as the sealer cuts it.
func readSignedCheckpoints(path string, v note.Verifier) ([]Checkpoint, error) {
	f, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, refusal(path, "no signed checkpoint to check the trail against: %v", err)
	}
	defer func() { _ = f.Close() }()
	var out []Checkpoint
	nr := NewNoteReader(f)
	for i := 1; ; i++ {
		msg, err := nr.Next()
		if err == io.EOF || errors.Is(err, ErrTornRecord) {
			break
		}
		if err != nil {
			return nil, refusal(path, "checkpoint #%d: %v", i, err)
		}
		c, err := OpenCheckpoint(msg, v)
		if err != nil {
			return nil, refusal(path, "checkpoint #%d: %v", i, err)
		}
		if n := len(out); n > 0 && (c.N < out[n-1].N || c.Origin != out[n-1].Origin) {
			return nil, refusal(path, "checkpoint #%d (origin %q, size %d) does not extend the one before (origin %q, size %d)",
				i, c.Origin, c.N, out[n-1].Origin, out[n-1].N)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, refusal(path, "%s holds no signed checkpoint to check the trail against", CheckpointsPath(path))
	}
	return out, nil
}

// checkNothingRetired refuses a trail whose oldest segments retention
// removed: the store holds a hash for every leaf from the first, and the
// removed lines' hashes cannot be computed again. A store holding only the
// signed compact range there would answer proofs from older sizes with
// hashes it does not have.
func checkNothingRetired(path string, t *Trail) error {
	if t.Retired == 0 {
		return nil
	}
	lead := t.Log.Lead()
	var gone []string
	end := lead
	for _, r := range t.Log.Segments {
		if t.Log.Retired[r.Name].Retired {
			gone = append(gone, r.Name)
			end = max(end, r.End())
		}
	}
	return refusal(path, "retention removed %s (%s of the log); the store needs a hash for every line from the first, "+
		"and those lines are gone. The trail still verifies with `sandboxaudit verify --key`; to seal on, "+
		"`sandboxaudit log reset --signing-key KEY %s` starts a new log", strings.Join(gone, ", "), plural.Lines(lead+1, end), path)
}

// rebuilder hashes a trail's lines into a store, checking them against the
// signed records as it goes.
type rebuilder struct {
	path  string
	store *hashStore
	cps   []Checkpoint
	next  int    // the next checkpoint to reach
	file  string // the file being read, for errors
}

func (rb *rebuilder) part(ctx context.Context, p TrailPart) error {
	rb.file = filepath.Base(p.Path)
	if rec := p.Record; rec != nil {
		if rec.First != rb.store.n {
			return refusal(rb.path, "segment %s starts at line %d of the log by its record, the files before it end at %d",
				rb.file, rec.First+1, rb.store.n)
		}
		if err := rb.checkRange(rec.First, rec.Range, "start"); err != nil {
			return err
		}
	}
	r, err := p.Open()
	if err != nil {
		return fmt.Errorf("read %s: %w", p.Path, err)
	}
	defer func() { _ = r.Close() }()
	lh := NewLeafHasher(rb.add)
	if _, err := bufio.NewReaderSize(fsutil.ContextReader(ctx, r), 256<<10).WriteTo(lh); err != nil {
		if errors.Is(err, ErrStoreNotRebuilt) {
			return err
		}
		return fmt.Errorf("hash %s: %w", p.Path, err)
	}
	if rec := p.Record; rec != nil {
		if rb.store.n != rec.End() {
			return refusal(rb.path, "segment %s holds %d lines, its signed record %d: the segment was changed",
				rb.file, rb.store.n-rec.First, rec.Count)
		}
		if err := rb.checkRange(rec.End(), rec.EndRange, "end"); err != nil {
			return err
		}
	}
	return nil
}

// add stores leaf h and checks the tree at each checkpoint's size.
func (rb *rebuilder) add(h tlog.Hash) error {
	if err := rb.store.add(h); err != nil {
		return err
	}
	for rb.next < len(rb.cps) && rb.cps[rb.next].N <= rb.store.n {
		c := rb.cps[rb.next]
		if c.N == rb.store.n {
			root, err := tlog.TreeHash(c.N, rb.store)
			if err != nil {
				return err
			}
			if root != c.Hash {
				return refusal(rb.path, "the %s of the log (up to %s) %s not give the root hash of the checkpoint of that size: "+
					"%s or a file before it was changed", plural.First(c.N, "line"), rb.file, plural.Pick(c.N, "does", "do"), rb.file)
			}
		}
		rb.next++
	}
	return nil
}

// checkRange compares the compact range at leaf n with a signed one.
func (rb *rebuilder) checkRange(n int64, want []tlog.Hash, where string) error {
	got, err := compactRange(n, rb.store)
	if err != nil {
		return err
	}
	if !sameHashes(got, want) {
		return refusal(rb.path, "the tree at the %s of segment %s differs from its signed record: %s or a file before it was changed",
			where, rb.file, rb.file)
	}
	return nil
}
