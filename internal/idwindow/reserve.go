package idwindow

// Reserve is for an action that must happen once per key and may fail: it
// sets dup[i] for each keys[i] the window holds or that repeats an earlier
// key of keys, and reserves the others for the caller, who then either Commits them (done: they join the window) or
// Releases them (failed: a retry may try again). While reserved, a key is
// neither in the window nor free: when another caller holds one of keys,
// Reserve reserves nothing, leaves dup all false and returns false, so a
// resend racing its first attempt is neither done twice nor dropped.
func (w *Window[K]) Reserve(keys []K, dup []bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		if at, _ := w.probeFrom(keys[i], home); at >= 0 {
			dup[i] = true
		} else if _, ok := w.reserved[keys[i]]; ok {
			clear(dup)
			return false
		}
	}
	if w.reserved == nil {
		w.reserved = make(map[K]struct{}, len(keys))
	}
	for i, k := range keys {
		if dup[i] {
			continue
		}
		// None of keys was reserved before this loop: a key reserved now
		// repeats an earlier one.
		if _, ok := w.reserved[k]; ok {
			dup[i] = true
			continue
		}
		w.reserved[k] = struct{}{}
	}
	return true
}

// Commit adds reserved keys to the window and ends their reservation. A key
// committed twice takes one place.
func (w *Window[K]) Commit(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		delete(w.reserved, keys[i])
		w.addFrom(keys[i], home)
	}
}

// Release ends the reservation of keys that were not committed; keys
// committed already are not affected.
func (w *Window[K]) Release(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		delete(w.reserved, k)
	}
}
