package roundtrip

import (
	"os"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/bench/rawpost"
)

func TestMain(m *testing.M) {
	rawpost.MaybeServe() // the bare server of bare-proc-raw, in a child process
	os.Exit(m.Run())
}
