//go:build !linux

package filesink

import (
	"os"
	"time"
)

func fileBirth(*os.File) (time.Time, bool) { return time.Time{}, false }

func changeTime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }
