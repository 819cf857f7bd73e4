package filesink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// ErrSymlink is wrapped by the error of a write whose file, or a directory
// between the base directory and the file, is a symbolic link: lines are
// never written through one (it could point anywhere, such as another
// user's file), so the batch is refused instead.
var ErrSymlink = errors.New("symbolic link in the audit path (not followed)")

// hasSpoolSidecars reports whether name has both of a spool's sidecars
// beside it, .offset and .lock, as exists finds them: another tool's
// .offset alone (a log shipper's) is not taken for one.
func hasSpoolSidecars(name string, exists func(string) bool) bool {
	return exists(name+".offset") && exists(name+".lock")
}

// isSpoolAt is hasSpoolSidecars for the file name inside dirfd.
func isSpoolAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return hasSpoolSidecars(name, func(n string) bool { return unix.Fstatat(dirfd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil })
}

// ErrSpoolFile is wrapped by the error of a write whose file has a spool's
// sidecars (.offset and .lock) beside it: an HTTP sink's spool (reached through a
// symlinked directory, or named by another exporter) trims and rewrites its
// file, so audit lines written there would be sent away and lost.
var ErrSpoolFile = errors.New("the file is an HTTP sink's spool (it has .offset and .lock sidecars); audit lines are not written into a spool")

// newEntries makes each new entry openInside makes (a directory or the
// file) durable at once: forget is told of the entry before it is made
// (see Sink.making), then its directory is synced, and the entry is listed
// in durable, or its directory in unsynced when the sync failed. A nil
// *newEntries makes nothing durable (fsync never, a rotation's open).
type newEntries struct {
	sync     func(dir string) error
	forget   func(entry string)
	durable  []string // outermost first
	unsynced []string // outermost first
}

// making is called before entry is made, so that no other open takes it
// for durable until a sync after it succeeds.
func (n *newEntries) making(entry string) {
	if n != nil {
		n.forget(entry)
	}
}

// made syncs the directory of entry, just made.
func (n *newEntries) made(entry string) {
	if n == nil {
		return
	}
	n.forget(entry) // a file is only known made once its create succeeded
	dir := filepath.Dir(entry)
	if err := n.sync(dir); err != nil {
		n.unsynced = append(n.unsynced, dir)
		return
	}
	n.durable = append(n.durable, entry)
}

// openInside opens path, which lies inside base, for appending, creating
// it 0600 and missing directories 0700 below base. Every step below base
// is opened relative to its parent's descriptor with O_NOFOLLOW, so a
// symlink planted anywhere below base (even between a check and the open)
// is refused with ErrSymlink, never followed. base itself is the
// operator's configuration and may be, or lie under, a symlink. Each entry
// it makes (a directory or the file) goes through made (see newEntries),
// even when the open then fails, for the caller to sync what failed before
// it acknowledges a line in the file (see Sink.syncEntries). beforeCreate,
// when set, runs when the file is not there, after the directories are
// open: a symlinked directory is refused before it runs.
func openInside(base, path string, made *newEntries, beforeCreate func() error) (*os.File, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s is not inside %s", path, base)
	}
	dirfd, err := openBase(base, made)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unix.Close(dirfd) }()

	elems := strings.Split(rel, string(filepath.Separator))
	dir := base
	for _, e := range elems[:len(elems)-1] {
		fd, err := openDirAt(dirfd, dir, e, made)
		if err != nil {
			return nil, err
		}
		_ = unix.Close(dirfd)
		dirfd, dir = fd, filepath.Join(dir, e)
	}
	f, newFile, err := openFileAt(dirfd, dir, elems[len(elems)-1], path, beforeCreate)
	if newFile {
		made.made(path)
	}
	return f, err
}

// openBase opens the directory base, making it and its missing parents
// first when it is not there.
func openBase(base string, made *newEntries) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	dirfd, err := unix.Open(base, flags, 0)
	if !errors.Is(err, unix.ENOENT) {
		if err != nil {
			return -1, fmt.Errorf("open directory %s: %w", base, err)
		}
		return dirfd, nil
	}
	for d := base; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		made.making(d)
	}
	created, err := fsutil.MkdirAll(base)
	for _, d := range created {
		made.made(d)
	}
	if err != nil {
		return -1, fmt.Errorf("create directory %s: %w", base, err)
	}
	dirfd, err = unix.Open(base, flags, 0)
	if err != nil {
		return -1, fmt.Errorf("open directory %s: %w", base, err)
	}
	return dirfd, nil
}

// openDirAt opens (creating if missing, see newEntries) the directory
// name inside dirfd, refusing a symlink.
func openDirAt(dirfd int, dir, name string, made *newEntries) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		entry := filepath.Join(dir, name)
		made.making(entry)
		err = unix.Mkdirat(dirfd, name, 0o700)
		if err == nil {
			made.made(entry)
		} else if !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("create directory %s: %w", entry, err)
		}
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if err != nil {
		return -1, openError(dirfd, dir, name, err)
	}
	return fd, nil
}

// openFileAt opens the file name inside dirfd for appending, creating it
// 0600 (after beforeCreate, when set; newFile), refusing a symlink.
func openFileAt(dirfd int, dir, name, path string, beforeCreate func() error) (f *os.File, newFile bool, err error) {
	if isSpoolAt(dirfd, name) {
		return nil, false, fmt.Errorf("open %s: %w", path, ErrSpoolFile)
	}
	if beforeCreate != nil {
		var st unix.Stat_t
		// Any other error is the open's to report.
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
			if err := beforeCreate(); err != nil {
				return nil, false, fmt.Errorf("before creating %s: %w", path, err)
			}
		}
	}
	// O_RDWR rather than O_WRONLY: repairTail reads the last byte.
	const flags = unix.O_RDWR | unix.O_APPEND | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags|unix.O_CREAT|unix.O_EXCL, 0o600)
	newFile = err == nil
	if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if err != nil {
		return nil, false, openError(dirfd, dir, name, err)
	}
	return os.NewFile(uintptr(fd), path), newFile, nil
}

// openError names a refused symlink with ErrSymlink; other errors as they
// are.
func openError(dirfd int, dir, name string, err error) error {
	p := filepath.Join(dir, name)
	var st unix.Stat_t
	if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) &&
		unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("open %s: %w", p, ErrSymlink)
	}
	return fmt.Errorf("open %s: %w", p, err)
}
