// Package startupline prints one plain line once the collector runs: where
// the audit lines go, each intake address and where self-metrics are
// served. The collector's own logs spread these over several structured
// entries; a person starting it wants them in one place.
package startupline

import (
	"context"
	"fmt"
	"io"
	"sync"

	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// readyMessage is what the collector's service logs, at Info, once every
// component has started: the line is printed then, not while the
// configuration is only being validated or printed.
const readyMessage = "Everything is ready. Begin running and processing data."

// Printer describes the configuration the collector resolved last and
// prints that description when the collector reports it is running.
type Printer struct {
	out io.Writer

	mu   sync.Mutex
	line string // "" once printed, until the next configuration
}

// New returns a Printer that writes to out.
func New(out io.Writer) *Printer {
	return &Printer{out: out}
}

// ConverterFactory returns a configuration converter that changes nothing:
// it describes each resolved configuration, defaults and ${...}
// substitutions applied.
func (p *Printer) ConverterFactory() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter {
		return converter{p}
	})
}

type converter struct{ p *Printer }

func (c converter) Convert(_ context.Context, conf *confmap.Conf) error {
	line := Describe(conf)
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.line = line
	return nil
}

// LoggingOption returns the zap option that prints the line when the
// collector logs that it runs; a collector logging above Info prints none.
func (p *Printer) LoggingOption() zap.Option {
	return zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == readyMessage {
			p.print()
		}
		return nil
	})
}

func (p *Printer) print() {
	p.mu.Lock()
	line := p.line
	p.line = ""
	p.mu.Unlock()
	if line != "" {
		_, _ = fmt.Fprintln(p.out, line)
	}
}
