package redact

import (
	"slices"
	"strings"
)

// The formats of vendors other than the common ones formatAt reads itself.
// Each has a fixed prefix and a fixed or long tail, so that words, paths,
// hashes and base64 without the prefix never match.

// postmanAt: PMAK-, 24 hex, -, 34 hex.
func postmanAt(r string, j int) (int, Kind, bool) {
	if len(r) == 64 && strings.HasPrefix(r, "PMAK-") && r[29] == '-' && hexOnly(r[5:29]) && hexOnly(r[30:]) {
		return j, KindPostmanKey, true
	}
	return 0, 0, false
}

// linearAt: lin_api_ and 40 letters or digits, both among them (random,
// not a name).
func linearAt(r string, j int) (int, Kind, bool) {
	if len(r) == len("lin_api_")+40 && strings.HasPrefix(r, "lin_api_") && alnumOnly(r[8:]) && hasDigitAndLetter(r[8:]) {
		return j, KindLinearKey, true
	}
	return 0, 0, false
}

// agePrefix starts an age secret key (its bech32 human-readable part,
// upper-case, and the separator 1).
const agePrefix = "AGE-SECRET-KEY-1"

// minAtlassianTail is the shortest tail taken after ATATT3; Atlassian API
// tokens hold 186 characters there.
const minAtlassianTail = 180

// atlassianEnd is the end of the base64url text at i, with '=' (an
// Atlassian token ends with = and a checksum).
func atlassianEnd(s string, i int) int {
	for i < len(s) && (wordByte[s[i]] || s[i] == '=') {
		i++
	}
	return i
}

// sendgridAt: SG., 22 base64url, ., 43 base64url. The run s[i:j] has
// two bytes, the first S.
func sendgridAt(s string, i, j int) (int, Kind, bool) {
	if s[i+1] != 'G' || j >= len(s) || s[j] != '.' {
		return 0, 0, false
	}
	k := runEnd(s, j+1)
	if k-(j+1) != 22 || k >= len(s) || s[k] != '.' {
		return 0, 0, false
	}
	end := runEnd(s, k+1)
	if end-(k+1) != 43 {
		return 0, 0, false
	}
	return end, KindSendGridKey, true
}

// dAt: DigitalOcean's dop_v1_, doo_v1_, dor_v1_ and 64 hex (personal,
// OAuth and refresh tokens), Databricks' dapi and 32 hex (a -N suffix
// kept), Docker Hub's dckr_pat_ and dckr_oat_ and 27 or more base64url
// (not a lower-case name), and
// Doppler's dp.TYPE. tokens.
func dAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	n := len(r)
	switch {
	case n == 7+64 && r[1] == 'o' && strings.IndexByte("opr", r[2]) >= 0 && r[3:7] == "_v1_" && hexOnly(r[7:]):
		return j, KindDigitalOceanToken, true
	case strings.HasPrefix(r, "dapi") && (n == 4+32 || n == 4+32+2 && r[36] == '-' && isDigit(r[37])) && hexOnly(r[4:36]):
		return j, KindDatabricksToken, true
	case n >= 9+27 && (strings.HasPrefix(r, "dckr_pat_") || strings.HasPrefix(r, "dckr_oat_")) && hasUpperOrDigit(r[9:]):
		return j, KindDockerHubToken, true
	case r == "dp":
		return dopplerAt(s, j)
	}
	return 0, 0, false
}

// randomCase: r holds a digit or at least 8 upper-case letters, as 40
// random letters and digits all but surely do (about 5 in 10^9 miss); a
// camelCase name (computeLongestIncreasingSubsequenceLengths) does not.
func randomCase(r string) bool {
	upper := 0
	for i := 0; i < len(r); i++ {
		switch {
		case isDigit(r[i]):
			return true
		case isUpper(r[i]):
			upper++
		}
	}
	return upper >= 8
}

// hasUpperOrDigit: r holds an upper-case letter or a digit, as 27 random
// base64url characters all but surely do; a snake_case name after the
// prefix (dckr_pat_rotation_schedule_for_ci) does not.
func hasUpperOrDigit(r string) bool {
	for i := 0; i < len(r); i++ {
		if isUpper(r[i]) || isDigit(r[i]) {
			return true
		}
	}
	return false
}

// dopplerTypes are Doppler's token types: personal, service, CLI, service
// account, SCIM and audit.
var dopplerTypes = [...]string{"pt", "st", "ct", "sa", "scim", "audit"}

// dopplerAt: dp.TYPE. and 40 to 44 letters or digits; a service token may
// carry its config's name before them (dp.st.dev.…). j is after "dp".
func dopplerAt(s string, j int) (int, Kind, bool) {
	if j >= len(s) || s[j] != '.' {
		return 0, 0, false
	}
	t := runEnd(s, j+1)
	typ := s[j+1 : t]
	if !slices.Contains(dopplerTypes[:], typ) || t >= len(s) || s[t] != '.' {
		return 0, 0, false
	}
	b := t + 1
	end := runEnd(s, b)
	if typ == "st" && end < len(s) && s[end] == '.' && end-b >= 2 && end-b <= 35 {
		b = end + 1 // the config's name
		end = runEnd(s, b)
	}
	if end-b < 40 || end-b > 44 || !alnumOnly(s[b:end]) || !randomCase(s[b:end]) {
		return 0, 0, false
	}
	return end, KindDopplerToken, true
}

func isShopifyType(t string) bool { return t == "at" || t == "ca" || t == "pa" || t == "ss" }

// minSentryOrgTail is the shortest tail taken after sntrys_: base64 of
// the token's JSON claims (an issue time, the URLs, the organization),
// an underscore and a 43-character secret.
const minSentryOrgTail = 80

// wordEnd is the end of the word, dotted parts and all, that the base64
// text ending at i stops in: base64 runs over '/' and '+' into a word glued
// after it (…=/xoxb-…), and a cut that stopped inside that word would leave
// its rest (a token's body) in clear.
func wordEnd(s string, i int) int { return dottedEnd(s, runEnd(s, i)) }

// sentryOrgEnd is the end of the base64 text at i, underscores in it.
func sentryOrgEnd(s string, i int) int {
	for i < len(s) && (base64Byte(s[i]) || s[i] == '_') {
		i++
	}
	return i
}

// grafanaAt: Grafana Cloud access policy tokens, glc_ and 32 or more
// base64 characters of a JSON object (so eyJ first: a glc_ name in code
// stays); Grafana service account tokens, glsa_, 32 letters or digits, _
// and 8 hex. r starts with "gl" and is not a GitLab token.
func grafanaAt(s string, i, j int) (int, Kind, bool) {
	r := s[i:j]
	switch {
	case strings.HasPrefix(r, "glc_eyJ"):
		end := i + 4
		for end < len(s) && base64Byte(s[end]) {
			end++
		}
		if end-(i+4) >= 32 {
			return wordEnd(s, end), KindGrafanaToken, true
		}
	case len(r) == 5+32+1+8 && strings.HasPrefix(r, "glsa_") && r[37] == '_' && alnumOnly(r[5:37]) && hexOnly(r[38:]):
		return j, KindGrafanaToken, true
	}
	return 0, 0, false
}

// bech32Upper: every byte is of bech32's alphabet, in upper case.
func bech32Upper(r string) bool {
	for i := 0; i < len(r); i++ {
		if strings.IndexByte("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", r[i]) < 0 {
			return false
		}
	}
	return true
}

func hexOnly(r string) bool {
	for i := 0; i < len(r); i++ {
		if !isHex(r[i]) {
			return false
		}
	}
	return true
}

// dottedPrefix: the run s[i:j], followed by a '.', may start a token
// whose prefix holds the dot (Vault's hvs., SendGrid's SG., Doppler's dp.,
// Google's ya29.).
func dottedPrefix(s string, i, j int) bool {
	switch j - i {
	case 2:
		return s[i] == 'S' && s[i+1] == 'G' || s[i] == 'd' && s[i+1] == 'p'
	case 3:
		return s[i] == 'h'
	case 4:
		return s[i:j] == "ya29"
	}
	return false
}

// The AI vendors' keys an agent's sandbox tends to hold, beside OpenAI's and
// Anthropic's sk- keys: each a fixed prefix and a long random tail of
// letters and digits, both among them (not a name).

// lAt: LangSmith's lsv2_pt_ and lsv2_sk_ keys (32 hex, _, 10 hex) and
// Linear's API keys.
func lAt(r string, j int) (int, Kind, bool) {
	const p = len("lsv2_pt_")
	if len(r) >= p+32+1+8 && (strings.HasPrefix(r, "lsv2_pt_") || strings.HasPrefix(r, "lsv2_sk_")) &&
		hexOnly(r[p:p+32]) && r[p+32] == '_' && hexOnly(r[p+33:]) {
		return j, KindLangSmithKey, true
	}
	return linearAt(r, j)
}

// rAt: Replicate's r8_ API tokens (37 letters or digits) and Stripe's
// restricted keys.
func rAt(r string, j int) (int, Kind, bool) {
	if len(r) >= len("r8_")+32 && strings.HasPrefix(r, "r8_") && randomTail(r[3:]) {
		return j, KindReplicateToken, true
	}
	return stripeAt(r, j)
}

// xAt: xAI's xai- API keys (80 letters or digits) and Slack's tokens.
func xAt(r string, j int) (int, Kind, bool) {
	if len(r) >= len("xai-")+64 && strings.HasPrefix(r, "xai-") && randomTail(r[4:]) {
		return j, KindXAIKey, true
	}
	return slackAt(r, j)
}

// randomTail reports whether a key's tail is letters and digits with both
// among them.
func randomTail(r string) bool { return alnumOnly(r) && hasDigitAndLetter(r) }
