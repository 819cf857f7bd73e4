// Hand-written in the layout mdatagen generates from ../../metadata.yaml
// (mdatagen cannot be installed in this build); keep the two in step.

// Package metadata holds the build information of the sandboxaudit
// processor component.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	Type      = component.MustNewType("sandboxaudit")
	ScopeName = "github.com/sandboxaudit/sandboxaudit/processor"
)

const (
	TracesStability = component.StabilityLevelAlpha
	LogsStability   = component.StabilityLevelAlpha
)
