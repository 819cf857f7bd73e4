package metadatatest

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// CheckTelemetry compares metadata.yaml with the metrics collected after the
// test recorded every one of them, both ways: each declared metric was
// recorded with the declared name, unit, description, kind and attributes
// (values within the enum, when there is one), and each recorded metric of
// scope is declared. Every message says what to add where.
func CheckTelemetry(t testing.TB, md Metadata, rm metricdata.ResourceMetrics, scope string) {
	t.Helper()
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			continue
		}
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	for _, name := range sortedKeys(md.Telemetry.Metrics) {
		want := md.Telemetry.Metrics[name]
		inst := InstrumentName(name)
		m, ok := got[inst]
		if !ok {
			t.Errorf("metadata.yaml declares telemetry.metrics.%s but no %s was recorded: register it in "+
				"NewTelemetryBuilder (internal/metadata/generated_telemetry.go, field %s) and record it in "+
				"the test's table of recordings", name, inst, FieldName(name))
			continue
		}
		checkMetric(t, md, name, want, m)
	}
	for _, inst := range sortedKeys(got) {
		name, ok := strings.CutPrefix(inst, "otelcol_")
		if _, declared := md.Telemetry.Metrics[name]; !ok || !declared {
			m := got[inst]
			t.Errorf("%s is recorded but metadata.yaml does not declare it: add telemetry.metrics.%s with "+
				"enabled: true, stability, description %q (without the stability suffix), unit %q, "+
				"its sum or gauge section and attributes %v", inst, name, m.Description, m.Unit, attributeKeys(m))
		}
	}
	checkAttributesUsed(t, md)
}

func checkMetric(t testing.TB, md Metadata, name string, want Metric, m metricdata.Metrics) {
	t.Helper()
	if !want.Enabled {
		t.Errorf("telemetry.metrics.%s: enabled must be true; the code records it always", name)
	}
	if m.Unit != want.Unit {
		t.Errorf("%s: code registers unit %q, metadata.yaml says %q", m.Name, m.Unit, want.Unit)
	}
	if d := want.InstrumentDescription(); m.Description != d {
		t.Errorf("%s: code registers description %q, metadata.yaml gives %q", m.Name, m.Description, d)
	}
	if got := kindOf(m); got != want.Kind() {
		t.Errorf("%s: code registers a %s, metadata.yaml declares a %s", m.Name, got, want.Kind())
	}
	wantKeys := map[string]Attribute{}
	for _, id := range want.Attributes {
		a, ok := md.Attributes[id]
		if !ok {
			t.Errorf("telemetry.metrics.%s lists attribute %q: declare it under attributes", name, id)
			continue
		}
		wantKeys[a.Key(id)] = a
	}
	for _, attrs := range dataPointAttributes(m) {
		keys := make([]string, 0, len(attrs))
		for k, v := range attrs {
			keys = append(keys, k)
			a, ok := wantKeys[k]
			if !ok {
				t.Errorf("%s is recorded with attribute %q: add it to attributes and to telemetry.metrics.%s.attributes", m.Name, k, name)
				continue
			}
			if len(a.Enum) > 0 && !slices.Contains(a.Enum, v) {
				t.Errorf("%s is recorded with %s=%q: add %q to the enum of its attribute", m.Name, k, v, v)
			}
		}
		for k := range wantKeys {
			if _, ok := attrs[k]; !ok {
				t.Errorf("%s is recorded without attribute %q that metadata.yaml lists for it (keys recorded: %v)", m.Name, k, sorted(keys))
			}
		}
	}
}

// checkAttributesUsed: mdatagen refuses attributes no metric uses.
func checkAttributesUsed(t testing.TB, md Metadata) {
	t.Helper()
	used := map[string]bool{}
	for _, m := range md.Telemetry.Metrics {
		for _, a := range m.Attributes {
			used[a] = true
		}
	}
	for _, id := range sortedKeys(md.Attributes) {
		if !used[id] {
			t.Errorf("attributes.%s is declared but no metric lists it", id)
		}
	}
}

// CheckFields compares the exported fields of a TelemetryBuilder with the
// field names mdatagen would derive from metadata.yaml, both ways, and the
// Register...Callback method of each async metric.
func CheckFields(t testing.TB, md Metadata, builder any) {
	t.Helper()
	v := reflect.TypeOf(builder)
	st := v
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	fields := map[string]bool{}
	for i := 0; i < st.NumField(); i++ {
		if f := st.Field(i); f.IsExported() {
			fields[f.Name] = true
		}
	}
	want := map[string]string{}
	for name, m := range md.Telemetry.Metrics {
		f := FieldName(name)
		want[f] = name
		if !fields[f] {
			t.Errorf("TelemetryBuilder has no field %s for telemetry.metrics.%s: name the field as mdatagen derives it", f, name)
		}
		async := (m.Sum != nil && m.Sum.Async) || (m.Gauge != nil && m.Gauge.Async)
		if _, ok := v.MethodByName("Register" + f + "Callback"); async && !ok {
			t.Errorf("TelemetryBuilder has no method Register%sCallback for async telemetry.metrics.%s", f, name)
		}
	}
	for _, f := range sortedKeys(fields) {
		if _, ok := want[f]; !ok {
			t.Errorf("TelemetryBuilder field %s matches no metric of metadata.yaml: declare telemetry.metrics.<name> with FieldName(name) == %s, or rename the field", f, f)
		}
	}
}

func kindOf(m metricdata.Metrics) string {
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if d.IsMonotonic {
			return "monotonic int sum"
		}
		return "int up-down sum"
	case metricdata.Gauge[int64]:
		return "int gauge"
	}
	return fmt.Sprintf("%T", m.Data)
}

// dataPointAttributes returns each data point's attributes as key to value
// text.
func dataPointAttributes(m metricdata.Metrics) []map[string]string {
	var out []map[string]string
	add := func(kvs []attrKV) {
		p := map[string]string{}
		for _, kv := range kvs {
			p[kv.k] = kv.v
		}
		out = append(out, p)
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			add(kvsOf(dp.Attributes.ToSlice()))
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			add(kvsOf(dp.Attributes.ToSlice()))
		}
	}
	return out
}

func attributeKeys(m metricdata.Metrics) []string {
	seen := map[string]bool{}
	for _, p := range dataPointAttributes(m) {
		for k := range p {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

type attrKV struct{ k, v string }

func kvsOf(kvs []attribute.KeyValue) []attrKV {
	out := make([]attrKV, len(kvs))
	for i, kv := range kvs {
		out[i] = attrKV{string(kv.Key), kv.Value.String()}
	}
	return out
}

// Stability is the form CheckStatus takes a factory's levels in: signal
// name to the lower-case level name metadata.yaml uses.
func Stability(levels map[string]component.StabilityLevel) map[string]string {
	out := make(map[string]string, len(levels))
	for signal, level := range levels {
		out[signal] = strings.ToLower(level.String())
	}
	return out
}

// CheckStatus compares the status section with the component's type and
// the stability of each signal its factory reports (signal name to level,
// e.g. "traces": "alpha").
func CheckStatus(t testing.TB, md Metadata, typ string, stability map[string]string) {
	t.Helper()
	if typ != md.Type {
		t.Errorf("metadata.Type is %q, metadata.yaml type is %q", typ, md.Type)
	}
	declared := map[string]string{}
	for level, signals := range md.Status.Stability {
		for _, s := range signals {
			declared[s] = level
		}
	}
	for _, s := range sortedKeys(stability) {
		if declared[s] != stability[s] {
			t.Errorf("the factory gives %s stability %q, metadata.yaml status.stability says %q", s, stability[s], declared[s])
		}
	}
	for _, s := range sortedKeys(declared) {
		if _, ok := stability[s]; !ok {
			t.Errorf("metadata.yaml declares signal %s (%s) that the factory does not create", s, declared[s])
		}
	}
}
