package cli

// seqSet records which seqs a session has used. Seqs are dense small
// integers in practice, so a bitmap in 4096-seq chunks costs about one bit
// per event instead of a map entry's few dozen bytes, which keeps verify's
// memory proportional to sessions, not to lines.
type seqSet struct {
	chunks map[int64]*[64]uint64
}

const seqChunkBits = 4096

// add records seq and reports whether it was new.
func (s *seqSet) add(seq int64) bool {
	if s.chunks == nil {
		s.chunks = map[int64]*[64]uint64{}
	}
	// Floor division so negative seqs land in their own chunks.
	key := seq / seqChunkBits
	off := seq % seqChunkBits
	if off < 0 {
		key--
		off += seqChunkBits
	}
	c := s.chunks[key]
	if c == nil {
		c = new([64]uint64)
		s.chunks[key] = c
	}
	word, bit := off/64, uint64(1)<<(off%64)
	if c[word]&bit != 0 {
		return false
	}
	c[word] |= bit
	return true
}
