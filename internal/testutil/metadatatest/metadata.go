// Package metadatatest checks a component's metadata.yaml (mdatagen's
// schema) against the code written in mdatagen's shape: the instruments
// NewTelemetryBuilder registers, the values the component records, the
// TelemetryBuilder field names and the status constants. mdatagen cannot be
// installed here, so these checks are what keeps the hand-written files
// honest. Only tests import it.
package metadatatest // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"

import (
	"fmt"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Metadata is the part of a metadata.yaml the checks read.
type Metadata struct {
	Type   string `yaml:"type"`
	Status struct {
		Class     string              `yaml:"class"`
		Stability map[string][]string `yaml:"stability"`
	} `yaml:"status"`
	Attributes map[string]Attribute `yaml:"attributes"`
	Telemetry  struct {
		Metrics map[string]Metric `yaml:"metrics"`
	} `yaml:"telemetry"`
}

// Attribute is one entry of the attributes section.
type Attribute struct {
	Description  string   `yaml:"description"`
	NameOverride string   `yaml:"name_override"`
	Type         string   `yaml:"type"`
	Enum         []string `yaml:"enum"`
}

// Key is the attribute's name on data points.
func (a Attribute) Key(id string) string {
	if a.NameOverride != "" {
		return a.NameOverride
	}
	return id
}

// Metric is one entry of telemetry.metrics.
type Metric struct {
	Enabled     bool     `yaml:"enabled"`
	Stability   string   `yaml:"stability"`
	Description string   `yaml:"description"`
	Unit        string   `yaml:"unit"`
	Attributes  []string `yaml:"attributes"`
	Sum         *struct {
		ValueType string `yaml:"value_type"`
		Monotonic bool   `yaml:"monotonic"`
		Async     bool   `yaml:"async"`
	} `yaml:"sum"`
	Gauge *struct {
		ValueType string `yaml:"value_type"`
		Async     bool   `yaml:"async"`
	} `yaml:"gauge"`
}

// Load reads a metadata.yaml.
func Load(path string) (Metadata, error) {
	var md Metadata
	b, err := os.ReadFile(path)
	if err != nil {
		return md, err
	}
	if err := yaml.Unmarshal(b, &md); err != nil {
		return md, fmt.Errorf("%s: %w", path, err)
	}
	return md, nil
}

// MustLoad is Load for a test: a file it cannot read fails t.
func MustLoad(t testing.TB, path string) Metadata {
	t.Helper()
	md, err := Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return md
}

// InstrumentName is the name mdatagen gives the instrument of a metric.
func InstrumentName(metric string) string { return "otelcol_" + metric }

// FieldName is the TelemetryBuilder field mdatagen derives from a metric
// name: each "_" or "." separated part capitalized.
func FieldName(metric string) string {
	out := make([]byte, 0, len(metric))
	upper := true
	for i := 0; i < len(metric); i++ {
		c := metric[i]
		if c == '_' || c == '.' {
			upper = true
			continue
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = false
		out = append(out, c)
	}
	return string(out)
}

// InstrumentDescription is the instrument description mdatagen writes: the metric's
// description followed by its stability, e.g. "... [Alpha]".
func (m Metric) InstrumentDescription() string {
	return m.Description + " [" + capitalize(m.Stability) + "]"
}

// Kind is how the metric is declared, in the words of the check's messages.
func (m Metric) Kind() string {
	switch {
	case m.Sum != nil && m.Sum.Monotonic:
		return "monotonic int sum"
	case m.Sum != nil:
		return "int up-down sum"
	case m.Gauge != nil:
		return "int gauge"
	}
	return "no sum or gauge"
}
