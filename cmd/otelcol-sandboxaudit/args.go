package main

import (
	"strings"

	"github.com/sandboxaudit/sandboxaudit"
)

// withDefaultConfig adds the embedded default configuration as a --config
// when args hold a --set but no --config. The collector takes --set
// values as configuration sources of their own, replacing the default, so
// `--set exporters::sandboxaudit::file::path=…` alone would run a
// configuration of that one key instead of changing it in the default.
func withDefaultConfig(args []string) []string {
	var hasSet bool
	for _, a := range args {
		switch {
		case a == "--":
			return args
		case isFlag(a, "config"):
			return args
		case isFlag(a, "set"):
			hasSet = true
		}
	}
	if !hasSet {
		return args
	}
	return append(append([]string(nil), args...), "--config="+sandboxaudit.DefaultConfigURI())
}

// isFlag reports whether arg is the flag name, as --name or --name=value
// (or with one dash, which the flag parser also takes).
func isFlag(arg, name string) bool {
	flag := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if flag == arg {
		return false
	}
	return flag == name || strings.HasPrefix(flag, name+"=")
}
