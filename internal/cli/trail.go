package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// trailArgs turns verify's arguments (files, directories, "-") into the
// audit paths to check, in order: a directory gives every audit file
// below it (no symlink followed), and a closed segment gives the audit
// file it was rotated from, whose whole trail is then checked once. Each
// directory is listed once; the listing keeps the segments it found.
func trailArgs(args []string) ([]string, *trailListing, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	l := &trailListing{groups: filesink.SegmentGroups{}, listed: map[string]bool{}}
	for _, a := range args {
		if a == "-" { // stdin
			add(a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			if active, ok := filesink.ActiveOf(a); ok {
				a = active
			}
			add(a)
			continue
		}
		root := a
		if li, err := os.Lstat(a); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			// Named through a link: the directory it names is read (the
			// walk below it still leaves links out); the walk would
			// otherwise stop at the link and find nothing to verify.
			root = a + string(filepath.Separator)
		}
		var found []string
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case !d.Type().IsRegular():
			case trail.IsSidecar(p):
				// A log's history names its audit file even when the file
				// and its segments were removed: verify finds them missing.
				if owner, ok := logOfSidecar(p); ok {
					found = append(found, owner)
				}
			case isTornKept(p):
				l.torn = append(l.torn, p)
			default:
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", a, err)
		}
		for _, p := range found {
			if active, ok := l.groups.Add(p); ok {
				p = active
			}
			l.listed[p] = true
			add(p)
		}
	}
	return out, l, nil
}

// logOfSidecar returns the audit path whose signed history the sidecar p
// holds (its checkpoints or segment records), unless p is a sidecar log
// reset kept aside, whose audit file the new log goes on in.
func logOfSidecar(p string) (string, bool) {
	for _, suffix := range []string{integrity.CheckpointsSuffix, integrity.SegmentsSuffix} {
		if owner, ok := strings.CutSuffix(p, suffix); ok && !isResetKept(owner) {
			return owner, true
		}
	}
	return "", false
}

// hasLogSidecar reports whether the audit path has a checkpoints or
// segments sidecar (a symbolic link or other non-regular file included:
// the checks name it).
func hasLogSidecar(path string) bool {
	for _, p := range []string{integrity.CheckpointsPath(path), integrity.SegmentsPath(path)} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// trailListing holds the closed segments found by listing verify's
// directory arguments, so that a directory of many audit files (one per
// session) is not listed again for each.
// isTornKept reports whether p is a torn line kept aside
// (fsutil.IsTornKeptFile); one that cannot be read is read as an audit
// file, so that verify reports why.
func isTornKept(p string) bool {
	kept, err := fsutil.IsTornKeptFile(p)
	return kept && err == nil
}

type trailListing struct {
	groups filesink.SegmentGroups
	listed map[string]bool // audit paths found in a listed directory
	torn   []string        // torn lines kept aside (fsutil.CutTornTail)
}

// segments are path's closed segments, oldest first: from the listing
// when path was found in it, else listed now (an error only then).
func (l *trailListing) segments(path string) ([]filesink.Segment, error) {
	if l.listed[path] {
		return l.groups.Of(path), nil
	}
	segs, err := filesink.Segments(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return segs, err
}

// listedSegments are the segments of a path found in the listing.
func (l *trailListing) listedSegments(path string) []filesink.Segment {
	return l.groups.Of(path)
}

// hasSegments reports whether path is verified as a trail
// (integrity.IsTrail), its closed segments taken from the listing.
func (l *trailListing) hasSegments(path string) bool {
	segs, _ := l.segments(path)
	return integrity.IsTrail(path, len(segs))
}

// segmentParts are the closed segments of path, oldest first, then path
// itself when it exists: the files read for it without a key.
func segmentParts(path string, segs []filesink.Segment) []integrity.TrailPart {
	parts := make([]integrity.TrailPart, 0, len(segs)+1)
	for _, s := range segs {
		parts = append(parts, integrity.TrailPart{Path: s.Path, Compressed: s.Compressed})
	}
	if _, err := os.Lstat(path); err == nil || len(parts) == 0 {
		parts = append(parts, integrity.TrailPart{Path: path})
	}
	return parts
}

// verifyParts runs the plain checks over the parts in order, each
// decompressed, teeing the bytes to the trail checker when there is one.
func (v *verifier) verifyParts(ctx context.Context, parts []integrity.TrailPart, tc *integrity.TrailChecker) error {
	for i, p := range parts {
		r, err := p.Open()
		if err != nil {
			return err
		}
		var src io.Reader = r
		if tc != nil {
			tc.BeginPart(i)
			w := tc.Writer()
			if wc := v.trailWitness; wc != nil {
				wc.StartPart(p, v.trailLog)
				w = io.MultiWriter(w, wc.Writer())
			}
			src = io.TeeReader(r, w)
		}
		tap := &readTap{r: src}
		if p.Compressed {
			v.compressed[p.Path] = true // for reading it again (repeats.go)
			src = tap
		}
		err = v.verifyReader(ctx, p.Path, src)
		_ = r.Close() // read-only: a close error loses nothing
		if err != nil && zstdread.IsDamaged(tap.err) && ctx.Err() == nil {
			// A damaged frame fails this segment, not the run: the lines
			// before the damage were checked, and the other parts still
			// are. An error reading the file ends the run, as it is.
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: %v\n", p.Path, tap.err)
			err = nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.Path, err)
		}
		if tc != nil {
			tc.EndPart()
		}
	}
	return nil
}

// readTap keeps the error a read of r gave, other than io.EOF.
type readTap struct {
	r   io.Reader
	err error
}

func (t *readTap) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

// verifyTrail checks the trail of an audit path with segments (segs, its
// closed segments listed): every segment in order, compressed or not,
// against the one log's checkpoints and segment records.
func (v *verifier) verifyTrail(ctx context.Context, path string, segs []filesink.Segment) error {
	defer v.followHandover(path)()
	tr := integrity.OpenListedTrail(path, v.opts.key, segs)
	tc, err := integrity.NewTrailChecker(tr, v.opts.key)
	if err != nil {
		return v.verifyTrailNotSealed(ctx, path, segs, err)
	}
	defer func() { _ = tc.Close() }()
	if tr.Retired > 0 && retentionLeadsTo(tr) {
		v.afterRetention[len(v.files)] = true
	}
	wc, err := v.newWitnessCheck(path, tc.Origin())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if wc != nil {
		defer func() { _ = wc.Close() }()
	}
	given := v.proveAlso(tc)
	if err := v.checkTrailParts(ctx, tc, tr, wc); err != nil {
		return err
	}
	lead := tr.Log.Lead()
	res := tc.Finish()
	witnessed := int64(-1)
	if wc != nil {
		at := func(n int64) string { return lineIn(tr, n, lead) }
		witnessed = v.reportWitnessed(path, at, wc, lead, len(res.Failures) == 0)
	}
	v.checkHandover(path, res.First+res.Lines, lead)
	v.reportTrail(path, tr, tc, res, given, lead, witnessed)
	return nil
}

// verifyTrailNotSealed runs the plain checks on a trail the checker could
// not open (cause says why), and counts the missing seal as a problem.
func (v *verifier) verifyTrailNotSealed(ctx context.Context, path string, segs []filesink.Segment, cause error) error {
	if err := v.verifyParts(ctx, segmentParts(path, segs), nil); err != nil {
		return err
	}
	v.sum.Problems++
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %v (no checkpoint to check against)\n", path, cause)
	return nil
}

// reportTrail reports what the integrity checks of a trail found: the
// failures, a renamed origin, the hash store, the retired segments, the
// proofs and the given checkpoints, then the counts. lead is 1 when
// leaf 0 is a handover note; witnessed is the leaves the witnesses'
// quorum cosigned (-1: no witnesses).
func (v *verifier) reportTrail(path string, tr *integrity.Trail, tc *integrity.TrailChecker, res integrity.TrailResult,
	given []int, lead, witnessed int64,
) {
	for _, f := range res.Failures {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "integrity: %s\n", f)
	}
	if !tc.OriginNames() {
		v.reportRenamed(path, tc.Origin())
	}
	intact := ""
	if len(res.Failures) == 0 {
		intact = "the lines are intact"
	}
	const rebuild = "with the collector stopped, `sandboxaudit log rebuild-store` writes it again from the segments " +
		"(docs/history.md); `verify --alone` and the collector's next start need it"
	v.reportStore(path, res.StoreUnused, res.StoreDamage, intact, "Put the regular file back, or "+rebuild, "Move it aside: "+rebuild)
	v.reportRetired(path, tr, lead)
	v.reportProofs(res.Proofs, lead, witnessed)
	v.reportGiven(path, res.Given, given, lead)
	v.reportTrailCounts(path, tr, res, lead)
}

// reportTrailCounts prints a trail's integrity summary line.
func (v *verifier) reportTrailCounts(path string, tr *integrity.Trail, res integrity.TrailResult, lead int64) {
	allowed := v.checkUnsealed(path, res.Unsealed, res.UnsealedParts)
	upTo := ""
	if len(res.Failures) > 0 {
		upTo = " (sealed and checkpoints count only what passed)"
	}
	firstLine := res.First + 1 - lead // with a handover leaf, line i is leaf i
	_, _ = fmt.Fprintf(v.out, "%s: integrity: trail segments=%d retired=%d first_line=%d lines=%d sealed=%d unsealed=%d%s checkpoints=%d%s\n",
		path, len(tr.Parts)-activeCount(tr), tr.Retired, firstLine, res.Lines, max(res.Sealed-lead, 0), res.Unsealed, allowed, res.Checkpoints, upTo)
}

func activeCount(tr *integrity.Trail) int {
	if n := len(tr.Parts); n > 0 && tr.Parts[n-1].Path == tr.Path {
		return 1
	}
	return 0
}

// checkUnsealed applies --allow-unsealed to lines after the newest
// checkpoint: a problem unless the flag allows them (by count, or by the
// age of the files that hold them). It returns what to add to the summary.
func (v *verifier) checkUnsealed(path string, unsealed int64, parts []string) string {
	if unsealed == 0 {
		return ""
	}
	lim := v.opts.allowUnsealed
	notSealed := plural.Count(unsealed, "line") + " after the newest checkpoint " + plural.Pick(unsealed, "is", "are") + " not sealed"
	if closed := closedParts(path, parts); len(closed) > 0 {
		// A closed segment is no live file: its lines are sealed with its
		// segment record, so unsealed lines in it read as forged ones.
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %s, and the closed segment %s holds some: "+
			"no signed segment record counts them (lines appended, the segments sidecar cut, or a rotation not sealed yet); --allow-unsealed accepts the active file's last lines only\n",
			path, notSealed, closed[0])
		return ""
	}
	if lim.allows(unsealed, parts) {
		return fmt.Sprintf(" (allowed by --allow-unsealed %s)", lim.raw)
	}
	v.sum.Problems++
	why := "a forged line appended after the newest checkpoint reads the same"
	if lim.set() {
		why = fmt.Sprintf("more than --allow-unsealed %s allows", lim.raw)
	}
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %s (%s); "+
		"--allow-unsealed COUNT|DURATION accepts a live file's last few\n", path, notSealed, why)
	return ""
}

// closedParts are the parts holding unsealed lines other than the
// active file at path.
func closedParts(path string, parts []string) []string {
	var out []string
	for _, p := range parts {
		if p != path {
			out = append(out, p)
		}
	}
	return out
}

// unsealedLimit is --allow-unsealed: a count of lines, or a duration
// within which the files holding the unsealed lines were last written (a
// live file's last lines, not yet under a checkpoint).
type unsealedLimit struct {
	raw   string
	count int64
	age   time.Duration
}

func (u *unsealedLimit) String() string { return u.raw }

func (u *unsealedLimit) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		u.raw, u.count, u.age = s, n, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err == nil && d > 0:
		u.raw, u.count, u.age = s, 0, d
		return nil
	case err == nil:
		return fmt.Errorf("%q: a duration must be above 0 (0 lines: leave the flag out)", s)
	}
	return fmt.Errorf("%q is neither a line count (100) nor a duration (30s)", s)
}

func (u unsealedLimit) set() bool { return u.raw != "" }

// allows reports whether n unsealed lines, in the files named, are within
// the limit.
func (u unsealedLimit) allows(n int64, files []string) bool {
	switch {
	case !u.set():
		return false
	case u.age == 0:
		return n <= u.count
	}
	if len(files) == 0 {
		return false
	}
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil {
			return false
		}
		// A time ahead of the clock (beyond a second of skew) is no
		// write within the duration.
		if age := time.Since(fi.ModTime()); age > u.age || age < -time.Second {
			return false
		}
	}
	return true
}

// expandArgs replaces each directory argument by the audit files below
// it. With a key each audit path is then checked as one trail (a closed
// segment named stands for its path's trail); without one, a directory
// gives each trail's segments in order, then its active file. With a
// key, the listing answers which paths have segments.
func expandArgs(args []string, key bool) ([]string, *trailListing, error) {
	if key {
		return trailArgs(args)
	}
	var out []string
	all := &trailListing{}
	for _, a := range args {
		if a == "-" { // stdin
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			out = append(out, a)
			continue
		}
		paths, l, err := trailArgs([]string{a})
		if err != nil {
			return nil, nil, err
		}
		for _, p := range paths {
			segs := l.listedSegments(p)
			if _, err := os.Lstat(p); err != nil && len(segs) == 0 {
				continue // only sidecars: without a key there is nothing to read
			}
			for _, part := range segmentParts(p, segs) {
				out = append(out, part.Path)
			}
		}
		all.torn = append(all.torn, l.torn...)
	}
	return out, all, nil
}

// checkTrailParts reads tr's parts into tc, with wc (nil without
// witnesses) checked as the lines go by.
func (v *verifier) checkTrailParts(ctx context.Context, tc *integrity.TrailChecker, tr *integrity.Trail, wc *integrity.WitnessCheck) error {
	v.trailWitness, v.trailLog = wc, tr.Log
	defer func() { v.trailWitness, v.trailLog = nil, nil }()
	return v.verifyParts(ctx, tr.Parts, tc)
}

// lineIn names where line n of a trail's log is: a recorded segment and
// its line, or the active file and its line when it is the only part no
// record counts; otherwise the trail and the line of the log.
func lineIn(tr *integrity.Trail, n, lead int64) string {
	leaf := n - 1 + lead // with a handover leaf, line i is leaf i
	unrecorded := 0
	for _, p := range tr.Parts {
		if r := p.Record; r == nil {
			unrecorded++
		} else if leaf >= r.First && leaf < r.End() {
			return fmt.Sprintf("%s:%d", p.Path, leaf-r.First+1)
		}
	}
	if end := tr.Log.End(); unrecorded == 1 && tr.Parts[len(tr.Parts)-1].Path == tr.Path && leaf >= end {
		return fmt.Sprintf("%s:%d", tr.Path, leaf-end+1)
	}
	return fmt.Sprintf("%s (line %d of the log)", tr.Path, n)
}
