package integrity

// Sidecar names beside an audit file.
const (
	StoreSuffix       = ".tlog"
	CheckpointsSuffix = ".checkpoints"
)

// StorePath is the hash store of the audit file at path.
func StorePath(path string) string { return path + StoreSuffix }

// CheckpointsPath is the checkpoints sidecar of the audit file at path.
func CheckpointsPath(path string) string { return path + CheckpointsSuffix }
