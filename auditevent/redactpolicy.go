package auditevent

// RedactOverride is one level of the payload policy's redact section.
// Like the other policy keys, only the keys a user writes are set (non-nil)
// and override the level below; a list replaces the list below it. The
// sandboxaudit components check and apply it (internal/redact).
type RedactOverride struct {
	// Enabled turns redaction off (false) or back on; on by default.
	Enabled *bool `mapstructure:"enabled" json:"enabled,omitempty"`
	// Patterns are RE2 expressions whose matches are cut (the first
	// capture group's, when the expression has one). Tagged whole: the
	// components refuse one string with a comma, which the collector's
	// decoder would split into several expressions.
	Patterns []string `mapstructure:"patterns" json:"patterns,omitempty" confcheck:"whole"`
	// Keys are more names whose values are cut, compared ignoring case and
	// punctuation.
	Keys []string `mapstructure:"keys" json:"keys,omitempty"`
	// Allow are RE2 expressions: a cut whose text matches one is not made.
	Allow []string `mapstructure:"allow" json:"allow,omitempty" confcheck:"whole"`
	// HashKeyFile holds the HMAC-SHA256 key whose hash of the secret
	// markers carry; unset: markers carry no hash.
	HashKeyFile *string `mapstructure:"hash_key_file" json:"hash_key_file,omitempty"`
}

// IsZero reports whether the override sets nothing.
func (o RedactOverride) IsZero() bool {
	return o.Enabled == nil && o.Patterns == nil && o.Keys == nil && o.Allow == nil && o.HashKeyFile == nil
}
