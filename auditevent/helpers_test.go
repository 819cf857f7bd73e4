package auditevent_test

import (
	"errors"
	"time"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func timeUnixMicro(us int64) time.Time { return time.UnixMicro(us) }
