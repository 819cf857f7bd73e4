package integrity

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// The checkpoints sidecar holds signed notes one after the other, each
// followed by a blank line: a note's body and its signatures hold no blank
// line of their own, so the blank line after the signatures ends a record.
// A record is written with one write(2), so only a crash can leave a torn
// one, and only at the end.

// ErrTornRecord means the sidecar ends inside a record (a crash while it was
// being appended).
var ErrTornRecord = errors.New("torn record at the end of the file")

// noteReadBuffer bounds one line of a record: a note's lines are an origin,
// a size, a hash and signatures, each far shorter.
const noteReadBuffer = 4096

// NoteReader reads the signed notes of a checkpoints sidecar one at a time,
// with memory bounded by maxCheckpointBytes (a witnessed sidecar's by
// maxWitnessedBytes).
type NoteReader struct {
	r   *bufio.Reader
	off int64 // bytes consumed so far
	max int   // bytes of one record
}

// NewNoteReader reads records from r.
func NewNoteReader(r io.Reader) *NoteReader {
	return &NoteReader{r: bufio.NewReaderSize(r, noteReadBuffer), max: maxCheckpointBytes}
}

// maxWitnessedBytes bounds one record of a witnessed sidecar: a checkpoint
// and up to the 100 signature lines note.Open takes. An ML-DSA-44
// cosignature line is about 3 KB, so five exceed a checkpoint's bound.
const maxWitnessedBytes = maxCheckpointBytes + 100*noteReadBuffer

// newWitnessedReader reads the records of a witnessed sidecar from r.
func newWitnessedReader(r io.Reader) *NoteReader {
	nr := NewNoteReader(r)
	nr.max = maxWitnessedBytes
	return nr
}

// Offset is the number of bytes of the complete records returned so far.
func (nr *NoteReader) Offset() int64 { return nr.off }

// Next returns the next signed note (without its terminating blank line),
// io.EOF after the last one, or ErrTornRecord / a format error.
func (nr *NoteReader) Next() ([]byte, error) {
	var rec []byte
	consumed := int64(0)
	inSigs := false
	for {
		line, err := nr.r.ReadSlice('\n')
		consumed += int64(len(line))
		if len(rec)+len(line) > nr.max {
			return nil, fmt.Errorf("the record at byte %d is longer than %d bytes", nr.off, nr.max)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && consumed == 0 {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("byte %d: %w", nr.off, ErrTornRecord)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				// No note line is this long, and it was not cut short by a
				// crash: more follows it. Taken for torn, it had the
				// collector cut every later checkpoint away.
				return nil, fmt.Errorf("the record at byte %d has a line longer than %d bytes", nr.off, noteReadBuffer)
			}
			return nil, err
		}
		blank := len(line) == 1
		switch {
		case blank && len(rec) == 0:
			return nil, fmt.Errorf("the record at byte %d starts with a blank line", nr.off)
		case blank && !inSigs:
			inSigs = true
			rec = append(rec, line...)
		case blank:
			if bytes.HasSuffix(rec, []byte("\n\n")) {
				return nil, fmt.Errorf("the record at byte %d has no signature", nr.off)
			}
			nr.off += consumed
			return rec, nil
		default:
			rec = append(rec, line...)
		}
	}
}

// AppendRecord is the bytes to append to the sidecar for one signed note.
func AppendRecord(dst, signed []byte) []byte {
	dst = append(dst, signed...)
	return append(dst, '\n')
}

// writeSynced writes b to f with one write(2), syncs it and closes f, so a
// note is either whole on disk or torn only at the end. The wrapping
// messages are the caller's: each names its own file.
func writeSynced(f *os.File, b []byte, writeMsg, syncMsg string) error {
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", writeMsg, err)
	}
	if err := fsutil.Fdatasync(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", syncMsg, err)
	}
	return f.Close()
}
