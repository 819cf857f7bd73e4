package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// vendorTokens are samples of the vendor formats, with their kinds; the
// second of a vendor is another of its prefixes or layouts.
var vendorTokens = []struct {
	token string
	kind  Kind
}{
	{redacttest.DigitalOceanToken, KindDigitalOceanToken},
	{"doo_v1_" + strings.Repeat("0a1b2c3d", 8), KindDigitalOceanToken},
	{"dor_v1_" + strings.Repeat("9f8e7d6c", 8), KindDigitalOceanToken},
	{redacttest.SendGridKey, KindSendGridKey},
	{redacttest.ShopifyToken, KindShopifyToken},
	{"shpss_" + strings.Repeat("A1b2", 8), KindShopifyToken},
	{redacttest.DatabricksToken, KindDatabricksToken},
	{redacttest.DatabricksToken + "-2", KindDatabricksToken},
	{redacttest.GrafanaToken, KindGrafanaToken},
	{"glc_" + "eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTk4NzY1NC1pbnRlZ3JhdGlvbi1teXRva2VuIiwiayI6ImFCM2RFNWZHN2hJOWpLMWxNM25PNXBRNyIsIm0iOnsiciI6InVzIn19", KindGrafanaToken},
	{"glc_" + "eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTk4NzY1NC1pbnRlZ3JhdGlvbi1teXRva2VuIiwiayI6Ij+/YWJjIn0=", KindGrafanaToken},
	{redacttest.SentryToken, KindSentryToken},
	{"sntrys_" + "eyJpYXQiOjE3MzM1NTAwMDAuMTIzLCJ1cmwiOiJodHRwczovL3NlbnRyeS5pbyIsInJlZ2lvbl91cmwiOiJodHRwczovL3VzLnNlbnRyeS5pbyIsIm9yZyI6ImFjbWUifQ==_" + "sRcgizeg8Psh4487Q7j58M1cIaHZcUEqPbENqTyH5xJ", KindSentryToken},
	{redacttest.AgeSecretKey, KindAgeSecretKey},
	{redacttest.LinearKey, KindLinearKey},
	{redacttest.PulumiToken, KindPulumiToken},
	{redacttest.DopplerToken, KindDopplerToken},
	{"dp.st." + "dev." + "l9h2wJq5ty4mYwUufJSunpJC01t5gobuszgI6hwg", KindDopplerToken},
	{"dp.sa." + "l9h2wJq5ty4mYwUufJSunpJC01t5gobuszgI6hwgAbc", KindDopplerToken},
	{"dp.pt." + "AQXVjUPCTNWLAVYFeRgpMPgxAFQFJZlCZBTToOFabq", KindDopplerToken}, // no digit, upper case as random as a token's
	{redacttest.PostmanKey, KindPostmanKey},
	{redacttest.AtlassianToken, KindAtlassianToken},
	{redacttest.DockerHubToken, KindDockerHubToken},
	{"dckr_oat_" + "nHCY_1Kgd2vd_Er1uyZAlIa_ZnY", KindDockerHubToken},
}

// TestVendorTokens: each vendor's token is cut as its own kind wherever an
// agent meets it: an argv element, an env value (NAME=value, the name
// saying nothing), a JSON response in data and exec output.
func TestVendorTokens(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, v := range vendorTokens {
		marker := "[REDACTED:" + v.kind.String() + "]"
		tok, _ := json.Marshal(v.token)
		for _, tc := range []dataCase{
			{`{"command":["deploy","--profile","prod",` + string(tok) + `]}`, `{"command":["deploy","--profile","prod","` + marker + `"]}`},
			{`{"command":["env","APP_SETTING=` + v.token + `","make"]}`, `{"command":["env","APP_SETTING=` + marker + `","make"]}`},
			{`{"env":{"APP_SETTING":` + string(tok) + `,"HOME":"/home/agent"}}`, `{"env":{"APP_SETTING":"` + marker + `","HOME":"/home/agent"}}`},
			{`{"response":{"items":[{"id":7,"value":` + string(tok) + `}]}}`, `{"response":{"items":[{"id":7,"value":"` + marker + `"}]}}`},
		} {
			d := auditevent.MustParseData(tc.in)
			assert.True(t, r.MayCut(d), "probe skips %s", tc.in)
			var c Counts
			got, _ := r.Data(d, &c)
			assert.Equal(t, auditevent.MustParseData(tc.want).String(), got.String(), "from %s", tc.in)
			assert.Equal(t, 1, c[v.kind], "%s: counts %v", tc.in, c)
		}
		for _, tc := range []dataCase{
			{"export APP_SETTING=" + v.token + "\n", "export APP_SETTING=" + marker + "\n"},
			{`{"name":"ci","value":"` + v.token + `"}`, `{"name":"ci","value":"` + marker + `"}`},
			{"$ cat creds.txt\n" + v.token + "\n$ ", "$ cat creds.txt\n" + marker + "\n$ "},
			{"ID  Name  Value  Expires\n7   ci    " + v.token + "  30d\n", "ID  Name  Value  Expires\n7   ci    " + marker + "  30d\n"},
		} {
			var c Counts
			got := r.Output([]byte(tc.in), 4096, &c)
			assert.Equal(t, tc.want, got, "from %q", tc.in)
			assert.Equal(t, 1, c[v.kind], "%q: counts %v", tc.in, c)
		}
	}
}

// TestVendorNearMisses: a vendor's prefix with too short a tail, inside a
// longer word, or with the wrong alphabet, and hex of a token's length
// without its prefix, stay.
func TestVendorNearMisses(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	hex64, hex32, hex40 := strings.Repeat("0a1b2c3d", 8), strings.Repeat("9f8e", 8), strings.Repeat("7c6d5e", 7)[:40]
	for _, s := range []string{
		hex64, hex32, hex40, "sha256:" + hex64, "123e4567-e89b-12d3-a456-426614174000",
		"dop_v1_" + hex64[:63], "xdop_v1_" + hex64, "dop_v2_" + hex64, "dop_v1_" + hex64[:63] + "g", "dop_v1_" + hex64 + "0",
		"SG." + "Jors_6ILi8IHn5kxsC7tV." + "_HbkQfyy_KV5zjR3j1twdTKWTddB-XhkAS1voQG6yyz",
		"MSG." + "Jors_6ILi8IHn5kxsC7tVO." + "_HbkQfyy_KV5zjR3j1twdTKWTddB-XhkAS1voQG6yyz",
		"SG." + "Jors_6ILi8IHn5kxsC7tVO." + "_HbkQfyy_KV5zjR3j1twdTKWTddB-XhkAS1voQG6yy", "SG.Jors", "see SG.setup for details",
		"shpat_" + hex32[:31], "xshpat_" + hex32, "shpxx_" + hex32, "shpat_" + strings.Repeat("zz", 16),
		"dapi" + hex32[:31], "mydapi" + hex32, "dapiRequestHandlerForServiceAccounts", "dapi" + hex32 + "-x",
		"glsa_short_b23c6f5d", "glc_" + "eyJvIjoiMTIz", "xglc_" + strings.Repeat("eyJvIjoi", 6), "glc_", "gl_something_long_enough_here", "glc_ComputeShaderProgramBindingsForTextures",
		"sntryu_" + hex64[:63], "sntrys_" + "eyJ", "sntrys_abcdefghijklmnopqrstuvwxyz", "xsntryu_" + hex64,
		"AGE-SECRET-KEY-1" + "HFSGAWXEL2W2ME46VK59HP4AUPC4JY8WX9S3ZT3GMSEFL593RTMY3P9S9",  // 57
		"AGE-SECRET-KEY-1" + "BFSGAWXEL2W2ME46VK59HP4AUPC4JY8WX9S3ZT3GMSEFL593RTMY3P9S9W", // B is no bech32
		"age-secret-key-1" + "hfsgawxel2w2me46vk59hp4aupc4jy8wx9s3zt3gmsefl593rtmy3p9s9w", "AGE-SECRET-KEY-1",
		"lin_api_" + "EQ3HdAVja76RnIChtP8HKQDLM7ToThwNScgrLRW", "lin_api_version_header_name_in_the_client_sdk", "lin_api_" + "ResolveIssueStateTransitionForTeamMember", "berlin_api_" + strings.Repeat("Ab1", 13) + "C",
		"pul-" + hex40[:39], "pul-" + strings.Repeat("xyz0", 10), "apul-" + hex40,
		"dp.pt.short", "dp.xx." + "AQX9VjUPC94TNWLAVYFeRgpMPgxAFQ0FJZlCZBTToOF", "dp.pt." + "AQX9VjUPC94TNWLAVYFeRgpMPgxAFQ0FJZlCZBTToOF12",
		"dp.st.computeLongestIncreasingSubsequenceLengths", "dp.sa.resolveServiceAccountTokenForEnvironmentX",
		"python3 -m dp.pt.run", "rdp.pt." + "AQX9VjUPC94TNWLAVYFeRgpMPgxAFQ0FJZlCZBTToOF",
		"PMAK-" + "072014b3ce107f80e222f828", "PMAK-" + "072014b3ce107f80e222f828_767efc2f91624a8940f1f836f99eee3692", "XPMAK-" + "072014b3ce107f80e222f828-767efc2f91624a8940f1f836f99eee3692",
		"ATATT3" + strings.Repeat("xFfGF0", 20), "ATATT3xFfGF0", "MATATT3" + strings.Repeat("xFfGF0", 31),
		"dckr_pat_" + "nHCY_1Kgd2vd_Er1uyZAlIa_Zn", "dckr_pat_", "xdckr_pat_" + "nHCY_1Kgd2vd_Er1uyZAlIa_ZnY",
		"dckr_pat_rotation_schedule_for_ci_runners", "export dckr_oat_environment_variable_name=1",
		"/usr/share/doc/dapi/README", "--dp.pt.flag", "SG.", "dp.",
	} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestBase64TokenEndsAtWordEnd: a token whose base64 runs over '/' and
// '+' (Grafana's glc_, Sentry's sntrys_) into a word glued after it is cut
// to that word's end, so no token after it is left half in clear.
func TestBase64TokenEndsAtWordEnd(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	glc := "glc_" + "eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTk4NzY1NC1pbnRlZ3JhdGlvbi1teXRva2VuIiwiayI6ImFCM2RFNWZHN2hJOWpLMWxNM25PNXBRNyIsIm0iOnsiciI6InVzIn19"
	sntrys := "sntrys_" + "eyJpYXQiOjE3MzM1NTAwMDAuMTIzLCJ1cmwiOiJodHRwczovL3NlbnRyeS5pbyIsInJlZ2lvbl91cmwiOiJodHRwczovL3VzLnNlbnRyeS5pbyIsIm9yZyI6ImFjbWUifQ==_" + "sRcgizeg8Psh4487Q7j58M1cIaHZcUEqPbENqTyH5xJ"
	for _, tc := range []struct{ in, want string }{
		{"tokens: " + glc + "/" + redacttest.SlackToken + "\n", "tokens: [REDACTED:grafana_token]\n"},
		{"tokens: " + glc + "+" + redacttest.GitLabToken + " ok", "tokens: [REDACTED:grafana_token] ok"},
		{"tokens: " + glc + "/" + redacttest.VaultToken + " ok", "tokens: [REDACTED:grafana_token] ok"},
		{"tokens: " + sntrys + "/" + redacttest.SlackToken + " ok", "tokens: [REDACTED:sentry_token] ok"},
		{"tokens: " + sntrys + "/" + redacttest.DopplerToken + " ok", "tokens: [REDACTED:sentry_token] ok"},
		{glc + ". Next", "[REDACTED:grafana_token]. Next"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got, "from %q", tc.in)
	}
}

// TestAnthropicKeysAreOpenAIKind: Anthropic's API and admin keys (sk-ant-…)
// fall under openai_key's sk- format.
func TestAnthropicKeysAreOpenAIKind(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	body := strings.Repeat("Xy7Zq1Lm3N", 9) + "p5RAA"
	for _, key := range []string{"sk-ant-admin01-" + body, "sk-ant-api03-" + body} {
		var c Counts
		got, _ := r.String("ANTHROPIC_ADMIN="+key, &c)
		assert.Equal(t, "ANTHROPIC_ADMIN=[REDACTED:openai_key]", got)
		require.Equal(t, 1, c[KindOpenAIKey])
	}
}
