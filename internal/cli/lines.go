package cli

// maxLineBytes bounds one line held in memory. Exec output is capped by the
// payload policy, so a real event is far smaller; the bound only protects the
// tool from a file that is not JSONL at all.
const maxLineBytes = 64 << 20
