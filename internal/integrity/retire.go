package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// LogSidecarSuffixes are the files an audit path's log keeps beside it,
// which move with the log when it is retired or reset. The owner lock
// (OwnerLockSuffix) is not one of them: it stays with the path.
func LogSidecarSuffixes() []string {
	return []string{StoreSuffix, CheckpointsSuffix, SegmentsSuffix, WitnessedSuffix, HandoverSuffix}
}

// LogFileSuffixes are the audit file itself ("") and its log's sidecars.
func LogFileSuffixes() []string { return append([]string{""}, LogSidecarSuffixes()...) }

// SidecarBeside names (its base name) the first of a log's sidecars that
// lies beside path, or "": no spool has one, so one shows path is an
// audit file.
func SidecarBeside(path string) string {
	for _, suffix := range LogSidecarSuffixes() {
		if _, err := os.Lstat(path + suffix); err == nil {
			return filepath.Base(path + suffix)
		}
	}
	return ""
}

// RetireLog moves the log of the audit path aside after its handover, so
// that a new log starts at the path. The file and its sidecars become
// PATH.retired-<time> (-2, -3... after another handover in the same
// second). A rotated log goes whole into a directory of that name, every
// file under its own name, so its segment records still name its
// segments. It returns the retired file: the path in that directory for
// a rotated log. v reads the segment records. Run it with the writers
// stopped.
//
// next, when not nil, is the new log's handover note: it is written to
// PATH.handover before the checkpoints sidecar moves, last. Until then the
// path's checkpoints end with the final checkpoint, so a run killed
// midway is finished by running it again: it goes on into the retired
// name it had begun.
func RetireLog(path string, v note.Verifier, now time.Time, next []byte) (string, error) {
	segs, err := filesink.Segments(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	sl, err := LoadSegmentLog(path, v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", SegmentsPath(path), err)
	}
	to, dir, err := retiredName(path, segs, now, len(segs) > 0 || sl.Closed() > 0, finalOf(path, v))
	if err != nil {
		return "", err
	}
	dest, retired := retiredDest(path, to, dir)
	// A handover note that is next already stays: a killed run wrote it.
	kept := isNote(HandoverPath(path), next)
	for _, f := range filesToRetire(path, segs, dir, kept) {
		if exists(dest(f)) {
			// A killed run moved this log's file there; the one at the
			// path is new (a writer made it again), and stays.
			continue
		}
		if err := os.Rename(f, dest(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("retire %s: %w", f, err)
		}
	}
	if next != nil && !kept {
		if err := WriteHandoverNote(path, next); err != nil {
			return "", err
		}
	}
	if err := os.Rename(CheckpointsPath(path), dest(CheckpointsPath(path))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("retire %s: %w", CheckpointsPath(path), err)
	}
	if dir {
		if err := fsutil.SyncDir(to); err != nil {
			return "", fmt.Errorf("retire %s: %w", path, err)
		}
	}
	return retired, fsutil.SyncDir(filepath.Dir(path))
}

// RetiringWitnessed is the audit file whose witnessed sidecar is the one
// of the log a handover retires from path: path, or the retired file a
// run killed midway moved that sidecar with. The final checkpoint's
// cosignatures go there: a run again after that move would otherwise
// start a witnessed sidecar at the path, which stays for the new log and
// holds the old one's checkpoint.
func RetiringWitnessed(path string, v note.Verifier) (string, error) {
	segs, err := filesink.Segments(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	to, dir, err := unfinishedRetiredName(path, segs, finalOf(path, v))
	if err != nil || to == "" {
		return path, err
	}
	if _, retired := retiredDest(path, to, dir); exists(WitnessedPath(retired)) {
		return retired, nil
	}
	return path, nil
}

// finalOf is the final checkpoint path's checkpoints end with (nil: none).
func finalOf(path string, v note.Verifier) *Checkpoint {
	if st, err := ReadHandover(path, v); err == nil && st.Final != nil {
		return &st.Final.Checkpoint
	}
	return nil
}

// retiredName returns the name path's log retires to, and whether it is
// a directory: the one a killed run began, or else a free one, made as
// a directory when rotated is set. final is the final checkpoint the
// path's checkpoints end with (nil: none).
func retiredName(path string, segs []filesink.Segment, now time.Time, rotated bool, final *Checkpoint) (to string, dir bool, err error) {
	to, dir, err = unfinishedRetiredName(path, segs, final)
	if err != nil || to != "" {
		return to, dir, err
	}
	if to, err = freeRetiredName(path, now); err != nil {
		return "", false, err
	}
	if rotated {
		if err := os.Mkdir(to, 0o700); err != nil {
			return "", false, fmt.Errorf("retire %s: %w", path, err)
		}
	}
	return to, rotated, nil
}

// retiredDest returns where each of path's files goes when it retires
// to to, and the retired audit file's name.
func retiredDest(path, to string, dir bool) (dest func(string) string, retired string) {
	if dir {
		return func(f string) string { return filepath.Join(to, filepath.Base(f)) }, filepath.Join(to, filepath.Base(path))
	}
	return func(f string) string { return to + f[len(path):] }, to
}

// filesToRetire lists the files that move before the checkpoints
// sidecar, in order: the segments first (of a rotated log, dir), the
// hash store next, so that once the file has moved its store has too
// (it tells this log's begun retirement from another log's), then the
// file and its other sidecars; the checkpoints move last, since until
// then the path still reads as the log being retired. kept: the
// handover note stays.
func filesToRetire(path string, segs []filesink.Segment, dir, kept bool) []string {
	var files []string
	if dir {
		for _, s := range segs {
			files = append(files, s.Path, s.Plain, s.Plain+filesink.ZstdSuffix+".tmp")
		}
	}
	files = append(files, StorePath(path))
	for _, suffix := range LogFileSuffixes() {
		if suffix == StoreSuffix || suffix == CheckpointsSuffix || suffix == HandoverSuffix && kept {
			continue
		}
		files = append(files, path+suffix)
	}
	return files
}

// isNote reports whether the file at p holds exactly the note want.
func isNote(p string, want []byte) bool {
	if want == nil {
		return false
	}
	got, err := os.ReadFile(p)
	return err == nil && bytes.Equal(got, want)
}

// unfinishedRetiredName finds a retirement of path that a killed run
// began: a PATH.retired-* name without its checkpoints sidecar, where no
// file still at the path (segs its closed segments) would go over one
// already there, or whose moved hash store holds the tree of final (the
// path's final checkpoint): files at the path are then a writer's new
// ones, made after the killed run moved the log's. An older retired log
// whose checkpoints were archived apart is therefore never taken for
// one, nor written over. dir says whether it is a directory (a rotated
// log).
func unfinishedRetiredName(path string, segs []filesink.Segment, final *Checkpoint) (to string, dir bool, err error) {
	matches, err := filepath.Glob(path + ".retired-*")
	if err != nil {
		return "", false, err
	}
	for _, m := range matches {
		fi, err := os.Lstat(m)
		if err != nil {
			continue
		}
		dir := fi.IsDir()
		if !dir && (!fi.Mode().IsRegular() || strings.ContainsRune(m[len(path+".retired-"):], '.')) {
			continue
		}
		dest, retired := retiredDest(path, m, dir)
		if exists(CheckpointsPath(retired)) || collides(filesToRetire(path, segs, dir, true), dest) && !storeHolds(retired, final) {
			continue
		}
		return m, dir, nil
	}
	return "", false, nil
}

// collides reports whether any of files, still there, would go over a
// file at its destination.
func collides(files []string, dest func(string) string) bool {
	for _, f := range files {
		if exists(f) && exists(dest(f)) {
			return true
		}
	}
	return false
}

// storeHolds reports whether the hash store of the audit file at path
// holds the tree of c (nil: no).
func storeHolds(path string, c *Checkpoint) bool {
	if c == nil {
		return false
	}
	f, err := openNoFollow(StorePath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	root, err := tlog.TreeHash(c.N, storeFileReader{f})
	return err == nil && root == c.Hash
}

// exists reports whether something, a symlink too, is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// retiredSuffix matches the suffix of a retired log's name (see
// freeRetiredName).
var retiredSuffix = regexp.MustCompile(`\.retired-\d{8}T\d{6}Z(-\d+)?$`)

// RetiredFrom reports whether path is an audit file a handover retired,
// and the path its log left: PATH.retired-<time>[-N], or PATH's name in
// a directory of that name (a rotated log).
func RetiredFrom(path string) (string, bool) {
	if loc := retiredSuffix.FindStringIndex(path); loc != nil && loc[0] > 0 && !strings.HasSuffix(path[:loc[0]], string(filepath.Separator)) {
		return path[:loc[0]], true
	}
	dir := filepath.Dir(path)
	if loc := retiredSuffix.FindStringIndex(dir); loc != nil && filepath.Base(dir[:loc[0]]) == filepath.Base(path) {
		return dir[:loc[0]], true
	}
	return "", false
}

// RetiredLogs lists the retired audit files beside path, as RetireLog
// names them: PATH.retired-<time>[-N], or PATH's name in a directory of
// that name (a rotated log). Those moved elsewhere are not found.
func RetiredLogs(path string) []string {
	dir, base := filepath.Split(path)
	return retiredInDir(os.ReadDir, dir)[base]
}

// retiredInDir lists the retired audit files in dir (see RetiredLogs) by
// the name of the file each left; none when dir cannot be read.
func retiredInDir(readDir func(string) ([]os.DirEntry, error), dir string) map[string][]string {
	byFile := map[string][]string{}
	entries, err := readDir(filepath.Clean(dir))
	if err != nil {
		return byFile
	}
	for _, e := range entries {
		if of, p, ok := retiredEntry(dir, e); ok {
			byFile[of] = append(byFile[of], p)
		}
	}
	return byFile
}

// retiredEntry reports whether the entry e of dir is a retired audit file
// (see RetiredLogs), the name of the file its log left (of) and its path.
func retiredEntry(dir string, e os.DirEntry) (of, path string, ok bool) {
	name := e.Name()
	loc := retiredSuffix.FindStringIndex(name)
	if loc == nil || loc[0] == 0 {
		return "", "", false
	}
	of, path = name[:loc[0]], filepath.Join(dir, name)
	if e.IsDir() {
		path = filepath.Join(path, of)
	}
	return of, path, true
}

// NameGrowth is the most the sealer adds to an audit file's name: the
// checkpoints sidecar of a log retired after a handover,
// PATH.retired-<time>-100.checkpoints (see freeRetiredName).
const NameGrowth = len(".retired-") + len("20060102T150405Z") + len("-100") + len(CheckpointsSuffix)

// freeRetiredName is the first PATH.retired-<time>[-N] no file uses.
func freeRetiredName(path string, now time.Time) (string, error) {
	base := path + ".retired-" + now.UTC().Format("20060102T150405Z")
	for i := 1; i <= 100; i++ {
		to := base
		if i > 1 {
			to = fmt.Sprintf("%s-%d", base, i)
		}
		free := true
		for _, suffix := range LogFileSuffixes() {
			if _, err := os.Lstat(to + suffix); err == nil {
				free = false
				break
			}
		}
		if free {
			return to, nil
		}
	}
	return "", fmt.Errorf("%s and 99 names after it exist already", base)
}

// HandoverLinks is what ties the log of an audit path to others, read
// without checking a signature: verify orders the logs by it, and learns
// from its notes which keys a handover names; every signature is checked
// where it is used.
type HandoverLinks struct {
	// Origin is the origin of the log's first checkpoint, and Next the
	// next origin its final checkpoint names ("" when it has none).
	Origin, Next string
	// Notes are the handover notes beside the log: its final checkpoints
	// (at most maxLinkNotes), then the note it starts from
	// (PATH.handover).
	Notes []NoteFile
}

// NoteFile is a signed note and the file it was read from.
type NoteFile struct {
	Path   string
	Signed []byte
}

// maxLinkNotes bounds the final checkpoints HandoverLinks keeps of one
// log: it has one, and the checkpoints after it are problems verify
// reports; a few let a note the key did not sign stand beside the one it
// did.
const maxLinkNotes = 4

// ReadHandoverLinks reads the handover links of the log at path.
func ReadHandoverLinks(path string) HandoverLinks {
	var l HandoverLinks
	eachCheckpoint(path, func(rec, text []byte) bool {
		if l.Origin == "" {
			first, _, _ := bytes.Cut(text, []byte("\n"))
			l.Origin = string(first)
		}
		if h, ok, err := ParseHandover(text); ok && err == nil {
			l.Next = h.NextOrigin
			if len(l.Notes) < maxLinkNotes {
				l.Notes = append(l.Notes, NoteFile{Path: CheckpointsPath(path), Signed: rec})
			}
		}
		return true
	})
	if signed, ok, err := readHandoverNote(path); err == nil && ok {
		l.Notes = append(l.Notes, NoteFile{Path: HandoverPath(path), Signed: signed})
	}
	return l
}
