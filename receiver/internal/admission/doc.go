// Package admission decides which request bodies the receiver reads and
// holds, and bounds the memory they take: bodies are read into pooled
// buffers reserved from a byte budget, paced by a minimum rate, and
// decoded one large body at a time.
package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
