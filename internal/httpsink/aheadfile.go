package httpsink

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// aheadVersion opens the sidecar that carries ahead across a restart.
const aheadVersion = "sandboxaudit replay ahead v1"

// aheadLimit is the most entries ahead holds (see keepAhead), and so the
// most a sidecar may name.
const aheadLimit = 2 * replayEventsSpan

// aheadPath is the sidecar beside the spool: what the endpoint answered
// past the acknowledged offset when the replayer last stopped.
func (s *Sink) aheadPath() string { return s.spool.Path() + ".ahead" }

// aheadHeader is the sidecar's first line. It names the spool file, its
// acknowledged offset and (by digest: a URL may hold a secret) the
// endpoint, so a sidecar is used only where it was written: after another
// program replayed the spool, or with another endpoint, it is ignored and
// the lines are sent again.
func (s *Sink) aheadHeader() string {
	ino, off := s.spool.Position()
	return fmt.Sprintf("%s %d %d %x", aheadVersion, ino, off, sha256.Sum256([]byte(s.set.Endpoint)))
}

// saveAhead writes ahead to its sidecar when the replayer stops, so a
// restart settles those lines without posting them again (with the 256
// events a window may run past a failed one, each SIGTERM during a
// degraded replay resent up to that many). One line per event: the
// digest and 200, or the status it was refused with. A crash leaves no
// sidecar, and the lines are sent again: at least once.
func (s *Sink) saveAhead() {
	path := s.aheadPath()
	if len(s.ahead) == 0 || s.set.Format != FormatEvent {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.set.Logger.Warn("Could not remove the spool's replay sidecar", zap.String("path", path), zap.Error(err))
		}
		return
	}
	var b bytes.Buffer
	b.WriteString(s.aheadHeader() + "\n")
	for k, h := range s.ahead {
		code := 200
		if h.refused > 0 {
			code = h.refusal.Code
		}
		fmt.Fprintf(&b, "%x %d\n", k[:], code)
	}
	if err := fsutil.ReplaceFile(path, b.Bytes()); err != nil {
		s.set.Logger.Warn("Could not save which spooled lines the endpoint already took past the acknowledged offset; a restart sends them again",
			zap.Int("lines", len(s.ahead)), zap.Error(err))
	}
}

// loadAhead reads the sidecar saveAhead wrote, if any, into ahead and
// removes it. A sidecar it cannot use is ignored with a warning: the
// lines are then sent again, which is safe.
func (s *Sink) loadAhead() {
	path := s.aheadPath()
	if s.set.Format != FormatEvent {
		return // saveAhead removes it at the stop
	}
	ahead, err := readAhead(path, s.aheadHeader(), s.poster.safeURL)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		s.set.Logger.Warn("Ignoring the spool's replay sidecar; the lines it names are sent again", zap.Error(err))
	} else {
		s.ahead = ahead
	}
	if err := os.Remove(path); err != nil {
		s.set.Logger.Warn("Could not remove the spool's replay sidecar", zap.String("path", path), zap.Error(err))
	}
}

// readAhead parses an ahead sidecar whose first line must be header.
func readAhead(path, header, url string) (map[lineKey]halved, error) {
	f, _, err := fsutil.OpenRegular(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	if !sc.Scan() || sc.Text() != header {
		return nil, fmt.Errorf("%s: written for another spool file, offset or endpoint (its first line is not %q)", path, header)
	}
	ahead := map[lineKey]halved{}
	for n := 2; sc.Scan(); n++ {
		if len(ahead) == aheadLimit {
			return nil, fmt.Errorf("%s: more than %d lines", path, aheadLimit)
		}
		k, h, err := parseAhead(sc.Bytes(), url)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		ahead[k] = h
	}
	return ahead, sc.Err()
}

// parseAhead reads one "<sha256 hex> <status>" line; settled is filled in
// when the line is matched. Only 200 and the statuses that refuse the
// content are taken: a line the endpoint failed, or that refused us, was
// never settled and must be sent again.
func parseAhead(line []byte, url string) (lineKey, halved, error) {
	var k lineKey
	digest, status, ok := bytes.Cut(line, []byte(" "))
	code, err := strconv.Atoi(string(status))
	refusal := &StatusError{Code: code, URL: url}
	if !ok || hex.DecodedLen(len(digest)) != len(k) || err != nil || code != 200 && !refusal.Permanent() {
		return k, halved{}, errors.New(`want "<sha256 hex> <200 or a status refusing the content>"`)
	}
	if _, err := hex.Decode(k[:], digest); err != nil {
		return k, halved{}, fmt.Errorf("digest: %w", err)
	}
	if code == 200 {
		return k, halved{acked: 1}, nil
	}
	return k, halved{refused: 1, refusal: refusal}, nil
}
