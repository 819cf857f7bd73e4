package trail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// Suffixes of the files a trail's directory holds lines in.
const (
	jsonlSuffix = ".jsonl"
	zstSuffix   = ".zst"
)

// Segments lists the segments of the trails in dir, oldest first: rotated
// segments (events-<UTC time>-<n>.jsonl, compressed or not) sort by name
// before their active file (events.jsonl). Sidecars, subdirectories and
// symbolic links are left out.
func Segments(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !isSegment(e.Name()) {
			continue
		}
		names = append(names, e.Name())
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(segmentKey(a), segmentKey(b)) })
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out, nil
}

// isSegment reports whether a file name holds audit lines.
func isSegment(name string) bool {
	if strings.HasSuffix(name, integrity.StoreSuffix) || strings.HasSuffix(name, integrity.CheckpointsSuffix) {
		return false
	}
	base := strings.TrimSuffix(name, zstSuffix)
	return strings.HasSuffix(base, jsonlSuffix) && len(base) > len(jsonlSuffix)
}

// segmentKey orders segments: a rotated segment's name is its active
// file's stem, a dash and its time, so ending the active file's key with
// the highest byte puts it after every segment rotated from it.
func segmentKey(name string) string {
	stem := strings.TrimSuffix(strings.TrimSuffix(name, zstSuffix), jsonlSuffix)
	if strings.HasSuffix(name, zstSuffix) || isRotated(stem) {
		return stem
	}
	return stem + "\xff"
}

// isRotated reports whether a stem ends in -<time>-<n>, as rotation names
// its segments.
func isRotated(stem string) bool {
	i := strings.LastIndexByte(stem, '-')
	if i < 0 || i == len(stem)-1 || strings.Trim(stem[i+1:], "0123456789") != "" {
		return false
	}
	j := strings.LastIndexByte(stem[:i], '-')
	return j >= 0 && j < i-1 && stem[j+1] >= '0' && stem[j+1] <= '9'
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
