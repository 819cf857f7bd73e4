package auditevent

import "strconv"

// appendInt is strconv.AppendInt(dst, v, 10) for a line's seq and version.
// Every event writes both, and a version is nearly always 1: a digit is one
// append, and a longer non-negative number two digits per step into a
// buffer appended once, where strconv's layers of calls cost about 90
// instructions each time.
func appendInt(dst []byte, v int64) []byte {
	if uint64(v) < 10 {
		return append(dst, byte('0'+v))
	}
	if v < 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	var buf [20]byte
	i := len(buf)
	u := uint64(v)
	for u >= 100 {
		r := u % 100
		u /= 100
		i -= 2
		buf[i], buf[i+1] = twoDigits[2*r], twoDigits[2*r+1]
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = twoDigits[2*u], twoDigits[2*u+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
}
