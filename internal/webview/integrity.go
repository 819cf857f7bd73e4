package webview

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// Seal states a file can be in.
const (
	sealVerified   = "verified"
	sealFailed     = "failed"
	sealUnchecked  = "not checked"
	sealNone       = "not sealed"
	sealNotApplied = "not applicable"
)

// sealStatus is one source's integrity, checked once at start.
type sealStatus struct {
	Source string
	State  string
	Detail string
}

// sealChecks check each source against its signed checkpoints, the way
// verify --key does, over the very bytes the view reads (trail.Options.Tap):
// a file changed after the view read it cannot lend its seals to what the
// view shows.
type sealChecks struct {
	list []*sealCheck
	tap  map[string]*sealCheck // the sources to feed, until fed once
}

// sealCheck is one source's check: its status, or its checker when the
// status waits for the source's bytes.
type sealCheck struct {
	st  sealStatus
	c   *integrity.Checker
	fed bool
	err error // the checker's own failure, which stops it
}

// Write feeds the checker and never fails the read: a failure is the
// check's verdict.
func (k *sealCheck) Write(p []byte) (int, error) {
	if k.err == nil {
		_, k.err = k.c.Writer().Write(p)
	}
	return len(p), nil
}

// planSeals settles the status of each source that needs no reading and
// opens a checker for the others.
func planSeals(sources []string, key note.Verifier) *sealChecks {
	sc := &sealChecks{tap: map[string]*sealCheck{}}
	dirs := dirListings{}
	for _, src := range sources {
		k := &sealCheck{st: sealStatus{Source: src}}
		if !planSeal(&k.st, src, key, dirs) {
			c, err := integrity.NewChecker(src, key)
			if err != nil {
				k.st.State, k.st.Detail = sealFailed, err.Error()
			} else if _, dup := sc.tap[src]; !dup {
				k.c = c
				sc.tap[src] = k
			} else {
				_ = c.Close()
				k.st.State, k.st.Detail = sealUnchecked, "named twice: its first reading is checked"
			}
		}
		sc.list = append(sc.list, k)
	}
	return sc
}

// writer is the tap for one source: its checker, the first time it is
// read, else nil.
func (sc *sealChecks) writer(src string) io.Writer {
	k, ok := sc.tap[src]
	if !ok || k.fed {
		return nil
	}
	k.fed = true
	return k
}

// close releases the checkers.
func (sc *sealChecks) close() {
	for _, k := range sc.list {
		if k.c != nil {
			_ = k.c.Close()
		}
	}
}

// finish gives each source's status, once the view has read them, and
// releases the checkers.
func (sc *sealChecks) finish() []sealStatus {
	defer sc.close()
	out := make([]sealStatus, 0, len(sc.list))
	for _, k := range sc.list {
		if k.c != nil {
			k.verdict()
		}
		out = append(out, k.st)
	}
	return out
}

// dirListings holds the closed segments of each directory listed, so a
// directory of many audit files (one per session) is listed once.
type dirListings map[string]filesink.SegmentGroups

// isTrail reports whether src is part of a rotated trail
// (integrity.IsTrail), listing src's directory once.
func (d dirListings) isTrail(src string) bool {
	src = filepath.Clean(src)
	dir := filepath.Dir(src)
	g, ok := d[dir]
	if !ok {
		g, _ = filesink.ListSegments(dir) // unreadable: no segments found
		d[dir] = g
	}
	return integrity.IsTrail(src, len(g[src]))
}

// planSeal sets st when src's seals are not checked (standard input, a
// rotated trail, no checkpoints, no key) and reports whether it did.
func planSeal(st *sealStatus, src string, key note.Verifier, dirs dirListings) bool {
	switch {
	case src == trail.StdinName:
		st.State, st.Detail = sealNotApplied, "standard input has no checkpoints beside it"
	case filesink.IsSegment(src) || dirs.isTrail(src):
		// Rotated segments and their active file are one log: a file alone
		// does not verify against its checkpoints.
		st.State, st.Detail = sealUnchecked, "part of a rotated trail, whose segments are one log: check it with sandboxaudit verify --key NAME.pub"
	case noCheckpoints(src):
		st.State, st.Detail = sealNone, "no signed checkpoints beside this file"
	case key == nil:
		st.State, st.Detail = sealUnchecked, "signed checkpoints are present; start serve with --key NAME.pub to check them"
	default:
		return false
	}
	return true
}

func noCheckpoints(src string) bool {
	_, err := os.Lstat(integrity.CheckpointsPath(src))
	return errors.Is(err, os.ErrNotExist)
}

// verdict sets the status from what the checker made of the bytes read.
func (k *sealCheck) verdict() {
	st := &k.st
	res := k.c.Finish()
	switch {
	case !k.fed:
		st.State, st.Detail = sealFailed, "the view did not read this file to check it"
	case k.err != nil && (res.Failure == nil || res.Failure.Line == 0):
		st.State, st.Detail = sealFailed, k.err.Error()
	case res.Failure != nil && res.Failure.Line > 0:
		st.State, st.Detail = sealFailed, fmt.Sprintf("line %d: %s", res.Failure.Line, res.Failure.Msg)
	case res.Failure != nil:
		st.State, st.Detail = sealFailed, res.Failure.Msg
	case res.Checkpoints == 0:
		st.State, st.Detail = sealFailed, "no checkpoint could be checked"
	case !res.OriginNames(k.st.Source):
		st.State, st.Detail = sealFailed, fmt.Sprintf("the checkpoints name another file (origin %q)", res.Origin)
	default:
		st.State = sealVerified
		st.Detail = fmt.Sprintf("through checkpoint #%d: %s", res.Checkpoints, sealedLines(res.Sealed, res.Lines))
		if n := res.Lines - res.Sealed; n > 0 {
			st.Detail += fmt.Sprintf("; the %s after it %s not sealed yet", plural.Count(n, "line"), plural.Pick(n, "is", "are"))
		}
	}
}

// sealedLines words how many of a file's lines its newest checkpoint
// seals: "lines 1-8 of 8 are sealed", "line 1 of 1 is sealed", or, for
// the checkpoint of 0 lines a new file gets before its first line, "no
// line of 3 is sealed".
func sealedLines(sealed, lines int64) string {
	if sealed == 0 {
		return fmt.Sprintf("no line of %d is sealed", lines)
	}
	return fmt.Sprintf("%s of %d %s sealed", plural.Lines(1, sealed), lines, plural.Pick(sealed, "is", "are"))
}
