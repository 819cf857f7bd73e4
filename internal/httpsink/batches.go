package httpsink

import "bytes"

// nextBatch returns the first request body of lines: up to maxLines whole
// lines and maxBytes bytes (at least one line, however long), plus the
// number of lines in it. lines must be whole "\n"-terminated lines; a last
// line without "\n" is taken as it is.
func nextBatch(lines []byte, maxLines, maxBytes int) (batch []byte, n int) {
	end := 0
	for end < len(lines) && n < maxLines {
		i := bytes.IndexByte(lines[end:], '\n')
		next := len(lines)
		if i >= 0 {
			next = end + i + 1
		}
		if n > 0 && next > maxBytes {
			break
		}
		end, n = next, n+1
	}
	return lines[:end], n
}

// countLines counts the lines of lines ("\n"-terminated; a trailing
// fragment counts as one).
func countLines(lines []byte) int {
	n := bytes.Count(lines, []byte{'\n'})
	if len(lines) > 0 && lines[len(lines)-1] != '\n' {
		n++
	}
	return n
}
