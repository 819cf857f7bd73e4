package sandboxtrace

import (
	"os"
	"os/exec"
	"testing"
)

// The package builds wherever Go runs: the peek at an idle connection has
// a unix file and a fallback, and a flag missing from one unix (aix has
// no MSG_DONTWAIT) must not break its build. Built, not run: a real go
// build per target, from the build cache after the first.
func TestBuildsForOtherSystems(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds the package")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, target := range [][2]string{{"aix", "ppc64"}, {"windows", "amd64"}} {
		cmd := exec.Command(gobin, "build", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOOS="+target[0], "GOARCH="+target[1], "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s: %v\n%s", target[0], target[1], err, out)
		}
	}
}
