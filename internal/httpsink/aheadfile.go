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
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// aheadVersion opens the sidecar that carries ahead across a restart.
const aheadVersion = "sandboxaudit replay ahead v1"

// aheadLimit is the most entries ahead holds (see rememberAnswered), and so the
// most a sidecar may name.
const aheadLimit = 2 * replayEventsSpan

// aheadPath is the sidecar beside the spool: what the endpoint answered
// past the acknowledged offset when the replayer last stopped.
func (s *Sink) aheadPath() string { return s.spool.Path() + ".ahead" }

// aheadHeader is what a sidecar is valid for, its first line: the spool
// file, its acknowledged offset and (by digest: a URL may hold a secret)
// the endpoint. After another program replayed the spool, or with another
// endpoint, a sidecar is ignored and its lines are sent again.
type aheadHeader struct {
	inode    uint64
	offset   int64
	endpoint [sha256.Size]byte
}

func (s *Sink) aheadHeader() aheadHeader {
	ino, off := s.spool.Position()
	return aheadHeader{inode: ino, offset: off, endpoint: sha256.Sum256([]byte(s.set.Endpoint))}
}

func (h aheadHeader) String() string {
	return fmt.Sprintf("%s %d %d %x", aheadVersion, h.inode, h.offset, h.endpoint[:])
}

func parseAheadHeader(line string) (aheadHeader, error) {
	var h aheadHeader
	var endpoint []byte
	rest, ok := strings.CutPrefix(line, aheadVersion+" ")
	if !ok {
		return h, fmt.Errorf("not a replay sidecar (its first line does not start %q)", aheadVersion)
	}
	if _, err := fmt.Sscanf(rest, "%d %d %x", &h.inode, &h.offset, &endpoint); err != nil || len(endpoint) != len(h.endpoint) {
		return h, fmt.Errorf("first line %q: want %q", line, aheadVersion+" <inode> <offset> <sha256 hex>")
	}
	copy(h.endpoint[:], endpoint)
	return h, nil
}

// covers reports whether a sidecar written at h holds for the spool at
// now: the same file and endpoint, and an offset no earlier than now's.
// A later one is the offset sidecar lagging the offset in memory (it
// could not be saved): the lines between are sent again, and those the
// sidecar names, further on, stay delivered.
func (h aheadHeader) covers(now aheadHeader) bool {
	return h.inode == now.inode && h.endpoint == now.endpoint && h.offset >= now.offset
}

// saveAhead writes ahead to its sidecar when the replayer stops, so a
// restart settles those lines without posting them again (a window may
// run 256 events past a failed one, and each SIGTERM during a degraded
// replay would resend up to that many). One line per event: the
// digest and 200, or the status it was refused with. A crash leaves no
// sidecar, and the lines are sent again: at least once.
func (s *Sink) saveAhead() {
	path := s.aheadPath()
	if len(s.ahead) == 0 || s.set.Format != FormatEvent {
		s.removeAhead(path)
		return
	}
	var b bytes.Buffer
	b.WriteString(s.aheadHeader().String() + "\n")
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
	_ = os.Remove(path + ".tmp") // left by a crash while saving
	ahead, err := readAhead(path, s.aheadHeader(), s.poster.safeURL)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		s.set.Logger.Warn("Ignoring the spool's replay sidecar; the lines it names are sent again", zap.Error(err))
	} else {
		s.ahead = ahead
	}
	s.removeAhead(path)
}

// removeAhead removes the sidecar at path, if there is one, saying so
// when it cannot.
func (s *Sink) removeAhead(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.set.Logger.Warn("Could not remove the spool's replay sidecar", zap.String("path", path), zap.Error(err))
	}
}

// readAhead parses an ahead sidecar that must hold for the spool at now.
func readAhead(path string, now aheadHeader, url string) (map[lineKey]outcome, error) {
	f, _, err := fsutil.OpenRegular(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: empty or unreadable: %v", path, sc.Err())
	}
	h, err := parseAheadHeader(sc.Text())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !h.covers(now) {
		return nil, fmt.Errorf("%s: written for another spool file, offset or endpoint (%s, now %s)", path, h, now)
	}
	ahead := map[lineKey]outcome{}
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
func parseAhead(line []byte, url string) (lineKey, outcome, error) {
	var k lineKey
	digest, status, ok := bytes.Cut(line, []byte(" "))
	code, err := strconv.Atoi(string(status))
	refusal := &StatusError{Code: code, URL: url}
	if !ok || hex.DecodedLen(len(digest)) != len(k) || err != nil || code != 200 && !refusal.Permanent() {
		return k, outcome{}, errors.New(`want "<sha256 hex> <200 or a status refusing the content>"`)
	}
	if _, err := hex.Decode(k[:], digest); err != nil {
		return k, outcome{}, fmt.Errorf("digest: %w", err)
	}
	if code == 200 {
		return k, outcome{acked: 1}, nil
	}
	return k, outcome{refused: 1, refusal: refusal}, nil
}
