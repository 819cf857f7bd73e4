package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The lines outside a segment checked alone are worded for their count:
// a range of one line is that line.
func TestNotReadWordsEachRange(t *testing.T) {
	for _, c := range []struct {
		before, end, newest int64
		want                string
	}{
		{0, 8, 8, ""},
		{48, 56, 68, "; lines 1-48 and 57-68 of the log are in segments not read"},
		{1, 5, 5, "; line 1 of the log is in a segment not read"},
		{0, 5, 6, "; line 6 of the log is in a segment not read"},
		{1, 5, 6, "; lines 1 and 6 of the log are in segments not read"},
		{1, 5, 9, "; lines 1 and 6-9 of the log are in segments not read"},
	} {
		assert.Equal(t, c.want, notRead(c.before, c.end, c.newest), "%+v", c)
	}
}

// A segment alone in a cosigned checkpoint of one line says "1 line".
func TestAloneWitnessedMsgCountsLines(t *testing.T) {
	for _, c := range []struct {
		lines int64
		want  string
	}{
		{1, "s: witness: the segment is in a checkpoint of 1 line that 1/1 witnesses cosigned"},
		{80, "s: witness: the segment is in a checkpoint of 80 lines that 2/3 witnesses cosigned"},
	} {
		quorum := "1/1"
		if c.lines != 1 {
			quorum = "2/3"
		}
		assert.Equal(t, c.want, aloneWitnessedMsg("s", c.lines, quorum))
	}
}
