// Package confcheck refuses config values that the collector's decoder
// (mapstructure) would quietly change: a fraction for an integer key (1.5
// became 1, and a spool's max_size of 0.9 became 0, unbounded), a number
// beyond its range (1e23 wrapped to a negative), and a duration without a
// unit (30 was 30 nanoseconds, so a request timeout of 30 let nothing
// through), and a list of expressions written as one string with a comma
// (split there). Each error names the key. It also names an unknown key by its
// path, where the decoder would name a Go type.
package confcheck

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

// Unmarshal decodes conf into cfg, then refuses the numbers the decoder
// changed: the body of a component Config's Unmarshal method.
func Unmarshal(conf *confmap.Conf, cfg any) error {
	if err := conf.Unmarshal(cfg); err != nil {
		return refusal(conf, cfg, err)
	}
	return errors.Join(Numbers(conf, cfg), splitLists(conf, cfg))
}

// splitLists refuses a list tagged `confcheck:"whole"` (regular
// expressions, where a comma is part of an item: [0-9]{20,40}) written as
// one string with a comma, which the decoder splits into items there. The
// value is not shown: an expression may be written to match a secret.
func splitLists(conf *confmap.Conf, cfg any) error {
	var errs []error
	for _, p := range splitPaths(conf.ToStringMap(), reflect.TypeOf(cfg)) {
		errs = append(errs, fmt.Errorf("%s: one string is split at each comma into several items; "+
			"write the list in YAML, one item each (- item, or [\"item\"])", joinPath(p)))
	}
	return errors.Join(errs...)
}

// Numbers compares every number written in conf with what cfg, decoded
// from it, holds at the same key, list elements included.
func Numbers(conf *confmap.Conf, cfg any) error {
	decoded := confmap.New()
	if err := decoded.Marshal(cfg); err != nil {
		return nil // nothing to compare with; the decoder's own checks stand
	}
	var errs []error
	compare(nil, conf.ToStringMap(), decoded.ToStringMap(), &errs)
	return errors.Join(errs...)
}

// compare walks written and held side by side, into maps by key and into
// lists by index (conf's flat keys stop at a list: a witness's timeout
// of 5 went unchecked), and checks each number written.
func compare(path []string, written, held any, errs *[]error) {
	switch w := written.(type) {
	case map[string]any:
		h, _ := held.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(w)) {
			compare(with(path, k), w[k], h[k], errs)
		}
	case []any:
		h, _ := held.([]any)
		for i, e := range w {
			var he any
			if i < len(h) {
				he = h[i]
			}
			compare(with(path, strconv.Itoa(i)), e, he, errs)
		}
	default:
		if err := checkNumber(written, held); err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %w", joinPath(path), err))
		}
	}
}

func checkNumber(written, held any) error {
	w, isNumber := number(written)
	if !isNumber {
		return nil
	}
	if _, ok := held.(time.Duration); ok {
		if w != 0 {
			return fmt.Errorf("a duration needs a unit, such as 30s or 500ms (got %v, which would be nanoseconds)", written)
		}
		return nil
	}
	v := reflect.ValueOf(held)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if float64(v.Int()) != w {
			return fmt.Errorf("must be a whole number within range (got %v)", written)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if float64(v.Uint()) != w {
			return fmt.Errorf("must be a whole number within range (got %v)", written)
		}
	}
	return nil
}

// number is a number as a config file gives it (YAML ints and floats).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
