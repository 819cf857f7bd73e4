// Written as mdatagen generates it (mdatagen cannot be installed in this
// build): every test of the package must leave no goroutine behind.

package kafkaguardreceiver

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
