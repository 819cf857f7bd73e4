package integrity

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// provenPart is where a file's lines sit in its log.
type provenPart struct {
	// log is the audit path whose sidecars prove the lines.
	log string
	// file is the file read, a closed segment or the active file.
	file TrailPart
	// first is the leaf of the file's line 1.
	first int64
	// count is how many lines of a closed segment its record holds; -1
	// for the active file (up to the newest checkpoint).
	count int64
}

// locatePart places path in its log: a closed segment at the leaves its
// record names, the active file after every recorded segment (and the
// handover note a log may start from). The records are read unverified,
// as the checkpoint is: a bundle placed at the wrong leaf fails
// verify-proof.
func locatePart(path string) (provenPart, error) {
	if active, seg, ok := filesink.ParseSegment(path); ok && !exists(CheckpointsPath(path)) {
		return locateSegment(path, active, seg)
	}
	return locateActive(path)
}

func locateSegment(path, active string, seg filesink.Segment) (provenPart, error) {
	recs, err := readSegmentRecords(active)
	if err != nil {
		return provenPart{}, err
	}
	name := filepath.Base(seg.Plain)
	for _, r := range recs {
		if !r.Retired && !r.Genesis && r.Name == name {
			return provenPart{log: active, file: TrailPart{Path: path, Compressed: seg.Compressed}, first: r.First, count: r.Count}, nil
		}
	}
	return provenPart{}, fmt.Errorf("no record in %s names it: the collector has not sealed it yet, or it is not a segment of %s",
		SegmentsPath(active), active)
}

func locateActive(path string) (provenPart, error) {
	recs, err := readSegmentRecords(path)
	if err != nil {
		return provenPart{}, err
	}
	first, newest := int64(0), ""
	for _, r := range recs {
		if r.Retired {
			continue
		}
		first = r.End()
		if !r.Genesis {
			newest = r.Name
		}
	}
	// The lines of a segment rotated since the last record come first.
	segs, err := filesink.Segments(path)
	if err == nil && len(segs) > 0 {
		if last := filepath.Base(segs[len(segs)-1].Plain); last != newest {
			return provenPart{}, fmt.Errorf("the segment %s, rotated before this file's lines, is not recorded in %s yet: "+
				"try again once the collector has sealed it", last, SegmentsPath(path))
		}
	}
	return provenPart{log: path, file: TrailPart{Path: path}, first: first, count: -1}, nil
}

// readSegmentRecords reads the records of path's segments sidecar,
// unverified; a missing sidecar has none.
func readSegmentRecords(path string) ([]SegmentRecord, error) {
	return readSegmentRecordsUpTo(path, -1)
}

// readSegmentRecordsUpTo is readSegmentRecords stopping after limit records
// (limit < 0: all of them).
func readSegmentRecordsUpTo(path string, limit int) ([]SegmentRecord, error) {
	f, _, err := openRegular(SegmentsPath(path), os.O_RDONLY|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var recs []SegmentRecord
	nr := NewNoteReader(f)
	for len(recs) != limit {
		msg, err := nr.Next()
		if err == io.EOF || errors.Is(err, ErrTornRecord) {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SegmentsPath(path), err)
		}
		text, _, _ := cutNoteText(msg)
		r, err := parseSegmentRecord(string(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SegmentsPath(path), err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}
