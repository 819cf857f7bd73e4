package filesink

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropPages takes the synced bytes [from, to) of f out of the page cache,
// except the page holding byte to-1: the next append writes into it, and
// repairTail reads that byte, so dropping it would cost a disk read per
// group. The page holding from is whole by now and goes too. Best effort:
// a failure only leaves the pages cached, so it is not reported.
func dropPages(f *os.File, from, to int64) {
	page := int64(os.Getpagesize())
	start := from &^ (page - 1)
	keep := (to - 1) &^ (page - 1)
	if keep <= start {
		return
	}
	_ = unix.Fadvise(int(f.Fd()), start, keep-start, unix.FADV_DONTNEED)
}
