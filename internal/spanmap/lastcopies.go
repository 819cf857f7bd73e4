package spanmap

import "go.opentelemetry.io/collector/pdata/pcommon"

// KeepLastCopies removes every copy but the last of each attribute the
// mapping reads. OTLP can carry a key more than once; the mapping reads the
// last copy, while pcommon.Map's Get, Put and Remove act on the first, so a
// component that edits these attributes calls this first: the copy it edits
// is then the one the mapping reads, and no other copy passes unedited.
func KeepLastCopies(attrs pcommon.Map) {
	var n [nAttrs]int
	dup := false
	for k := range attrs.All() {
		if i := slotOf(k); i >= 0 {
			n[i]++
			dup = dup || n[i] > 1
		}
	}
	if !dup {
		return
	}
	attrs.RemoveIf(func(k string, _ pcommon.Value) bool {
		i := slotOf(k)
		if i < 0 || n[i] == 1 {
			return false
		}
		n[i]--
		return true
	})
}
