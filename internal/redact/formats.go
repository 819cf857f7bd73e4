package redact

import (
	"encoding/base64"
	"strings"
)

// wholeFormat reports whether all of v is one token in a known format, and
// its kind.
func wholeFormat(v string) (Kind, bool) {
	end, k, ok := formatAt(v, 0, runEnd(v, 0))
	return k, ok && end == len(v)
}

// formatAt checks the fixed-format detectors on the run s[i:j], which starts
// at a word boundary, and returns the end of the cut. It dispatches on the
// run's first byte (a jump table), so a run's cost does not grow with the
// number of formats: a hash, a UUID or base64 is ruled out by the few
// formats that share its first byte.
func formatAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	if len(r) == 0 {
		return 0, 0, false
	}
	switch r[0] {
	case '-':
		if strings.HasPrefix(r, "-----") {
			return pemAt(s, i)
		}
	case 'e':
		if strings.HasPrefix(r, "eyJ") {
			return jwtAt(s, i, j)
		}
	case 'L':
		if strings.HasPrefix(r, pemBase64Prefix) {
			return pemBase64At(s, i)
		}
	case 'A':
		return upperAAt(s, i, j)
	case 'P':
		return postmanAt(r, j)
	case 'S':
		if len(r) == 2 { // SG, before a dot
			return sendgridAt(s, i, j)
		}
	case 'd':
		return dAt(s, i, j)
	case 'g':
		return gAt(s, i, j)
	case 'h':
		return hAt(s, i, j)
	case 'l':
		return lAt(r, j)
	case 'n':
		if len(r) == len("npm_")+36 && strings.HasPrefix(r, "npm_") && alnumOnly(r[4:]) {
			return j, KindNPMToken, true
		}
	case 'p':
		return pAt(r, j)
	case 'r':
		return rAt(r, j)
	case 's':
		return sAt(s, i, j)
	case 'x':
		return xAt(r, j)
	case 'y':
		return googleOAuthAt(s, i, j)
	}
	return 0, 0, false
}

// upperAAt: AWS access key ids (AKIA, ASIA), Google API keys (AIza and
// 35), age secret keys and Atlassian API tokens.
func upperAAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	n := len(r)
	switch {
	case n == 20 && isAWSKeyID(r):
		return j, KindAWSAccessKey, true
	case n == 39 && strings.HasPrefix(r, "AIza"):
		return j, KindGoogleAPIKey, true
	case n == len(agePrefix)+58 && strings.HasPrefix(r, agePrefix) && bech32Upper(r[len(agePrefix):]):
		return j, KindAgeSecretKey, true
	case strings.HasPrefix(r, "ATATT3"):
		if end := atlassianEnd(s, i); end-i >= len("ATATT3")+minAtlassianTail {
			return end, KindAtlassianToken, true
		}
	}
	return 0, 0, false
}

// gAt: GitHub's classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained
// tokens, GitLab's tokens and Grafana's.
func gAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	n := len(r)
	switch {
	case n >= 40 && r[1] == 'h' && strings.IndexByte("pousr", r[2]) >= 0 && r[3] == '_' && alnumOnly(r[4:]):
		return j, KindGitHubToken, true
	case strings.HasPrefix(r, "github_pat_") && n >= len("github_pat_")+22:
		return j, KindGitHubToken, true
	case n >= len("gsk_")+48 && strings.HasPrefix(r, "gsk_") && randomTail(r[4:]):
		return j, KindGroqKey, true
	case strings.HasPrefix(r, "gl"):
		if p := gitlabPrefix(r); p > 0 && n-p >= 20 {
			return dottedEnd(s, j), KindGitLabToken, true
		}
		return grafanaAt(s, i, j)
	}
	return 0, 0, false
}

// hAt: Hugging Face tokens and Vault tokens (hvs. and its body).
func hAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	n := len(r)
	switch {
	case n >= 3+34 && strings.HasPrefix(r, "hf_") && alnumOnly(r[3:]):
		return j, KindHuggingFaceToken, true
	case n == 3 && isVaultPrefix(r) && j < len(s) && s[j] == '.':
		if end := runEnd(s, j+1); end-(j+1) >= 24 {
			return end, KindVaultToken, true
		}
	}
	return 0, 0, false
}

// pAt: PyPI tokens and Pulumi access tokens (pul- and 40 hex).
func pAt(r string, j int) (int, Kind, bool) {
	switch {
	case len(r) >= minPyPIToken && strings.HasPrefix(r, pypiPrefix):
		return j, KindPyPIToken, true
	case len(r) == len("pul-")+40 && strings.HasPrefix(r, "pul-") && hexOnly(r[4:]):
		return j, KindPulumiToken, true
	}
	return 0, 0, false
}

// stripeAt: Stripe's secret (sk_) and restricted (rk_) keys, live or test
// mode.
func stripeAt(r string, j int) (int, Kind, bool) {
	if len(r) >= 8+24 && r[1] == 'k' && r[2] == '_' && (r[3:8] == "live_" || r[3:8] == "test_") && alnumOnly(r[8:]) {
		return j, KindStripeKey, true
	}
	return 0, 0, false
}

// slackAt: Slack's xox?- tokens and app-level xapp- tokens.
func slackAt(r string, j int) (int, Kind, bool) {
	switch {
	case strings.HasPrefix(r, "xox") && len(r) >= 15 && strings.IndexByte("abposer", r[3]) >= 0 && r[4] == '-':
		return j, KindSlackToken, true
	case strings.HasPrefix(r, "xapp-") && len(r) >= 15:
		return j, KindSlackToken, true
	}
	return 0, 0, false
}

// sAt: Stripe's secret keys, OpenAI's (and Anthropic's) sk- keys,
// Shopify's shpat_, shpca_, shppa_, shpss_ and 32 hex; Sentry's
// sntryu_ and 64 hex (user tokens) and sntrys_ and base64 of a JSON
// object and its secret (organization tokens).
func sAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	n := len(r)
	switch {
	case strings.HasPrefix(r, "sk_"):
		return stripeAt(r, j)
	case strings.HasPrefix(r, "sk-") && n >= 3+32 && hasDigitAndLetter(r[3:]):
		return j, KindOpenAIKey, true
	case n == 6+32 && strings.HasPrefix(r, "shp") && r[5] == '_' && isShopifyType(r[3:5]) && hexOnly(r[6:]):
		return j, KindShopifyToken, true
	case n == 7+64 && strings.HasPrefix(r, "sntryu_") && hexOnly(r[7:]):
		return j, KindSentryToken, true
	case strings.HasPrefix(r, "sntrys_eyJ"):
		if end := sentryOrgEnd(s, i+len("sntrys_")); end-i >= len("sntrys_")+minSentryOrgTail {
			return wordEnd(s, end), KindSentryToken, true
		}
	}
	return 0, 0, false
}

// pypiPrefix starts every PyPI API token: pypi- and base64 of the
// macaroon's first bytes.
const pypiPrefix = "pypi-AgE"

// minPyPIToken is the shortest run taken for a PyPI token; real ones run to
// well over a hundred characters.
const minPyPIToken = 64

// isVaultPrefix: HashiCorp Vault's service, batch and recovery token
// prefixes, each followed by a dot and the token's body.
func isVaultPrefix(r string) bool { return r == "hvs" || r == "hvb" || r == "hvr" }

// isAWSKeyID: an access key id, AKIA (long-term) or ASIA (temporary) and 16
// uppercase letters or digits.
func isAWSKeyID(r string) bool {
	if !strings.HasPrefix(r, "AKIA") && !strings.HasPrefix(r, "ASIA") {
		return false
	}
	for i := 4; i < len(r); i++ {
		if c := r[i]; !isUpper(c) && !isDigit(c) {
			return false
		}
	}
	return true
}

// gitlabPrefixes are GitLab's token prefixes (personal, deploy, runner,
// CI job, pipeline trigger, feed, incoming mail, OAuth application secret,
// agent, SCIM).
var gitlabPrefixes = [...]string{"glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "gloas-", "glagent-", "glsoat-"}

func gitlabPrefix(r string) int {
	for _, p := range gitlabPrefixes {
		if strings.HasPrefix(r, p) {
			return len(p)
		}
	}
	return 0
}

// dottedEnd extends a token over '.'-joined runs (GitLab's routable tokens
// carry a version and a checksum after dots).
func dottedEnd(s string, j int) int {
	for j+1 < len(s) && s[j] == '.' && wordByte[s[j+1]] {
		j = runEnd(s, j+1)
	}
	return j
}

// jwtAt: header.payload.signature, the header and the payload JSON objects
// in base64url (so both start eyJ), the signature possibly empty.
func jwtAt(s string, i, j int) (int, Kind, bool) {
	if j-i < 10 || j >= len(s) || s[j] != '.' || !strings.HasPrefix(s[j+1:], "eyJ") {
		return 0, 0, false
	}
	p := runEnd(s, j+1)
	if p-(j+1) < 10 || p >= len(s) || s[p] != '.' {
		return 0, 0, false
	}
	return runEnd(s, p+1), KindJWT, true
}

// maxPEMLabel bounds the label looked for after BEGIN, so that a text full
// of BEGIN lines costs linear time.
const maxPEMLabel = 64

// pemBegin starts a PEM BEGIN line, to the blank before its label.
const pemBegin = "-----BEGIN"

// pemAt cuts a PEM private-key block from its BEGIN line through its END
// line; a block without an END (output cut short) is cut to the end.
func pemAt(s string, i int) (int, Kind, bool) {
	const begin = pemBegin + " "
	if !strings.HasPrefix(s[i:], begin) {
		return 0, 0, false
	}
	h := i + len(begin)
	close := strings.Index(s[h:min(len(s), h+maxPEMLabel+5)], "-----")
	if close < 0 {
		return 0, 0, false
	}
	label := s[h : h+close]
	if !strings.Contains(label, "PRIVATE KEY") {
		return 0, 0, false
	}
	body := h + close + 5
	endTag := "-----END " + label + "-----"
	if k := strings.Index(s[body:], endTag); k >= 0 {
		return body + k + len(endTag), KindPEMPrivateKey, true
	}
	return len(s), KindPEMPrivateKey, true
}

// pemBase64Prefix starts base64 of every PEM block: "-----BEGI".
const pemBase64Prefix = "LS0tLS1CRUdJ"

// maxPEMBase64Head bounds the base64 decoded to read a block's label: its
// BEGIN line, "-----BEGIN " + label + "-----", fits.
const maxPEMBase64Head = (len("-----BEGIN ") + maxPEMLabel + 5 + 2) / 3 * 4

// pemBase64At cuts base64 of a PEM private-key block, as Kubernetes
// secrets (tls.key) and kubeconfig (client-key-data) hold keys: the BEGIN
// line is decoded for its label, and the cut runs to the end of the base64,
// over wrapped lines.
func pemBase64At(s string, i int) (int, Kind, bool) {
	head := i
	for head < len(s) && head-i < maxPEMBase64Head && base64Byte(s[head]) {
		head++
	}
	var buf [maxPEMBase64Head / 4 * 3]byte
	n, _ := base64.StdEncoding.Decode(buf[:], []byte(s[i:i+(head-i)/4*4])) // what decodes before an error is kept
	text := string(buf[:n])
	const begin = "-----BEGIN "
	if !strings.HasPrefix(text, begin) {
		return 0, 0, false
	}
	close := strings.Index(text[len(begin):], "-----")
	if close < 0 || !strings.Contains(text[len(begin):len(begin)+close], "PRIVATE KEY") {
		return 0, 0, false
	}
	return base64End(s, i), KindPEMPrivateKey, true
}

// minWrapWidth is the narrowest line base64 is taken to be wrapped at (64
// in PEM, 76 by base64(1)).
const minWrapWidth = 60

// base64End is the end of the base64 text at i: its first line, and when
// that is at least minWrapWidth wide, the lines below that hold only base64
// (after an indent) as wide as it, then one narrower last line.
func base64End(s string, i int) int {
	end := i
	for end < len(s) && base64Byte(s[end]) {
		end++
	}
	width := end - i
	if width < minWrapWidth {
		return end
	}
	for {
		k := end
		if k < len(s) && s[k] == '\r' {
			k++
		}
		if k >= len(s) || s[k] != '\n' {
			return end
		}
		k = skipBlanks(s, k+1)
		e := k
		for e < len(s) && base64Byte(s[e]) {
			e++
		}
		if e == k || e-k > width || (e < len(s) && s[e] != '\n' && s[e] != '\r') {
			return end
		}
		end = e
		if e-k < width {
			return end
		}
	}
}

func base64Byte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

func alnumOnly(r string) bool {
	for i := 0; i < len(r); i++ {
		if !isAlnum(r[i]) {
			return false
		}
	}
	return true
}

func hasDigitAndLetter(r string) bool {
	digit, letter := false, false
	for i := 0; i < len(r); i++ {
		digit = digit || isDigit(r[i])
		letter = letter || isLower(r[i]) || isUpper(r[i])
	}
	return digit && letter
}

// minGoogleOAuthBody is the fewest characters after "ya29." taken for a
// Google OAuth access token; real ones have well over a hundred.
const minGoogleOAuthBody = 20

// googleOAuthAt: Google OAuth 2.0 access tokens, "ya29." and base64url, in
// parts apart by dots for a service account's (ya29.c.b0A…), as
// `gcloud auth print-access-token` prints them.
func googleOAuthAt(s string, i, j int) (int, Kind, bool) {
	if s[i:j] != "ya29" || j >= len(s) || s[j] != '.' {
		return 0, 0, false
	}
	end := wordEnd(s, j+1)
	if end-(j+1) < minGoogleOAuthBody || !hasUpperOrDigit(s[j+1:end]) {
		return 0, 0, false
	}
	return end, KindGoogleOAuthToken, true
}
