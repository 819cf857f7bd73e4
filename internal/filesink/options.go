// Package filesink appends whole canonical JSONL lines to audit files.
//
// It shares files safely with the Python JsonlOutboxSink: both open the file
// with O_APPEND and hold flock(LOCK_EX) for the whole write, so lines from the
// two writers never interleave. The package works on bytes only; it knows
// nothing about the event model.
package filesink

import (
	"context"
	"fmt"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// FsyncMode says when written data is forced to stable storage.
type FsyncMode string

const (
	// FsyncNever leaves flushing to the kernel. Fastest; a power loss can
	// lose the last seconds of lines (a process crash loses nothing that
	// WriteBatch reported written).
	FsyncNever FsyncMode = "never"
	// FsyncBatch issues one write(2) per WriteBatch call and then an
	// fdatasync; batches that queued for the file while another was being
	// written share the next one (group commit). When WriteBatch returns
	// nil the batch is durable, and so is each directory entry from the
	// filesystem root down to the file (see Sink.syncEntries). This is the default:
	// it is as durable as FsyncAlways at the point the caller is told
	// "done", at a fraction of the cost.
	FsyncBatch FsyncMode = "batch"
	// FsyncAlways writes each line with its own write(2) followed by
	// fdatasync, all under one flock hold (the batch stays contiguous in the
	// file). Beyond FsyncBatch it guarantees that after a power loss in the
	// middle of a batch the file holds a durable prefix of whole lines of
	// that batch, never later lines without earlier ones. It costs one
	// fdatasync per line.
	FsyncAlways FsyncMode = "always"
)

// DefaultMaxOpenFiles bounds the open-file cache when Options.MaxOpenFiles is 0.
const DefaultMaxOpenFiles = 64

// Options configures a Sink.
type Options struct {
	// Path is the destination file, optionally a template holding
	// {session_id} (canonical lowercase hyphenated UUID) and/or
	// {session_id_hex} (the same 32 hex digits without hyphens).
	// Placeholders may appear in the file name and in directory names;
	// the directory before the first placeholder is the base directory that
	// every expanded path must stay inside.
	Path string
	// Fsync is the durability policy; "" means FsyncBatch.
	Fsync FsyncMode
	// MaxOpenFiles bounds how many files the sink keeps open at once
	// (least recently used files are closed first); 0 means
	// DefaultMaxOpenFiles.
	MaxOpenFiles int
	// OnWrite, when set, is told after each successful WriteBatch which
	// file got how many lines (the integrity sealer's hook). It runs on the
	// writer's goroutine after the lock is released, so it must be quick.
	OnWrite func(path string, lines int)
	// BeforeCreate, when set, is called before the sink makes a file it
	// finds missing when it opens the path for writing (a templated path's
	// new session, a plain path's new log, a file removed while the sink
	// had it closed for MaxOpenFiles); an error fails the write, and the
	// file is not made. The integrity sealer signs the new log's first
	// checkpoint here, so no line lands in a file without signed history.
	// It runs with no flock held, once the sink has made and opened the
	// file's directories (a symlink on the way is refused first), and is
	// not called for the file a rotation makes at the path, nor for a file
	// reopened under a writer.
	BeforeCreate func(ctx context.Context, path string) error
	// OnTornTail, when set, is told of each torn last line (a writer
	// killed mid-write) the sink cut off a file, which file and when (site),
	// and where the line is kept, or closed with a newline (not kept). It
	// runs under the writers' lock, when the file system has flock.
	OnTornTail func(path string, torn fsutil.TornTail, site TornSite)
	// OnReplaced, when set, is told that the file the sink last appended
	// to at path was moved away, removed or replaced by someone else
	// (not by a rotation, this sink's or another writer's: see
	// OnRotatedByOther), and how many bytes it held after that
	// append. The sink goes on in the file now at the path; the sealer
	// refuses to take that file for the log's continuation. It runs on
	// the writer's goroutine with no flock held.
	OnReplaced func(path string, size int64)
	// OnCutBack, when set, is told that the file the sink appends to at
	// path was cut back by someone else below where its last append ended
	// (from bytes) to to bytes: lines it acknowledged are gone. No writer
	// of the path cuts below another's lines (a torn tail or a refused
	// batch lies after them). The sink goes on at the file's new end. It
	// runs on the writer's goroutine under the writers' flock.
	OnCutBack func(path string, from, to int64)
	// OnRotatedByOther, when set, is told that the file the sink last
	// appended to at path now is the closed segment segment (its plain
	// name): another writer of the path, a second collector's file sink,
	// rotated it. Such a file is not reported to OnReplaced. It runs on
	// the writer's goroutine with no flock held.
	OnRotatedByOther func(path, segment string)
	// OnOpened, when set, is told of each file the sink opens at path (its
	// first open, a reopen, the file a rotation opens), by its identity:
	// the integrity sealer knows by it a file of the log that another
	// writer of the path rotated before this sink wrote to it again. It
	// runs on the writer's goroutine and must be quick.
	OnOpened func(path string, fi os.FileInfo)
	// Rotation, when set, rotates, compresses and retires the files.
	Rotation *Rotation

	// writeFn, syncFn, syncDirFn and lockFn replace (*os.File).Write,
	// fsutil.Fdatasync, fsutil.SyncDir and fsutil.Lock: the
	// fault-injection seams for tests of failed writes, syncs and lock
	// waits. nil means the real call.
	writeFn   func(*os.File, []byte) (int, error)
	syncFn    func(*os.File) error
	syncDirFn func(dir string) error
	lockFn    func(context.Context, int) error
}

// TornSite says where the sink found a torn last line it cut off.
type TornSite int

const (
	// TornInAuditFile is the file at the path, before the sink appends to it.
	TornInAuditFile TornSite = iota
	// TornInSegment is a closed segment, before compression copies it.
	TornInSegment
	// TornAfterCutBack is the file at the path, found cut back below lines
	// the sink had appended (Options.OnCutBack was told): the cut, not a
	// killed writer, left the line torn.
	TornAfterCutBack
)

// Validate reports whether m is a known mode; "" is accepted as the default.
func (m FsyncMode) Validate() error {
	switch m {
	case "", FsyncNever, FsyncBatch, FsyncAlways:
		return nil
	}
	return fmt.Errorf("fsync mode %q is not one of %q, %q, %q", string(m), FsyncNever, FsyncBatch, FsyncAlways)
}

func (o Options) withDefaults() (Options, error) {
	if err := o.Fsync.Validate(); err != nil {
		return o, err
	}
	if o.Fsync == "" {
		o.Fsync = FsyncBatch
	}
	if o.MaxOpenFiles < 0 {
		return o, fmt.Errorf("max_open_files: must be >= 0, got %d", o.MaxOpenFiles)
	}
	if o.MaxOpenFiles == 0 {
		o.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if o.Rotation != nil {
		if err := o.Rotation.validate(); err != nil {
			return o, err
		}
		r := *o.Rotation
		if r.grace == 0 {
			r.grace = defaultCompressGrace
		}
		o.Rotation = &r
	}
	if o.writeFn == nil {
		o.writeFn = (*os.File).Write
	}
	if o.syncFn == nil {
		o.syncFn = fsutil.Fdatasync
	}
	if o.syncDirFn == nil {
		o.syncDirFn = fsutil.SyncDir
	}
	if o.lockFn == nil {
		o.lockFn = fsutil.Lock
	}
	return o, nil
}
