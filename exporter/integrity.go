package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// startIntegrity builds the sealer for the file sink and seals what is on
// disk already: the lines written since the last checkpoint before a crash,
// or by another writer while the collector was down. For a plain path a
// file that disagrees with its sidecars stops the start; for a templated
// path each such file is logged and left unsealed, the others go on.
func (e *auditExporter) startIntegrity(ctx context.Context, host component.Host, fc *FileConfig, ic *IntegrityConfig) (*integrity.Sealer, error) {
	keys, err := integrity.LoadSigningKey(ic.SigningKeyFile)
	if err != nil {
		return nil, fmt.Errorf("file: integrity: signing_key_file: %w", err)
	}
	base, err := filesink.BaseDir(fc.Path)
	if err != nil {
		return nil, fmt.Errorf("file: path: %w", err)
	}
	set := integrity.Settings{
		Keys:       keys,
		Interval:   ic.interval(),
		Logger:     e.logger,
		Observer:   sealObserver{t: e.telemetry},
		OriginBase: base,
	}
	if len(ic.Witnesses) > 0 {
		pool, err := e.witnessPool(ctx, host, ic)
		if err != nil {
			return nil, err
		}
		set.Witnesses = pool
	}
	sealer, err := integrity.NewSealer(set)
	if err != nil {
		return nil, err
	}
	if err := sealAtStart(ctx, sealer, base, fc.Path, ic.retiredWitnessKey()); err != nil {
		// Nothing was written through it: Close only lets its owner
		// locks go, so a collector started again can take them.
		return nil, errors.Join(err, sealer.Close(ctx))
	}
	sealer.Start()
	return sealer, nil
}

// sealAtStart seals the plain path, which a second sealer (another
// collector, or another exporter of this one, on the same file) cannot
// take, or the files a templated path gave before. refuse is checked on
// each file first: its error stops the start.
func sealAtStart(ctx context.Context, sealer *integrity.Sealer, base, path string, refuse func(file string) error) error {
	if strings.Contains(path, "{") {
		return sealExisting(ctx, sealer, base, path, refuse)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("file: path: %w", err)
	}
	if err := refuse(abs); err != nil {
		return err
	}
	if err := sealer.SealAtStart(ctx, abs); err != nil {
		return fmt.Errorf("file: integrity: %w", err)
	}
	sealer.Watch(abs)
	return nil
}

// sealExisting seals every audit file below base (absolute, so that each
// file is known by the path the file sink reports) that has a hash store
// and is a file the template gives. A rotated segment, or any other file
// with a store, is left as it is: sealing it would sign lines appended to
// it while the collector was down, which verify reports as unsealed.
// WalkDir does not follow symlinks. Only a cancelled start, or refuse's
// error for a file, is an error.
func sealExisting(ctx context.Context, s *integrity.Sealer, base, template string, refuse func(file string) error) error {
	given, err := filesink.Matcher(template)
	if err != nil {
		return fmt.Errorf("file: path: %w", err)
	}
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable part of the tree: its files are sealed when next written
		}
		if !d.Type().IsRegular() {
			return ctx.Err()
		}
		// A file the template gives is sealed, or refused when it holds
		// lines without any history (SealAtStart); so is the file of a
		// hash store whose file is gone.
		file, isStore := strings.CutSuffix(p, integrity.StoreSuffix)
		if !isStore {
			file = p
		}
		if given(file) && (isStore || !holdsStore(file)) {
			if err := refuse(file); err != nil {
				return err
			}
			_ = s.SealAtStart(ctx, file) // logged by the sealer
		}
		return ctx.Err()
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// holdsStore reports whether file has a hash store (the walk seals it
// when it reaches the store).
func holdsStore(file string) bool {
	_, err := os.Lstat(integrity.StorePath(file))
	return err == nil
}

// sealObserver feeds the sealer's counts into the metrics.
type sealObserver struct{ t *telemetry }

func (o sealObserver) LinesSealed(ctx context.Context, n int64) {
	o.t.tb.SandboxauditExporterLinesSealed.Add(ctx, n)
}

func (o sealObserver) CheckpointWritten(ctx context.Context) {
	o.t.tb.SandboxauditExporterCheckpointsWritten.Add(ctx, 1)
}

func (o sealObserver) SealLag(ctx context.Context, n int64) {
	o.t.tb.SandboxauditExporterSealLagLines.Record(ctx, n, o.t.gauge)
}

var _ integrity.Observer = sealObserver{}

// closeSealer writes the shutdown checkpoints.
func closeSealer(ctx context.Context, s *integrity.Sealer) error {
	if err := s.Close(ctx); err != nil {
		return fmt.Errorf("sandboxaudit exporter: integrity: final checkpoint: %w", err)
	}
	return nil
}

// retiredWitnessKey refuses a witness whose public_key signed a handover
// note of the log at file (beside it, or beside a log retired there): a
// key the log was handed over from, whose holder could cosign what it
// rewrote. Checked at start, not in Validate: the notes are the audit
// directory's files, as the sealer reads them, one per handed-over log.
// One check serves the start, which lists each directory once.
func (c *IntegrityConfig) retiredWitnessKey() func(file string) error {
	keys := make([]string, len(c.Witnesses))
	for i := range c.Witnesses {
		keys[i] = c.Witnesses[i].PublicKey
	}
	check := integrity.NewHandedOverCheck(keys...)
	return func(file string) error {
		i, note := check.From(file)
		if note == "" {
			return nil
		}
		return fmt.Errorf("file: integrity: witnesses::%d::public_key: a key the log was handed over from (it signed %s): "+
			"a witness cosigns with a key of its own, or the key's holder could cosign what it rewrote", i, note)
	}
}
