//go:build !linux

package filesink

func writebackStart(fd uintptr, off, n int64) {}

func writebackWait(fd uintptr, off, n int64) {}

func dropCache(fd uintptr, off, n int64) {}
