package proc

import (
	"fmt"
	"os"
)

// Binaries checks that every collector binary exists.
func Binaries(bins ...string) error {
	for _, bin := range bins {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("collector binary: %w", err)
		}
	}
	return nil
}

// Scratch returns dir, or when it is empty a new temporary directory named
// after prefix, and the function that removes what Scratch created.
func Scratch(dir, prefix string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

// Prepare checks the collector binaries and then returns the scratch
// directory as Scratch does: every benchmark starts this way, and a missing
// binary should fail before a directory is made.
func Prepare(dir, prefix string, bins ...string) (string, func(), error) {
	if err := Binaries(bins...); err != nil {
		return "", nil, err
	}
	return Scratch(dir, prefix)
}

// Service is the service section of a benchmark collector's configuration:
// its own metrics off (the same for every collector, and no fixed :8888
// port to collide on), warnings only in its log, and one pipeline.
func Service(signal, receiver, exporter string) string {
	return fmt.Sprintf(`service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    %s:
      receivers: [%s]
      exporters: [%s]
`, signal, receiver, exporter)
}
