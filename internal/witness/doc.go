// Package witness is a client of the C2SP tlog-witness protocol: it submits
// a log's signed checkpoints to witnesses with add-checkpoint, proves each
// one consistent with the tree size the witness last cosigned, and checks
// the C2SP tlog-cosignature each witness returns (docs/witnesses.md).
package witness
