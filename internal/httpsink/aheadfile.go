package httpsink

import (
	"bufio"
	"bytes"
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

// aheadHeader opens the sidecar that carries ahead across a restart.
const aheadHeader = "sandboxaudit replay ahead v1"

// aheadPath is the sidecar beside the spool: what the endpoint answered
// past the acknowledged offset when the replayer last stopped.
func (s *Sink) aheadPath() string { return s.spool.Path() + ".ahead" }

// saveAhead writes ahead to its sidecar when the replayer stops, so a
// restart settles those lines without posting them again (with the 256
// events a window may run past a failed one, each SIGTERM during a
// degraded replay resent up to that many). One line per event: the
// digest and 200, or the status it was refused with. A crash leaves no
// sidecar, and the lines are sent again: at least once.
func (s *Sink) saveAhead() {
	path := s.aheadPath()
	if len(s.ahead) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.set.Logger.Warn("Could not remove the spool's replay sidecar", zap.String("path", path), zap.Error(err))
		}
		return
	}
	var b bytes.Buffer
	b.WriteString(aheadHeader + "\n")
	for k, h := range s.ahead {
		code := 200
		if h.refused > 0 {
			code = h.refusal.Code
		}
		fmt.Fprintf(&b, "%x %d\n", k[:], code)
	}
	if err := fsutil.ReplaceFile(path, b.Bytes()); err != nil {
		s.set.Logger.Warn("Could not save which spooled lines the endpoint already took past the acknowledged offset; a restart sends them again",
			zap.String("path", path), zap.Int("lines", len(s.ahead)), zap.Error(err))
	}
}

// loadAhead reads the sidecar saveAhead wrote, if any, into ahead and
// removes it. A sidecar it cannot read is set aside with a warning: the
// lines are then sent again, which is safe.
func (s *Sink) loadAhead() {
	path := s.aheadPath()
	ahead, err := readAhead(path, s.poster.safeURL)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		s.set.Logger.Warn("Ignoring the spool's replay sidecar; the lines it names are sent again",
			zap.String("path", path), zap.Error(err))
	} else {
		s.ahead = ahead
	}
	if err := os.Remove(path); err != nil {
		s.set.Logger.Warn("Could not remove the spool's replay sidecar", zap.String("path", path), zap.Error(err))
	}
}

// readAhead parses an ahead sidecar, at most 2*replayEventsSpan entries.
func readAhead(path, url string) (map[lineKey]halved, error) {
	f, _, err := fsutil.OpenRegular(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	if !sc.Scan() || sc.Text() != aheadHeader {
		return nil, fmt.Errorf("%s: not a replay sidecar (first line is not %q)", path, aheadHeader)
	}
	ahead := map[lineKey]halved{}
	for n := 2; sc.Scan(); n++ {
		if len(ahead) == 2*replayEventsSpan {
			return nil, fmt.Errorf("%s: more than %d lines", path, 2*replayEventsSpan)
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
// when the line is matched.
func parseAhead(line []byte, url string) (lineKey, halved, error) {
	var k lineKey
	digest, status, ok := bytes.Cut(line, []byte(" "))
	code, err := strconv.Atoi(string(status))
	if !ok || hex.DecodedLen(len(digest)) != len(k) || err != nil || code != 200 && (code < 400 || code > 499) {
		return k, halved{}, errors.New(`want "<sha256 hex> <200 or a 4xx status>"`)
	}
	if _, err := hex.Decode(k[:], digest); err != nil {
		return k, halved{}, fmt.Errorf("digest: %w", err)
	}
	if code == 200 {
		return k, halved{acked: 1}, nil
	}
	return k, halved{refused: 1, refusal: &StatusError{Code: code, URL: url}}, nil
}
