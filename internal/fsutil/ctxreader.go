package fsutil

import (
	"context"
	"io"
)

// ContextReader returns a reader that fails with ctx's error once ctx is
// done, so that copying a large file stops at shutdown instead of running
// to the end.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	return ctxReader{ctx, r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
