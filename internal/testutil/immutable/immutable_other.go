//go:build !linux

package immutable

import "errors"

// setFlag is unsupported off Linux.
func setFlag(string, bool) error { return errors.ErrUnsupported }
