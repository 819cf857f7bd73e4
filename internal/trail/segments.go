package trail

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// jsonlSuffix ends the name of an audit file (segments add their time and
// number before it, and .zst after it once compressed).
const jsonlSuffix = ".jsonl"

// Segments lists the audit files below dir, each trail oldest first: an
// audit file's closed segments (events-<UTC time>-<n>.jsonl, compressed or
// not, as the file sink rotates them) in rotation order, then the active
// file. Only *.jsonl trails are read; sidecars, symbolic links and other
// files are left out. Each directory is listed once, however many audit
// files it holds (a {session_id} path puts one per session side by side).
func Segments(dir string) ([]string, error) {
	var actives []string
	seen := map[string]bool{}
	groups := filesink.SegmentGroups{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || IsSidecar(p) {
			return nil
		}
		active := p
		if a, ok := groups.Add(p); ok {
			active = a
		}
		if strings.HasSuffix(active, jsonlSuffix) && !seen[active] {
			seen[active] = true
			actives = append(actives, active)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(actives)
	var out []string
	for _, active := range actives {
		for _, s := range groups.Of(active) {
			out = append(out, s.Path)
		}
		if fi, err := os.Lstat(active); err == nil && fi.Mode().IsRegular() {
			out = append(out, active)
		}
	}
	return out, nil
}

// IsSidecar reports whether a file holds integrity records, a sealer's
// owner lock or a compression still being written, not audit lines.
func IsSidecar(name string) bool {
	for _, s := range append(integrity.LogSidecarSuffixes(), integrity.OwnerLockSuffix, filesink.ZstdSuffix+".tmp") {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// Expand turns the command line's paths into sources: a directory becomes
// its segments, "-" is standard input, anything else is a file.
func Expand(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == StdinName {
			out = append(out, p)
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Named on the command line through a link: a directory is read
			// as one (the walk below it still leaves links out).
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				p, fi = p+string(filepath.Separator), st
			}
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		segs, err := Segments(p)
		if err != nil {
			return nil, err
		}
		if len(segs) == 0 {
			return nil, fmt.Errorf("%s: no audit files (*.jsonl, *.jsonl.zst) in this directory", p)
		}
		out = append(out, segs...)
	}
	return out, nil
}
