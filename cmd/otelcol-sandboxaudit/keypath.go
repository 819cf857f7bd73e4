package main

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/otelcol"
)

// errorText is err as main prints it, escaped (shownError): one line per
// error, each under the path of every error that wraps it (keyLines),
// with the keys of squashed sections named as a configuration writes them. The collector's
// validation names a squashed field by its Go name in lower case
// ("exporters::sandboxaudit::http: clientconfig::tls" for http::tls,
// "timeoutconfig" for timeout), a key no configuration holds; those
// segments are taken out. configtls validates its squashed Config twice,
// so a line that named a squashed field and then only repeats an earlier
// one, or its end, is dropped. Any other line stays.
func errorText(err error, factories otelcol.Factories) string {
	names := squashedNames(factories)
	var lines []string
	for raw := range strings.SplitSeq(strings.Join(keyLines(err), "\n"), "\n") {
		line := withoutSquashed(raw, names)
		repeated := line != raw && slices.ContainsFunc(lines, func(earlier string) bool {
			return earlier == line || strings.HasSuffix(earlier, " "+line)
		})
		if !repeated {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// keyLines is err's text as one line per joined error, each under the
// paths of the errors that wrap it. The collector prefixes a section's
// error with its path once, so the second error of a section's
// errors.Join was a line naming no component. Of the wrapping above the
// first join, what comes before the first text naming a component
// ("invalid configuration: ", "cannot start pipelines: ") is said once,
// on the first line.
func keyLines(err error) []string {
	var once, each string
	for {
		head, inner := splitHead(err)
		if inner == nil {
			break
		}
		if each == "" && !namesComponent(head) {
			once += shownHead(err, head)
		} else {
			each += shownHead(err, head)
		}
		err = inner
	}
	lines := pathLines(err, each)
	lines[0] = once + lines[0]
	return lines
}

// namesComponent reports whether an error's head names a component: a
// configuration path ("receivers::sandboxaudit: ") or a quoted id
// (`failed to start "sandboxaudit" exporter: `).
func namesComponent(head string) bool {
	return strings.Contains(head, "::") || strings.Contains(head, `"`)
}

// pathLines is err's text under prefix, one element per joined error.
func pathLines(err error, prefix string) []string {
	if errs := joinedErrors(err); len(errs) > 0 {
		var lines []string
		for _, e := range errs {
			lines = append(lines, pathLines(e, prefix)...)
		}
		return lines
	}
	if head, inner := splitHead(err); inner != nil {
		return pathLines(inner, prefix+shownHead(err, head))
	}
	return []string{prefix + shownError(err)}
}

// joinedErrors are the errors err joins when its text is only theirs, a
// line each (errors.Join) or "; " between them (multierr, which the
// collector combines a start error and its shutdown's with); nil for any
// other error, such as one wrapping two with text around them
// ("…: %w; close it with a newline: %w"), whose text would be lost.
func joinedErrors(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	errs := joined.Unwrap()
	texts := errorTexts(errs)
	if text := err.Error(); text != strings.Join(texts, "\n") && text != strings.Join(texts, "; ") {
		return nil
	}
	return errs
}

// splitHead splits an error that only puts text before the error it
// wraps ("path: %w") into that text and the wrapped error; inner is nil
// for any other error.
func splitHead(err error) (head string, inner error) {
	inner = errors.Unwrap(err)
	if inner == nil {
		return "", nil
	}
	head, ok := strings.CutSuffix(err.Error(), inner.Error())
	if !ok || head != "" && !strings.HasSuffix(head, ": ") {
		return "", nil
	}
	return head, inner
}

// withoutSquashed is line without the path segments that name squashed
// fields, one name at a time so that nested ones all go.
func withoutSquashed(line string, names []string) string {
	for _, name := range names {
		line = strings.NewReplacer(
			"::"+name+"::", "::", "::"+name+": ", ": ",
			": "+name+"::", ": ", ": "+name+": ", ": ",
		).Replace(line)
		line = strings.TrimPrefix(line, name+"::")
	}
	return line
}

// squashedNames are the names the collector's validation gives the
// squashed fields of the distribution's component configurations (their
// Go names in lower case), less any that is also a key somewhere.
func squashedNames(factories otelcol.Factories) []string {
	squashed, keys := map[string]bool{}, map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			switch {
			case name != "":
				keys[name] = true
			case f.IsExported() && slices.Contains(strings.Split(opts, ","), "squash"):
				squashed[strings.ToLower(f.Name)] = true
			}
			walk(f.Type)
		}
	}
	for _, f := range allFactories(factories) {
		walk(reflect.TypeOf(f.CreateDefaultConfig()))
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(squashed)) {
		if !keys[name] {
			out = append(out, name)
		}
	}
	return out
}

func allFactories(f otelcol.Factories) []component.Factory {
	var out []component.Factory
	for _, r := range f.Receivers {
		out = append(out, r)
	}
	for _, p := range f.Processors {
		out = append(out, p)
	}
	for _, e := range f.Exporters {
		out = append(out, e)
	}
	for _, e := range f.Extensions {
		out = append(out, e)
	}
	for _, c := range f.Connectors {
		out = append(out, c)
	}
	return out
}
