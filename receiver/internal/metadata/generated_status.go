// Written by hand in the shape mdatagen v0.165.0 generates from
// metadata.yaml (mdatagen cannot be installed here). TestMetadataMatchesCode
// keeps the two in step. The file name is mdatagen's, so that a real
// mdatagen run replaces it in place.

// Package metadata holds the telemetry and build information of the
// receiver/sandboxaudit component, as mdatagen would generate it from
// metadata.yaml.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	Type      = component.MustNewType("sandboxaudit")
	ScopeName = "github.com/sandboxaudit/sandboxaudit/receiver"
)

const (
	TracesStability = component.StabilityLevelAlpha
	LogsStability   = component.StabilityLevelAlpha
)
