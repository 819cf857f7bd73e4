package trail

import "encoding/binary"

// keyFilterBits is a keyFilter's size: 1 MiB, about five false positives
// in a hundred at a million keys.
const keyFilterBits = 1 << 23

// keyFilter is a Bloom filter of operation keys: has never misses a key
// added, and says yes for another in a few cases in a hundred, in memory
// that does not grow with the keys. A false yes costs a little memory or
// disk, never a wrong result.
type keyFilter struct {
	bits []uint64 // nil until the first add
}

func (f *keyFilter) add(k opKey) {
	if f.bits == nil {
		f.bits = make([]uint64, keyFilterBits/64)
	}
	h1, h2 := keyHashes(k)
	for i := range uint64(2) {
		b := (h1 + i*h2) % keyFilterBits
		f.bits[b/64] |= 1 << (b % 64)
	}
}

func (f *keyFilter) has(k opKey) bool {
	if f.bits == nil {
		return false
	}
	h1, h2 := keyHashes(k)
	for i := range uint64(2) {
		b := (h1 + i*h2) % keyFilterBits
		if f.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// keyHashes are two independent hashes of k (double hashing).
func keyHashes(k opKey) (uint64, uint64) {
	// spanHash is a seeded hash already; the session is folded in once.
	h := mix64(k.spanHash ^ binary.LittleEndian.Uint64(k.session[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(k.session[8:]))
	return h, h>>32 | h<<32 | 1
}

// mix64 is SplitMix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
