package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// witnessFlags are verify's witness options.
type witnessFlags struct {
	files      listFlag
	quorum     int
	allowTail  int64
	verifiers  []note.Verifier
	usedQuorum int
}

// listFlag collects a repeated flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func (w *witnessFlags) register(fs *flag.FlagSet) {
	fs.Var(&w.files, "witness", "witness cosignature key file (name+hash+base64), repeatable: with --key, "+
		"accept only history the quorum of these witnesses cosigned")
	fs.IntVar(&w.quorum, "quorum", 0, "with --witness, how many of the witnesses must have cosigned (default: all)")
	fs.Int64Var(&w.allowTail, "allow-unwitnessed", 0,
		"with --witness, accept up to this many lines after the newest checkpoint the quorum cosigned (a live file's tail)")
}

// load reads the witness keys, none of which may be the log's own
// (keyFile, --key); an error is a usage error.
func (w *witnessFlags) load(keyFile string) error {
	if len(w.files) == 0 {
		if w.quorum != 0 || w.allowTail != 0 {
			return errors.New("--quorum and --allow-unwitnessed need --witness")
		}
		return nil
	}
	if keyFile == "" {
		return errors.New("--witness needs --key (the log's key signs the checkpoints the witnesses cosign)")
	}
	if len(w.files) > witness.MaxWitnesses {
		return fmt.Errorf("--witness: %d keys, limit %d", len(w.files), witness.MaxWitnesses)
	}
	// Unreadable: --key's own error says why, after this.
	logKey, _, _ := integrity.ReadVerifierKey(keyFile)
	// A key given twice, or under two names, would count twice toward
	// the quorum.
	type first struct{ path, name string }
	seen := make(map[string]first, len(w.files))
	for i, p := range w.files {
		if strings.Contains(p, "://") {
			// The handover's SUBMISSION_URL=W.vkey given here by mistake.
			return fmt.Errorf("--witness: value %d is a URL: give the witness's key file (W.vkey) (not shown: it could hold a credential)", i+1)
		}
		_, v, err := loadWitnessKey(p, ownKey{logKey, "the log's own key (--key)"})
		if err != nil {
			return fmt.Errorf("--witness: %w", err)
		}
		key := witness.PublicKey(v)
		if f, dup := seen[key]; dup {
			return fmt.Errorf("--witness: %s is the same witness key as %s (%s); give each witness once", p, f.path, f.name)
		}
		seen[key] = first{p, v.Name()}
		w.verifiers = append(w.verifiers, v)
	}
	w.usedQuorum = w.quorum
	if w.quorum == 0 {
		w.usedQuorum = len(w.verifiers)
	}
	if w.usedQuorum < 1 || w.usedQuorum > len(w.verifiers) {
		return fmt.Errorf("--quorum: must be between 1 and the %d witnesses, got %d", len(w.verifiers), w.quorum)
	}
	if w.allowTail < 0 {
		return fmt.Errorf("--allow-unwitnessed: must be >= 0, got %d", w.allowTail)
	}
	return nil
}

// ownKey is a log's key that no witness may hold (key "": none), and what
// it is, for the error.
type ownKey struct{ key, what string }

// loadWitnessKey reads a witness's verifier key once and returns its text
// with the verifier, so a caller that passes the text on sends the key that
// was checked. The log's own keys are refused: their holder could cosign
// what it rewrote.
func loadWitnessKey(path string, own ...ownKey) (string, *torchwood.CosignatureVerifier, error) {
	f, _, err := fsutil.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", nil, err
	}
	if len(b) > 4096 {
		return "", nil, fmt.Errorf("%s is larger than 4096 bytes: not a witness key", path)
	}
	for _, k := range own {
		if k.key != "" && witness.SameKey(string(b), k.key) {
			return "", nil, fmt.Errorf("%s holds %s: a witness cosigns with a key of its own", path, k.what)
		}
	}
	v, err := witness.ParseKey(string(b))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return string(b), v, nil
}

// newWitnessCheck opens the witness check of one file, or returns nil
// when verify has no witness keys. origin is the log's, from its own
// checkpoints.
func (v *verifier) newWitnessCheck(name, origin string) (*integrity.WitnessCheck, error) {
	if len(v.opts.witness.verifiers) == 0 {
		return nil, nil
	}
	return integrity.NewWitnessCheck(name, origin, v.opts.key, v.opts.witness.verifiers, v.opts.witness.usedQuorum)
}

// reportWitnessed prints one file's witness result and counts its problems.
//
// lead is 1 for a log whose leaf 0 is a handover note: counts are lines.
// at names where a line of the log is (FILE:LINE). It returns the leaves
// the quorum cosigned, the prefix before a failure too, as the summary
// line says: the segments within it are witnessed.
func (v *verifier) reportWitnessed(name string, at func(line int64) string, wc *integrity.WitnessCheck, lead int64, sealedOK bool) int64 {
	res := wc.Finish()
	leaves := res.Witnessed
	res.Lines, res.Witnessed = max(res.Lines-lead, 0), max(res.Witnessed-lead, 0)
	if fl := res.Failure; fl != nil {
		v.sum.Problems++
		msg := fl.Msg + res.ChangedMsg(sealedOK)
		if fl.Line > 0 {
			_, _ = fmt.Fprintf(v.out, "%s: witness: %s\n", at(fl.Line), msg)
		} else {
			_, _ = fmt.Fprintf(v.out, "%s: witness: %s\n", integrity.WitnessedPath(name), msg)
		}
	}
	v.reportDatedAhead(name, res)
	beyond := res.Lines - res.Witnessed
	switch {
	case res.Failure != nil:
	case res.Witnessed == 0 && res.Lines > 0:
		v.sum.Problems++
		why := "nothing in this file is witnessed (the witnessed sidecar was removed, or the witnesses never cosigned)"
		switch {
		case res.Future > 0:
			why = "the cosignatures dated ahead of this host's clock, named above, are not counted"
		case len(res.Others) > 0:
			// The names are the sidecar's, anyone's who can write it:
			// v.out shows them escaped.
			why = "the witnessed sidecar holds cosignatures only by keys not given (" + strings.Join(res.Others, ", ") +
				"): check the --witness key files"
		}
		_, _ = fmt.Fprintf(v.out, "%s: witness: no checkpoint is cosigned by %d of the %d witnesses: %s\n",
			name, v.opts.witness.usedQuorum, len(v.opts.witness.verifiers), why)
	case beyond > v.opts.witness.allowTail:
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: witness: %s after the newest checkpoint the witnesses cosigned (line %d); %s\n",
			name, plural.Count(beyond, "line"), res.Witnessed, v.unwitnessedHint(name, leaves))
	case beyond > 0:
		_, _ = fmt.Fprintf(v.out, "%s: witness: accepting %s (--allow-unwitnessed %d)\n",
			name, plural.Count(beyond, "unwitnessed line"), v.opts.witness.allowTail)
	}
	_, _ = fmt.Fprintf(v.out, "%s: witness: lines=%d witnessed=%d unwitnessed=%d records=%d quorum=%d/%d\n",
		name, res.Lines, res.Witnessed, beyond, res.Records, v.opts.witness.usedQuorum, len(v.opts.witness.verifiers))
	return leaves
}

// unwitnessedHint says why a file has lines past its newest cosigned
// checkpoint (witnessed leaves): a live file's tail the witnesses have not
// seen yet, or, in a log a handover retired, a final checkpoint they
// never cosigned (a handover with its final checkpoint submitted to none
// of them), or lines added past the final checkpoint they cosigned.
func (v *verifier) unwitnessedHint(name string, witnessed int64) string {
	if _, retired := integrity.RetiredFrom(name); !retired {
		return "--allow-unwitnessed N accepts up to N for a live file"
	}
	if st, err := integrity.ReadHandover(name, v.opts.key); err == nil && st.Final != nil && witnessed >= st.Final.N {
		return "they were added after the handover, past its final checkpoint, which these witnesses cosigned"
	}
	return "the log was retired by a final checkpoint these witnesses did not cosign (log handover --without-witnesses)"
}

// reportDatedAhead names the cosignatures of name's witnessed sidecar
// that are dated after this host's clock allows, which were not counted.
// Not a problem alone: the quorum, counted without them, says.
func (v *verifier) reportDatedAhead(name string, res integrity.WitnessResult) {
	if res.Future == 0 {
		return
	}
	_, _ = fmt.Fprintf(v.out, "%s: witness: %s dated more than %s after this host's clock %s not counted (the first: %s); "+
		"check the witness's clock\n", integrity.WitnessedPath(name), plural.Count(int64(res.Future), "cosignature"),
		witness.MaxClockSkew, plural.Pick(int64(res.Future), "is", "are"), res.FirstFuture)
}
