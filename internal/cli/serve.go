package cli

import (
	"context"
	"fmt"
)

func runServe(ctx context.Context, args []string, s Streams) int {
	_, _ = fmt.Fprintln(s.Stderr, "serve: not built yet")
	return exitUsage
}
