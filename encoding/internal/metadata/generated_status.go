// Written by hand in the shape mdatagen v0.165.0 generates from
// ../../metadata.yaml (mdatagen cannot be installed here); keep the two in
// step.

// Package metadata holds the type, scope name, stability and telemetry of
// the sandboxaudit_encoding extension, as declared in metadata.yaml.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	Type      = component.MustNewType("sandboxaudit_encoding")
	ScopeName = "github.com/sandboxaudit/sandboxaudit/encoding"
)

const (
	ExtensionStability = component.StabilityLevelAlpha
)
