// Hand-written in the layout mdatagen generates from ../../metadata.yaml
// (mdatagen cannot be installed in this build); keep the two in step.

// Package metadata holds the build information of the guarded kafka
// receiver component.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	Type      = component.MustNewType("kafka")
	ScopeName = "github.com/sandboxaudit/sandboxaudit/kafkaguardreceiver"
)

const (
	TracesStability   = component.StabilityLevelBeta
	LogsStability     = component.StabilityLevelBeta
	MetricsStability  = component.StabilityLevelBeta
	ProfilesStability = component.StabilityLevelDevelopment
)
