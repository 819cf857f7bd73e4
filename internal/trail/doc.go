// Package trail reads an audit trail for people: files, a trail's directory
// of rotated and compressed segments, or standard input, streamed and never
// changed. Operations come out in session and seq order, each start with its
// finish, through an external sort whose memory is bounded by
// Options.RunBytes plus the operations in flight (docs/investigate.md,
// "Speed and memory").
package trail
