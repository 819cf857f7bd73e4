package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// offsetRecord is the sidecar's content. Offset is the byte offset of the
// first unacknowledged line of the spool file whose inode is Inode.
//
// The inode ties the offset to one incarnation of the spool file. Trimming
// and compaction replace the file by rename and only then rewrite the
// sidecar; a crash in between leaves a sidecar naming the old inode, which
// Open recognises as "offset refers to another file" and resolves to 0 —
// exactly right, because the new file holds only unacknowledged lines.
//
// Tail is the digest of the bytes before Offset (see tail), which Open
// checks: a file edited in place before the offset puts it in doubt.
type offsetRecord struct {
	Inode  uint64 `json:"inode"`
	Offset int64  `json:"offset"`
	Tail   string `json:"tail,omitempty"`
}

// readOffset returns the sidecar at path; found is false if it is absent.
func readOffset(path string) (rec offsetRecord, found bool, err error) {
	f, _, err := openFile(path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, 4096)) // a record is one short line
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, true, fmt.Errorf("parse %s: %w", path, err)
	}
	return rec, true, nil
}

// writeOffset replaces the sidecar atomically: a reader (or a crash) sees
// the old record or the new one, never a mix.
func writeOffset(path string, rec offsetRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return fsutil.ReplaceFile(path, append(b, '\n'))
}
