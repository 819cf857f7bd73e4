// Written by hand as mdatagen v0.165.0 generates it (mdatagen cannot be
// installed here).

package sandboxauditexporter

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
