package sandboxtrace

import "strings"

// pythonPath is p as the Python session writes a path it was given as a
// pathlib.Path, str(Path(p)): repeated slashes, "." parts and a trailing
// slash dropped, ".." kept, exactly two leading slashes kept (POSIX leaves
// their meaning to the system), and "" as ".".
func pythonPath(p string) string {
	root := ""
	if rest := strings.TrimLeft(p, "/"); len(p)-len(rest) == 2 {
		root = "//"
	} else if rest != p {
		root = "/"
	}
	var b strings.Builder
	b.Grow(len(p))
	b.WriteString(root)
	first := true
	for part := range strings.SplitSeq(p, "/") {
		if part == "" || part == "." {
			continue
		}
		if !first {
			b.WriteByte('/')
		}
		b.WriteString(part)
		first = false
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}
