package integrity

import "golang.org/x/sys/unix"

// noFollow keeps every open of a sidecar or the audit file from following a
// symlink planted in its place.
const noFollow = unix.O_NOFOLLOW
