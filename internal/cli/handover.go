package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/secretlog"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

const handoverSynopsis = "log handover --signing-key OLD.key --next-key NEW.pub [--next-origin ORIGIN] " +
	"[--witness URL=W.vkey]... [--without-witnesses] PATH"

// runLogHandover retires the log of an audit path and hands it over to a new
// key (docs/witnesses.md, "Key handover"): it seals the file with the old
// key, signs a final checkpoint of the whole tree that names the new key and
// the new log's origin (the handover note), has the witnesses cosign it, and
// moves the retired file and its sidecars aside, so that the collector,
// started with the new key, begins the new log at PATH. Run it with the
// collector stopped.
func runLogHandover(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("log handover", handoverSynopsis, s.Stderr)
	keyFile := fs.String("signing-key", "", "the key being retired (file.integrity.signing_key_file until now)")
	nextKeyFile := fs.String("next-key", "", "the new key's verifier key (NAME.pub of the new signing key)")
	nextOrigin := fs.String("next-origin", "", "the new log's origin (default: the retiring log's, with the new key's name for the old one's)")
	var witnesses listFlag
	fs.Var(&witnesses, "witness", "a witness to cosign the final checkpoint, as SUBMISSION_URL=W.vkey (repeatable)")
	without := fs.Bool("without-witnesses", false, "hand a witnessed log over with its final checkpoint cosigned by no witness")
	rest, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) == 1 && *keyFile != "" && *nextKeyFile != "" })
	if !ok {
		return status
	}
	s = s.shown() // the messages name files and the log's origins
	h, err := loadHandoverKeys(*keyFile, *nextKeyFile, *nextOrigin, rest[0])
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log handover: %v\n", err)
		return exitUsage
	}
	pool, failures, err := handoverWitnesses(witnesses, h.path, h.keys.VKey, h.nextKey)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log handover: --witness: %v\n", err)
		return exitUsage
	}
	if live, retired := integrity.RetiredFrom(h.path); retired {
		// Its final checkpoint would read as a handover that stopped
		// midway, and the run would move the retired log again.
		_, _ = fmt.Fprintf(s.Stderr, "log handover: %s: a handover retired this log already; it goes on at %s: hand that path over\n", h.path, live)
		return exitProblems
	}
	if err := checkWitnessed(h.path, len(witnesses), *without); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log handover: %v\n", err)
		return exitUsage
	}
	h.warn = s.Stderr
	owner, ok := lockLog("log handover", h.path, s.Stderr)
	if !ok {
		return exitProblems
	}
	defer owner.Release()
	if err := h.run(ctx, pool, failures, s.Stdout); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "log handover: %v\n", err)
		return exitProblems
	}
	return exitOK
}

// checkWitnessed refuses a handover of a witnessed log without its
// witnesses, unless without says so: its final checkpoint, and the lines
// sealed for it, would be cosigned by none, which a user who set up
// witnesses does not expect. given is the number of --witness values.
func checkWitnessed(path string, given int, without bool) error {
	if without && given > 0 {
		return errors.New("--without-witnesses and --witness exclude each other")
	}
	if without || given > 0 {
		return nil
	}
	fi, err := os.Lstat(integrity.WitnessedPath(path))
	if err != nil || fi.Size() == 0 {
		return nil // no witness ever cosigned this log
	}
	return fmt.Errorf("%s: the log is witnessed (%s): give its witnesses (--witness SUBMISSION_URL=W.vkey, one each) to have them "+
		"cosign the final checkpoint, or --without-witnesses to hand it over with that checkpoint cosigned by none",
		path, integrity.WitnessedPath(path))
}

type handover struct {
	path       string
	keys       *integrity.Keys
	nextKey    string
	nextName   string    // the new key's name
	nextOrigin string    // "" until the retiring log's origin gives the default
	warn       io.Writer // where the seal says what it mended
}

func loadHandoverKeys(keyFile, nextKeyFile, nextOrigin, path string) (*handover, error) {
	keys, err := integrity.LoadSigningKey(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--signing-key: %w", err)
	}
	nextText, next, err := integrity.ReadVerifierKey(nextKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--next-key: %w", err)
	}
	if next.Name() == keys.Signer.Name() && next.KeyHash() == keys.Signer.KeyHash() {
		return nil, errors.New("--next-key: is the key being retired")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return &handover{path: abs, keys: keys, nextKey: nextText, nextName: next.Name(), nextOrigin: nextOrigin}, nil
}

// handoverWitnesses builds the witnesses from URL=W.vkey values, none with
// the retiring key (logKey), the next one (nextKey) or one the log at path
// was handed over from, and what records why they do not cosign; nil when
// there are none.
func handoverWitnesses(values []string, path, logKey, nextKey string) (*witness.Pool, *witnessFailures, error) {
	if len(values) == 0 {
		return nil, nil, nil
	}
	var ws []*witness.Witness
	for i, v := range values {
		// The key file is after the last "=": the URL's query has its own.
		// The value is never quoted, as the URL may hold a token.
		cut := strings.LastIndexByte(v, '=')
		if cut <= 0 || cut == len(v)-1 {
			return nil, nil, fmt.Errorf("value %d is not SUBMISSION_URL=W.vkey (not shown: it could hold a credential)", i+1)
		}
		url, keyPath := v[:cut], v[cut+1:]
		if err := httpsink.ValidateEndpoint(url); err != nil {
			if strings.ContainsRune(keyPath, '@') {
				// The last "=" was in the userinfo (a padded token as the
				// password), cut from its "@": the cause can quote it.
				err = errors.New("not a valid URL (the cause is not shown: it could quote a password)")
			}
			return nil, nil, fmt.Errorf("value %d: submission URL: %w", i+1, err)
		}
		text, _, err := loadWitnessKey(keyPath, ownKey{logKey, "the log's own key (--signing-key)"},
			ownKey{nextKey, "the key the log is handed over to (--next-key)"})
		if err != nil && cutInQuery(url) {
			// A value without its "=W.vkey" puts the query's token here.
			return nil, nil, fmt.Errorf("value %d: the key file after its last \"=\" cannot be read "+
				"(not shown: it could be the URL's query): %w", i+1, pathless(err))
		}
		if err != nil {
			return nil, nil, err
		}
		if _, from := integrity.HandedOverFrom(path, text); from != "" {
			return nil, nil, fmt.Errorf("%s holds a key the log was handed over from (it signed %s): "+
				"a witness cosigns with a key of its own", keyPath, from)
		}
		w, err := handoverWitness(url, text)
		if err != nil {
			return nil, nil, err
		}
		ws = append(ws, w)
	}
	failures := new(witnessFailures)
	pool, err := witness.NewPool(ws, len(ws), nil, failures)
	return pool, failures, err
}

// cutInQuery reports whether the last "=" of a --witness value was the
// one of the URL's last query parameter: the value lacks its "=W.vkey",
// and what was taken for the key file is that parameter's value.
func cutInQuery(url string) bool {
	i := strings.LastIndexByte(url, '?')
	if i < 0 {
		return false
	}
	param := url[i+1:]
	if j := strings.LastIndexByte(param, '&'); j >= 0 {
		param = param[j+1:]
	}
	return !strings.Contains(param, "=")
}

// pathless is err without the file name it quotes.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return errors.New("not a witness key file")
}

// handoverWitness is the client of one witness. Its transport errors are
// redacted as the collector's are: the URL's password and query values
// (a token) never reach an error. A request is bounded by the collector's
// default witness timeout, and follows redirects as its requests do.
func handoverWitness(url, vkey string) (*witness.Witness, error) {
	secrets := secretlog.Secrets(url, nil)
	redact := func(err error) error { return secretlog.TransportError(err, secrets) }
	client := httpsink.SafeRedirects(&http.Client{Timeout: witness.DefaultTimeout})
	return witness.NewWitness(url, vkey, client, redact)
}

// witnessFailures records why each witness did not cosign, by the reason
// the collector's witness_failures metric gives: never a URL or an answer,
// which may quote a token.
type witnessFailures struct {
	mu  sync.Mutex
	why []string
}

func (f *witnessFailures) Cosigned(context.Context, string) {}

func (f *witnessFailures) Failed(_ context.Context, name, reason string) {
	why := name + ": " + reason
	if reason == "dated_ahead" {
		why += fmt.Sprintf(" (its cosignature is dated more than %s after this host's clock: "+
			"check the witness's clock, and this host's)", witness.MaxClockSkew)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.why = append(f.why, why)
}

func (f *witnessFailures) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	slices.Sort(f.why)
	return strings.Join(f.why, ", ")
}

func (h *handover) run(ctx context.Context, pool *witness.Pool, failures *witnessFailures, out io.Writer) error {
	if handedOverAlready(h.path) {
		return fmt.Errorf("%s: nothing to hand over: its log was handed over already, and the note in %s starts the next one; "+
			"start the collector with the new key, then hand that log over", h.path, integrity.HandoverPath(h.path))
	}
	sl, err := integrity.LoadSegmentLog(h.path, h.keys.Verifier)
	if err != nil {
		return fmt.Errorf("%s: %w", integrity.SegmentsPath(h.path), err)
	}
	lead := sl.Lead() // leaf 0 may be the note of an earlier handover
	signed, last, err := h.finalCheckpoint(ctx)
	if err != nil {
		return err
	}
	if pool != nil {
		prove := func(old int64) (tlog.TreeProof, error) { return integrity.ProveFromStore(h.path, last.N, old) }
		cosigs, quorum := pool.Cosign(ctx, h.path, last.Origin, last.N, signed, prove)
		if err := h.recordCosigs(signed, cosigs); err != nil {
			return err
		}
		if !quorum {
			return fmt.Errorf("the witnesses did not all cosign the final checkpoint (%s; it is signed and in %s; run the same command again to finish the handover)",
				failures, integrity.CheckpointsPath(h.path))
		}
	}
	// The new log's leaf 0 is this note: the collector started with the
	// new key picks it up.
	retired, err := integrity.RetireLog(h.path, h.keys.Verifier, time.Now(), signed)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "log handover: the log \"%s\" ends at %s; its final checkpoint names the key %s and the origin \"%s\"\n",
		last.Origin, plural.Count(last.N-lead, "line"), h.nextKey, h.nextOrigin)
	where := "with its sidecars"
	if filepath.Base(retired) == filepath.Base(h.path) {
		where = "with its sidecars and closed segments, in " + filepath.Dir(retired)
	}
	_, _ = fmt.Fprintf(out, "log handover: retired file: %s (%s); start the collector with the new key to begin the new log at %s\n",
		retired, where, h.path)
	_, _ = fmt.Fprintf(out, "log handover: the new log starts from the note in %s\n", integrity.HandoverPath(h.path))
	if _, err := os.Lstat(h.path); err == nil {
		// RetireLog moves the file unless a killed run moved it already.
		_, _ = fmt.Fprintf(out, "log handover: %s was made again after the handover moved the log's file: it stays, and its lines start the new log\n", h.path)
	}
	return nil
}

// recordCosigs appends the final checkpoint with its cosignatures to the
// retiring log's witnessed sidecar, wherever a killed run moved it.
func (h *handover) recordCosigs(signed []byte, cosigs [][]byte) error {
	if len(cosigs) == 0 {
		return nil
	}
	log, err := integrity.RetiringWitnessed(h.path, h.keys.Verifier)
	if err != nil {
		return fmt.Errorf("%s: %w", h.path, err)
	}
	return integrity.AppendWitnessed(log, signed, cosigs)
}

// handedOverAlready reports whether path holds a handover's note and the
// next log has not started: neither a checkpoint nor its handover record
// (the checkpoints sidecar may be empty, as a start refused with the
// retired key leaves it).
func handedOverAlready(path string) bool {
	for _, p := range []string{integrity.CheckpointsPath(path), integrity.SegmentsPath(path)} {
		fi, err := os.Lstat(p)
		if err == nil && fi.Size() > 0 || err != nil && !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	_, err := os.Lstat(integrity.HandoverPath(path))
	return err == nil
}

// finalCheckpoint seals the log with the key being retired and signs its
// final checkpoint. A log whose checkpoints end with a final checkpoint
// naming the same next key and origin is a handover a killed or failed
// run began: its final checkpoint is used as it is, and the run goes on.
func (h *handover) finalCheckpoint(ctx context.Context) ([]byte, integrity.Checkpoint, error) {
	st, err := integrity.ReadHandover(h.path, h.keys.Verifier)
	if err == nil && st.Final != nil {
		h.defaultNextOrigin(st.Final.Origin)
		if st.After > 0 || st.Final.NextKey != h.nextKey || st.Final.NextOrigin != h.nextOrigin {
			return nil, integrity.Checkpoint{}, fmt.Errorf("%s: the log was handed over already, to the key %s and the origin \"%s\"",
				h.path, st.Final.NextKey, st.Final.NextOrigin)
		}
		return st.Signed, st.Final.Checkpoint, nil
	}
	if err := sealOnce(ctx, h.keys, h.path, h.warn); err != nil {
		return nil, integrity.Checkpoint{}, fmt.Errorf("seal %s with the key being retired: %w", h.path, err)
	}
	_, last, err := integrity.NewestSigned(h.path, h.keys.Verifier)
	if err != nil {
		return nil, integrity.Checkpoint{}, fmt.Errorf("%s: %w", h.path, err)
	}
	h.defaultNextOrigin(last.Origin)
	if err := h.checkNextOrigin(last.Origin); err != nil {
		return nil, integrity.Checkpoint{}, err
	}
	note := integrity.Handover{Checkpoint: last, NextKey: h.nextKey, NextOrigin: h.nextOrigin}
	signed, err := integrity.SignHandover(note, h.keys.Signer)
	if err != nil {
		return nil, integrity.Checkpoint{}, fmt.Errorf("%w (--next-origin); nothing was handed over", err)
	}
	if err := integrity.AppendHandover(h.path, signed); err != nil {
		return nil, integrity.Checkpoint{}, fmt.Errorf("%s: %w", h.path, err)
	}
	return signed, last, nil
}

// defaultNextOrigin sets the next origin, when none was given, from the
// retiring log's origin: its key name swapped for the new key's, as the
// collector names a file's log. Below a templated directory the origin
// holds the session's directories, which keep one session's log from
// passing for another's; "<new key name>/<file name>" alone would drop
// them. An origin not of that shape gives "<new key name>/<file name>".
func (h *handover) defaultNextOrigin(origin string) {
	if h.nextOrigin != "" {
		return
	}
	rest, ok := strings.CutPrefix(origin, h.keys.Signer.Name()+"/")
	if !ok || rest == "" {
		rest = filepath.Base(h.path)
	}
	h.nextOrigin = h.nextName + "/" + rest
}

// logNamedBy returns the audit file whose log has the origin next, when
// next names a file beside path the way origin names path (the collector's
// "<key name>/<file>", below a templated directory with the directories
// under its fixed part); "" when there is none. Such a log would be
// checked with the new key, and fail.
func logNamedBy(path, origin, next string) string {
	_, rest, ok := strings.Cut(origin, "/")
	_, nextRest, nextOK := strings.Cut(next, "/")
	root, rootOK := strings.CutSuffix(filepath.ToSlash(path), "/"+rest)
	if !ok || !nextOK || !rootOK || nextRest == "" {
		return ""
	}
	root = filepath.FromSlash(root)
	other := filepath.Join(root, filepath.FromSlash(nextRest))
	if other == path || !strings.HasPrefix(other, root+string(filepath.Separator)) || integrity.FirstOrigin(other) != next {
		return ""
	}
	return other
}

// checkNextOrigin refuses a next origin the chain has used already: the
// retiring log's (a new key made with the old key's name gets it by
// default), that of the log it was handed over from, or that of a log
// retired beside the path (a key name used again later in the chain). A
// witness holds one key and one tree per origin, and verify reads a
// second log of a retired origin as the retired key going on.
func (h *handover) checkNextOrigin(origin string) error {
	what := ""
	switch h.nextOrigin {
	case origin:
		what = "the log being retired"
	case integrity.HandoverNoteOrigin(h.path):
		what = "the log it was handed over from"
	default:
		for _, r := range integrity.RetiredLogs(h.path) {
			if integrity.FirstOrigin(r) == h.nextOrigin {
				what = "the log retired to " + r
				break
			}
		}
		if other := logNamedBy(h.path, origin, h.nextOrigin); what == "" && other != "" {
			what = "the log at " + other
		}
	}
	if what == "" {
		return nil
	}
	return fmt.Errorf("--next-origin: \"%s\" is the origin of %s; the new log needs one of its own (a witness holds one key "+
		"and one tree per origin): give another --next-origin, or make the new key with another --name. Nothing was handed over",
		h.nextOrigin, what)
}
