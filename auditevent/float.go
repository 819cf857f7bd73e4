package auditevent

import (
	"math"
	"strconv"
)

// appendPyFloat appends f spelled as Python's repr(float) (which json.dumps
// uses): the shortest digits that round-trip, positional notation with at
// least one fractional digit when the decimal exponent is in [-4, 16), and
// otherwise d[.ddd]e±XX with at least two exponent digits.
//
// Non-finite values have no JSON spelling (Python would write NaN or
// Infinity, which no JSON parser accepts); they are written as null. The
// decoder never produces them; a Go producer that does gets a line that
// fails validation rather than one that is not JSON.
func appendPyFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if out, ok := appendMicroFloat(dst, f); ok {
		return out
	}
	return appendReprFloat(dst, f)
}

// appendReprFloat is appendPyFloat for any finite f, from strconv's
// shortest digits.
func appendReprFloat(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	// 'e' with shortest precision gives "-d.ddde±XX" or "de±XX".
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	// Split mantissa digits and exponent.
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp := 0
	expNeg := e[i+1] == '-'
	for j := i + 2; j < len(e); j++ {
		exp = exp*10 + int(e[j]-'0')
	}
	if expNeg {
		exp = -exp
	}
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case exp >= 16 || exp < -4:
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, int64(exp), 10)
	case exp >= 0:
		intDigits := exp + 1
		if nd <= intDigits {
			dst = append(dst, digits[:nd]...)
			for k := nd; k < intDigits; k++ {
				dst = append(dst, '0')
			}
			dst = append(dst, '.', '0')
		} else {
			dst = append(dst, digits[:intDigits]...)
			dst = append(dst, '.')
			dst = append(dst, digits[intDigits:nd]...)
		}
	default: // -4 <= exp < 0
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:nd]...)
	}
	return dst
}

// appendMicroFloat is appendPyFloat's fast path for the usual duration_ms:
// a value that is exactly the nearest double to some n/10^6 with at most 15
// digits in n, and at least 10^-4. Such a decimal is repr's digits (a
// decimal of at most 15 significant digits is the only one of that length
// naming its double, DBL_DIG), in fixed notation; it is written without
// strconv's shortest-digit search. ok is false for every other value.
func appendMicroFloat(dst []byte, f float64) (out []byte, ok bool) {
	const scale = 1e6
	n := math.Abs(f) * scale
	if !(n >= 100 && n < 1e15) || n != math.Trunc(n) || n/scale != math.Abs(f) {
		return dst, false
	}
	if f < 0 {
		dst = append(dst, '-')
	}
	whole, frac := uint64(n)/scale, uint64(n)%scale
	dst = appendInt(dst, int64(whole)) // below 10^9
	if frac == 0 {
		return append(dst, '.', '0'), true
	}
	// The six digits in three pairs, then the trailing zeros cut: frac is
	// not zero, so a digit other than '0' ends the cut.
	digits := [7]byte{'.'}
	for k, p := range [3]uint64{frac / 10_000, frac / 100 % 100, frac % 100} {
		digits[1+2*k], digits[2+2*k] = twoDigits[2*p], twoDigits[2*p+1]
	}
	end := len(digits)
	for digits[end-1] == '0' {
		end--
	}
	return append(dst, digits[:end]...), true
}
