package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// errFlagRepeated is returned for a one-value flag given twice.
var errFlagRepeated = errors.New("flag given more than once")

// parseInterspersed parses flags that may come after positional arguments
// ("verify a.jsonl --allow-open"), which flag.FlagSet alone does not allow.
// Everything after a "--" is positional. A flag that takes one value,
// given twice, is refused (see repeatedFlag).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	rest, err := parseAll(fs, args)
	if err != nil {
		return nil, err
	}
	if name := repeatedFlag(fs, args); name != "" {
		// The values are not shown: an endpoint may hold a password.
		_, _ = fmt.Fprintf(fs.Output(), "--%s given more than once: give it once\n", name)
		return nil, errFlagRepeated
	}
	return rest, nil
}

// repeatedFlag returns the first flag of the flag package's own kinds
// (string, bool, int, duration: one value each) that args give twice,
// reading them as fs.Parse does; "" if none. The flag package would keep
// the last value silently. The command's own kinds (--header, --witness)
// collect every value.
func repeatedFlag(fs *flag.FlagSet, args []string) string {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && (!ok || !b.IsBoolFlag()) {
			i++ // its value, whatever it looks like
		}
		if _, one := f.Value.(flag.Getter); !one {
			continue
		}
		if seen[name] {
			return name
		}
		seen[name] = true
	}
	return ""
}

// parseAll parses args, flags and positional arguments in any order.
func parseAll(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "usage: sandboxaudit %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseCommand parses args like parseInterspersed and checks them with
// complete (the positional count, the required flags). When it returns
// false the command should exit with the status it gives; the usage has
// been printed if the arguments were incomplete.
func parseCommand(fs *flag.FlagSet, args []string, complete func(rest []string) bool) ([]string, int, bool) {
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, flagStatus(err), false
	}
	if !complete(rest) {
		fs.Usage()
		return nil, exitUsage, false
	}
	return rest, exitOK, true
}

// isSet reports whether the command line gave the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// flagStatus maps a flag parsing error to an exit status: asking for help is
// not a failure.
func flagStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// headerFlag collects repeated --header K=V values. Its String never shows
// the values: they are often credentials and flag errors print String.
type headerFlag struct {
	keys   []string
	values map[string]string
	// malformed counts values without "=". Set does not fail on them because
	// the flag package would echo the value (perhaps a token) in its error.
	malformed int
}

func (h *headerFlag) String() string {
	if h == nil || len(h.keys) == 0 {
		return ""
	}
	return strings.Join(h.keys, ",") + " (values hidden)"
}

func (h *headerFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		h.malformed++
		return nil
	}
	if h.values == nil {
		h.values = map[string]string{}
	}
	if _, dup := h.values[k]; !dup {
		h.keys = append(h.keys, k)
	}
	h.values[k] = v
	return nil
}

// check reports malformed values after parsing, without showing them.
func (h *headerFlag) check() error {
	if h.malformed > 0 {
		return fmt.Errorf("--header: %s not in KEY=VALUE form (values not shown)", plural.Count(h.malformed, "value"))
	}
	return nil
}

// durationFlag is a time.Duration flag whose error says what a duration
// looks like: the flag package's says only "parse error". Its usage text
// must hold `duration`, back-quoted, for -h to show the kind.
type durationFlag struct{ d *time.Duration }

func durationVar(fs *flag.FlagSet, d *time.Duration, name string, value time.Duration, usage string) {
	*d = value
	fs.Var(durationFlag{d}, name, usage)
}

func (f durationFlag) String() string {
	if f.d == nil {
		return time.Duration(0).String()
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("a duration needs a unit, like 10s, 2m or 1h30m")
	}
	*f.d = d
	return nil
}

// Get makes it a flag.Getter: one value, refused when given twice.
func (f durationFlag) Get() any { return *f.d }
