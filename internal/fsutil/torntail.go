package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TornSuffix is put, with the time in Unix nanoseconds, after the name of a
// file whose unfinished last line CutTornTail moved aside.
const TornSuffix = ".torn-"

// TornTail says what CutTornTail did with an unfinished last line.
type TornTail struct {
	// Bytes is the line's size; 0 when the file ended with a newline.
	Bytes int64
	// KeptIn names the private file the line was moved to. It is "" when
	// the line could not be saved aside (NotKept says why) and was closed
	// with a newline where it is instead.
	KeptIn  string
	NotKept error
}

// CutTornTail deals with bytes after the last '\n' of the first size bytes
// of f, named name: a line a writer killed mid-write left unfinished. That
// line was never acknowledged (its write never returned), so it is moved to
// a new private file, name+TornSuffix+<unix ns>, synced, and cut off f; the
// file then holds only whole lines and verifies. If it cannot be saved
// aside (most often a full disk, which is also what cuts appends short), it
// is closed with a newline where it is, by write, so that it never joins the
// next line. The caller holds the writers' lock and syncs f. It returns f's
// new size.
func CutTornTail(f *os.File, name string, size int64, write func([]byte) error) (int64, TornTail, error) {
	return CutTornTailWithin(f, name, size, 0, write)
}

// ErrTornUnlocked is TornTail.NotKept for a line CloseTornTail closed:
// without the writers' lock its writer may still be writing it.
var ErrTornUnlocked = errors.New("no writers' lock (no flock here): its writer may still be writing it")

// CloseTornTail closes an unfinished last line of the first size bytes of
// f with a newline where it is, by write, so that it never joins the next
// line, and returns f's new size. It is for a writer without the writers'
// lock (a file system without flock): another writer may still be writing
// the line, or append whole lines before a cut, so no byte is removed.
func CloseTornTail(f *os.File, name string, size int64, write func([]byte) error) (int64, TornTail, error) {
	end, err := tornStart(f, name, size)
	if err != nil || end == size {
		return size, TornTail{}, err
	}
	return closeTorn(name, size, TornTail{Bytes: size - end, NotKept: ErrTornUnlocked}, write)
}

// ErrTornOverLimit is TornTail.NotKept for a line CutTornTailWithin closed
// where it is: keeping it would take the lines kept beside the file past
// the limit.
var ErrTornOverLimit = errors.New("the torn lines kept beside it would pass their limit")

// CutTornTailWithin is CutTornTail keeping the side files of name, this
// line's included, within limit bytes together (0: no limit). A line that
// would take them past it is closed with a newline where it is, as one that
// cannot be saved: a crash loop must not fill the disk with side files.
func CutTornTailWithin(f *os.File, name string, size, limit int64, write func([]byte) error) (int64, TornTail, error) {
	end, err := tornStart(f, name, size)
	if err == nil && end < size && limit > 0 {
		if notKept := tornOverLimit(name, size-end, limit); notKept != nil {
			return closeTorn(name, size, TornTail{Bytes: size - end, NotKept: notKept}, write)
		}
	}
	return cutTornFrom(f, name, fmt.Sprintf("%s%s%d", name, TornSuffix, time.Now().UnixNano()), size, end, err, write)
}

// tornOverLimit says why a torn line of n bytes is not kept beside name
// under limit, or returns nil when it fits.
func tornOverLimit(name string, n, limit int64) error {
	kept, err := tornKeptBytes(name)
	if err != nil {
		return fmt.Errorf("measure the torn lines kept beside it: %w", err)
	}
	if kept+n > limit {
		return fmt.Errorf("%w: %d bytes are kept, this line has %d, the limit is %d", ErrTornOverLimit, kept, n, limit)
	}
	return nil
}

// tornKeptBytes sums the sizes of the regular files beside name that
// CutTornTail kept its torn lines in.
func tornKeptBytes(name string) (int64, error) {
	entries, err := os.ReadDir(filepath.Dir(name))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		if file, _, ok := ParseTornKept(e.Name()); !ok || file != filepath.Base(name) {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return 0, err
		}
		if fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n, nil
}

// cutTornTail is CutTornTail with the side file's name given.
func cutTornTail(f *os.File, name, side string, size int64, write func([]byte) error) (int64, TornTail, error) {
	end, err := tornStart(f, name, size)
	return cutTornFrom(f, name, side, size, end, err, write)
}

// cutTornFrom is cutTornTail once tornStart returned end and err.
func cutTornFrom(f *os.File, name, side string, size, end int64, err error, write func([]byte) error) (int64, TornTail, error) {
	if err != nil || end == size {
		return size, TornTail{}, err
	}
	t := TornTail{Bytes: size - end, KeptIn: side}
	// Saved before the cut: a crash in between only means it is saved twice.
	if t.NotKept = saveSection(name, t.KeptIn, f, end, t.Bytes); t.NotKept != nil {
		t.KeptIn = ""
		return closeTorn(name, size, t, write)
	}
	if err := f.Truncate(end); err != nil {
		return size, TornTail{}, fmt.Errorf("cut the torn last line off %s: %w", name, err)
	}
	return end, t, nil
}

// EndsTorn reports whether the first size bytes of f end other than with
// a newline: in an unfinished line. None (size 0) do not.
func EndsTorn(f *os.File, size int64) (bool, error) {
	if size == 0 {
		return false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// tornStart returns where the unfinished last line of the first size bytes
// of f starts: size when they end with a newline (or are none).
func tornStart(f *os.File, name string, size int64) (int64, error) {
	if torn, err := EndsTorn(f, size); err != nil {
		return size, fmt.Errorf("read tail of %s: %w", name, err)
	} else if !torn {
		return size, nil
	}
	end, err := LastLineEnd(f, size)
	if err != nil {
		return size, fmt.Errorf("find the torn last line of %s: %w", name, err)
	}
	return end, nil
}

// closeTorn closes t, the torn last line of the size bytes of name, with a
// newline by write, and returns the new size.
func closeTorn(name string, size int64, t TornTail, write func([]byte) error) (int64, TornTail, error) {
	if err := write([]byte{'\n'}); err != nil {
		return size, t, fmt.Errorf("keep the torn last line of %s aside: %w; close it with a newline: %w", name, t.NotKept, err)
	}
	return size + 1, t, nil
}

// ErrTornDirMoved is TornTail.NotKept when the directory at the path of
// the file being cut no longer holds that file: the directory, or one
// above it, was replaced (a symlink put in its place could lead anywhere),
// so no side file is created through it.
var ErrTornDirMoved = errors.New("its directory no longer holds it (replaced or symlinked meanwhile); the side file is not created there")

// saveSection copies n bytes of src (at name) from off to a new private
// file at side, beside it, durably. The side file is created through a
// handle on src's directory, checked to hold src itself, with O_EXCL and
// O_NOFOLLOW: a directory swapped for a symlink, or anything (a symlink
// too) already at side's name, is refused, never followed. On failure what
// it wrote is removed (but never what was there before).
func saveSection(name, side string, src *os.File, off, n int64) (err error) {
	if filepath.Dir(side) != filepath.Dir(name) {
		return fmt.Errorf("side file %s is not beside %s", side, name)
	}
	dirfd, err := openDirHolding(src, name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(dirfd) }()
	base := filepath.Base(side)
	fd, err := unix.Openat(dirfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: side, Err: err}
	}
	f := os.NewFile(uintptr(fd), side)
	defer func() {
		if err != nil {
			_ = unix.Unlinkat(dirfd, base, 0)
		}
	}()
	_, err = io.Copy(f, io.NewSectionReader(src, off, n))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = unix.Fsync(dirfd); err != nil {
			err = fmt.Errorf("sync directory %s: %w", filepath.Dir(side), err)
		}
	}
	return err
}

// openDirHolding opens the directory of name, src's path, and checks that
// it holds src there (same device and inode, not a symlink to it); it
// returns the directory's descriptor.
func openDirHolding(src *os.File, name string) (int, error) {
	dir := filepath.Dir(name)
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := sameFileAt(dirfd, filepath.Base(name), src); err != nil {
		_ = unix.Close(dirfd)
		return -1, fmt.Errorf("%s: %w", name, err)
	}
	return dirfd, nil
}

// sameFileAt reports, as ErrTornDirMoved, that the entry base of dirfd is
// not src's file.
func sameFileAt(dirfd int, base string, src *os.File) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("no device and inode for %s", fi.Name())
	}
	var got unix.Stat_t
	err = unix.Fstatat(dirfd, base, &got, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) || err == nil && (uint64(got.Dev) != uint64(want.Dev) || uint64(got.Ino) != uint64(want.Ino)) {
		return ErrTornDirMoved
	}
	return err
}

// IsTornKept reports whether name is a file CutTornTail kept a torn line
// in (its name ends in TornSuffix and digits).
func IsTornKept(name string) bool {
	_, _, ok := ParseTornKept(name)
	return ok
}

// IsTornKeptFile reports whether the file at path is one CutTornTail kept
// a torn line in: named so (IsTornKept), a regular file (not followed
// through a symlink), and holding no newline, as a torn line never does.
// An audit file named like one (a session id ending in .torn-<digits>)
// holds whole lines, so it is not taken for one.
func IsTornKeptFile(path string) (bool, error) {
	if !IsTornKept(filepath.Base(path)) {
		return false, nil
	}
	f, _, err := OpenRegular(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if bytes.IndexByte(buf[:n], '\n') >= 0 {
			return false, nil
		}
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// ParseTornKept returns, for a file CutTornTail kept a torn line in, the
// file the line was cut off and when.
func ParseTornKept(name string) (file string, at time.Time, ok bool) {
	i := strings.LastIndex(name, TornSuffix)
	if i < 0 || i+len(TornSuffix) == len(name) {
		return "", time.Time{}, false
	}
	var ns int64
	for _, c := range name[i+len(TornSuffix):] {
		if c < '0' || c > '9' || ns > (math.MaxInt64-9)/10 {
			return "", time.Time{}, false
		}
		ns = ns*10 + int64(c-'0')
	}
	return name[:i], time.Unix(0, ns), true
}

// String describes what was done, for a log line or a repair note.
func (t TornTail) String() string {
	if t.KeptIn != "" {
		return fmt.Sprintf("cut a torn last line (%d bytes) off; it is kept in %s", t.Bytes, filepath.Base(t.KeptIn))
	}
	return fmt.Sprintf("closed a torn last line (%d bytes) with a newline; it could not be saved aside: %v", t.Bytes, t.NotKept)
}
