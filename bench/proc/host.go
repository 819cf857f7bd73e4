package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// HostTimes is the machine's CPU time by state so far, in clock ticks,
// from the first line of /proc/stat. On a shared virtual machine, steal
// (time the hypervisor gave another guest while ours had work) is what
// moves one run's figures away from the next; idle is time no one used.
type HostTimes struct {
	Total, Idle, Steal uint64
}

// ReadHostTimes reads /proc/stat.
func ReadHostTimes() (HostTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return HostTimes{}, err
	}
	defer f.Close()
	return parseHostTimes(f)
}

// parseHostTimes reads the aggregate "cpu" line: user nice system idle
// iowait irq softirq steal [guest guest_nice]. Guest time is already in
// user and nice, so it is not added again. Idle includes iowait: a core
// waiting for the disk runs nothing else either.
func parseHostTimes(r io.Reader) (HostTimes, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return HostTimes{}, err
	}
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return HostTimes{}, fmt.Errorf("/proc/stat: want the aggregate cpu line with 8 times, got %q", line)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
			return HostTimes{}, fmt.Errorf("/proc/stat field %d: %w", i+1, err)
		}
	}
	var t HostTimes
	for _, x := range v {
		t.Total += x
	}
	t.Idle, t.Steal = v[3]+v[4], v[7]
	return t, nil
}

// Since returns the idle and steal shares of the machine's CPU time
// between earlier and t (0 when no time passed).
func (t HostTimes) Since(earlier HostTimes) (idle, steal float64) {
	total := float64(t.Total - earlier.Total)
	if total <= 0 {
		return 0, 0
	}
	return float64(t.Idle-earlier.Idle) / total, float64(t.Steal-earlier.Steal) / total
}
