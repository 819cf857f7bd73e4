package webview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
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

// checkSeals checks each source against its signed checkpoints, the way
// verify --key does, when a key is given.
func checkSeals(ctx context.Context, sources []string, key note.Verifier) []sealStatus {
	out := make([]sealStatus, 0, len(sources))
	dirs := dirListings{}
	for _, src := range sources {
		out = append(out, checkSeal(ctx, src, key, dirs))
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

func checkSeal(ctx context.Context, src string, key note.Verifier, dirs dirListings) sealStatus {
	st := sealStatus{Source: src}
	if src == trail.StdinName {
		st.State, st.Detail = sealNotApplied, "standard input has no checkpoints beside it"
		return st
	}
	if _, segment := filesink.ActiveOf(src); segment || dirs.isTrail(src) {
		// Rotated segments and their active file are one log: a file alone
		// does not verify against its checkpoints.
		st.State, st.Detail = sealUnchecked, "part of a rotated trail, whose segments are one log: check it with sandboxaudit verify --key NAME.pub"
		return st
	}
	if _, err := os.Lstat(integrity.CheckpointsPath(src)); errors.Is(err, os.ErrNotExist) {
		st.State, st.Detail = sealNone, "no signed checkpoints beside this file"
		return st
	}
	if key == nil {
		st.State, st.Detail = sealUnchecked, "signed checkpoints are present; start serve with --key NAME.pub to check them"
		return st
	}
	c, err := integrity.NewChecker(src, key)
	if err != nil {
		st.State, st.Detail = sealFailed, err.Error()
		return st
	}
	defer func() { _ = c.Close() }()
	f, _, err := fsutil.OpenRegular(src, os.O_RDONLY, 0)
	if err != nil {
		st.State, st.Detail = sealFailed, err.Error()
		return st
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(c.Writer(), fsutil.ContextReader(ctx, f)); err != nil {
		st.State, st.Detail = sealFailed, err.Error()
		return st
	}
	res := c.Finish()
	switch {
	case res.Failure != nil && res.Failure.Line > 0:
		st.State, st.Detail = sealFailed, fmt.Sprintf("line %d: %s", res.Failure.Line, res.Failure.Msg)
	case res.Failure != nil:
		st.State, st.Detail = sealFailed, res.Failure.Msg
	case res.Checkpoints == 0:
		st.State, st.Detail = sealFailed, "no checkpoint could be checked"
	case !res.OriginNames(src):
		st.State, st.Detail = sealFailed, fmt.Sprintf("the checkpoints name another file (origin %q)", res.Origin)
	default:
		st.State = sealVerified
		st.Detail = fmt.Sprintf("verified through checkpoint #%d: lines 1-%d of %d are sealed", res.Checkpoints, res.Sealed, res.Lines)
		if n := res.Lines - res.Sealed; n > 0 {
			st.Detail += fmt.Sprintf("; the %d line(s) after it are not sealed yet", n)
		}
	}
	return st
}
