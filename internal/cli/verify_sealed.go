package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// verifySealed runs the plain checks and the integrity checks in one pass:
// the bytes the line reader consumes are teed into the checker, which folds
// the Merkle tree as they go by, so memory stays flat in the file size.
func (v *verifier) verifySealed(ctx context.Context, name string, f io.Reader) error {
	defer v.followHandover(name)()
	c, err := integrity.NewChecker(name, v.opts.key)
	if err != nil {
		// No sidecar: nothing sealed. Still run the plain checks.
		return v.verifyNotSealed(ctx, name, f, err)
	}
	defer func() { _ = c.Close() }()
	given := v.proveAlso(c)
	sink := c.Writer()
	wc, err := v.newWitnessCheck(name, c.Origin())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if wc != nil {
		defer func() { _ = wc.Close() }()
		sink = io.MultiWriter(sink, wc.Writer())
	}
	if err := v.verifyReader(ctx, name, io.TeeReader(f, sink)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	res := c.Finish()
	if wc != nil {
		v.reportWitnessed(name, func(n int64) string { return fmt.Sprintf("%s:%d", name, n) }, wc, 0, res.Failure == nil)
	}
	v.checkHandover(name, res.Lines, 0)
	v.reportSealed(name, res, given)
	return nil
}

// verifyNotSealed runs the plain checks on a file the checker could not
// open (cause says why), and counts the missing seal as a problem.
func (v *verifier) verifyNotSealed(ctx context.Context, name string, f io.Reader, cause error) error {
	if err := v.verifyReader(ctx, name, f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	v.sum.Problems++
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %v (no checkpoint to check against)\n", name, cause)
	return nil
}

// reportSealed reports what the integrity checks of a file found: the
// failure, a renamed origin, the hash store, the given checkpoints, then
// the counts. given maps res.Given to --checkpoint's files.
func (v *verifier) reportSealed(name string, res integrity.CheckResult, given []int) {
	if fl := res.Failure; fl != nil {
		v.sum.Problems++
		switch {
		case fl.Line > 0:
			_, _ = fmt.Fprintf(v.out, "%s:%d: integrity: %s\n", name, fl.Line, fl.Msg)
		default:
			_, _ = fmt.Fprintf(v.out, "%s: integrity: %s\n", integrity.CheckpointsPath(name), fl.Msg)
		}
	}
	if !res.OriginNames(name) {
		v.reportRenamed(name, res.Origin)
	}
	intact := "the lines are intact"
	if res.Failure != nil {
		intact = fmt.Sprintf("the lines checkpoint #%d covers are intact", res.Checkpoints)
	}
	const rebuild = "the collector rebuilds it from the file (a rotated log: sandboxaudit log rebuild-store)"
	v.reportStore(name, res.StoreUnused, res.StoreDamage, intact,
		"Put a regular file back, or remove it and "+rebuild, "Move it aside and "+rebuild)
	v.reportGiven(name, res.Given, given, 0)
	v.reportSealedCounts(name, res)
}

// reportSealedCounts prints a file's integrity summary line.
func (v *verifier) reportSealedCounts(name string, res integrity.CheckResult) {
	// After a failure the counts stop at it: "checkpoints=0" beside "checkpoint #1" read as if none
	// had been found.
	upTo := ""
	if res.Failure != nil {
		upTo = " (sealed and checkpoints count only what passed before the failure)"
	}
	allowed := ""
	if res.Failure == nil {
		allowed = v.checkUnsealed(name, res.Lines-res.Sealed, []string{name})
	}
	_, _ = fmt.Fprintf(v.out, "%s: integrity: lines=%d sealed=%d unsealed=%d%s checkpoints=%d%s\n",
		name, res.Lines, res.Sealed, res.Lines-res.Sealed, allowed, res.Checkpoints, upTo)
}

// reportRenamed reports a file, or a trail, whose checkpoints name
// another file: a problem, or with --allow-renamed a warning.
func (v *verifier) reportRenamed(name, origin string) {
	level, more := "warning: ", ""
	if !v.opts.allowRenamed {
		v.sum.Problems++
		level, more = "", ", or renamed or moved with its sidecars (--allow-renamed accepts that)"
	}
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %sthe checkpoints name another file (origin \"%s\"): "+
		"this file may have been swapped for another sealed with the same key%s\n", name, level, origin, more)
}

// reportStore reports a hash store not used (unused says why) or damaged
// (damage says how): a warning, since the evidence is the lines and the
// signed checkpoints and the store is derived from them, or with --strict
// a problem. intact says which lines are intact all the same ("": none
// is said to be); the advice, for each case, how to have the store again.
func (v *verifier) reportStore(name, unused, damage, intact, unusedAdvice, damageAdvice string) {
	if unused == "" && damage == "" {
		return
	}
	level, strict := "warning: ", ""
	if v.opts.strict {
		v.sum.Problems++
		level, strict = "", " (--strict)"
	}
	store := integrity.StorePath(name)
	if unused != "" {
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %sthe hash store is not used (%s), so a changed line "+
			"is named by its range only and prove cannot run. %s%s\n", store, level, unused, unusedAdvice, strict)
		return
	}
	// The evidence holds; only the derived store (which prove needs)
	// does not. A failure here would point the operator at the lines.
	if intact != "" {
		intact = "; " + intact
	}
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %sthe hash store is damaged (%s)%s. "+
		"%s%s\n", store, level, damage, intact, damageAdvice, strict)
}
