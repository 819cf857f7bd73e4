package sandboxtrace

// maxSplitToken bounds the run of token bytes a capture cut drops: longer
// than any credential the collector's redaction knows by its format (JWTs
// included, in practice), shorter than the base64 data a command prints,
// which is kept as cut.
const maxSplitToken = 4096

// splitTokenStart is where the captured output b is cut instead of at cut
// when cut falls inside a run of token bytes (letters, digits and
// -._~+/=, what credentials are made of): at the run's start. A token cut
// in two no longer matches its format, so the collector's redaction could
// not cut the half that is kept; dropped whole, no part of it is sent.
func splitTokenStart(b []byte, cut int) int {
	if cut <= 0 || cut >= len(b) || !tokenByte(b[cut]) || !tokenByte(b[cut-1]) {
		return cut
	}
	for k := cut - 1; k >= 0 && cut-k <= maxSplitToken; k-- {
		if !tokenByte(b[k]) {
			return k + 1
		}
	}
	if cut <= maxSplitToken {
		return 0 // the run starts the output
	}
	return cut
}

func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '+', '/', '=':
		return true
	}
	return false
}
