// Package integrity makes an audit file tamper-evident the way Certificate
// Transparency and the Go checksum database do (docs/tamper-evidence.md):
// every line of the file, whoever wrote it, is a leaf of an RFC 6962 Merkle
// tree (golang.org/x/mod/sumdb/tlog); the tree's stored hashes live in a
// sidecar "<file>.tlog"; and signed checkpoints (C2SP tlog-checkpoint in a
// C2SP signed note, Ed25519, golang.org/x/mod/sumdb/note) are appended,
// never rewritten, to a sidecar "<file>.checkpoints".
//
// The audit file itself is never changed beyond what the file sink already
// does (closing a torn last line with '\n').
package integrity
