package fsutil

import "os"

// LastLineEnd returns the offset just past the last '\n' in f[0:limit), or
// 0 if there is none. It reads backwards in fixed chunks, so memory stays
// flat however long the last line is.
func LastLineEnd(f *os.File, limit int64) (int64, error) {
	var buf [64 << 10]byte
	for end := limit; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}
