// Package plural words a count in English for messages: "1 line",
// "2 lines". Counts in verify and integrity messages are often 1.
package plural // import "github.com/sandboxaudit/sandboxaudit/internal/plural"

import "strconv"

// Integer is any count.
type Integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Count returns n and noun, with an s added unless n is 1.
func Count[N Integer](n N, noun string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Pick(n, noun, noun+"s")
}

// First words the first n of a noun: "first line", "first 2 lines".
func First[N Integer](n N, noun string) string {
	if n == 1 {
		return "first " + noun
	}
	return "first " + Count(n, noun)
}

// Lines words the lines from to to, both counted: "line 5", "lines 5-9".
func Lines[N Integer](from, to N) string {
	if from == to {
		return "line " + strconv.FormatInt(int64(from), 10)
	}
	return "lines " + strconv.FormatInt(int64(from), 10) + "-" + strconv.FormatInt(int64(to), 10)
}

// Pick returns one when n is 1, otherwise many.
func Pick[N Integer](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
