// Package redacttest holds real-looking credentials of every kind the
// redactor knows, for tests. They are built from pieces so that secret
// scanners do not flag the source, and none of them is live.
package redacttest

import "strings"

// Samples of each built-in format, one each.
var (
	GitHubToken  = "ghp_" + "R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	GitHubPAT    = "github_pat_" + "11ABCDEFG0123456789_abcdefghijKLMNOPQRSTuvwxyz0123456789abcdefghijklmnopqrstuvwxyzAB"
	GitLabToken  = "glpat-" + "xQ3vL9mN2pR7sT1uW4yZ"
	SlackToken   = "xoxb-" + "1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	OpenAIKey    = "sk-" + "proj-Xy7Zq1Lm3Np5Rt7Vx9Bz2Cd4Fg6Hj8Kl0Mn2Pq4St6Uv8Wx"
	StripeKey    = "sk_" + "live_51H8xYzAbCdEfGhIjKlMnOpQrStUv"
	GoogleAPIKey = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrSt-_w"
	HFToken      = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	VaultToken   = "hvs." + "CAESIJ1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWxYz0123456789abGh4K"
	NPMToken     = "npm_" + "Xq7Zl1Mn3Op5Qr7St9Uv2Wx4Yz6Ab8Cd0Ef2"
	PyPIToken    = "pypi-" + "AgEIcHlwaS5vcmcCJDk1ZTc0ZjRiLTc3YjMtNDY0Yy1hMzBmLWM4ZDFiN2E0ZjE2OAACKlsz"
	AWSKeyID     = "AKIA" + "QX4TZ7LMN2PB5RWS"
	// Other vendors' tokens, one of each kind.
	DigitalOceanToken = "dop_v1_" + "a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd1"
	SendGridKey       = "SG." + "Jors_6ILi8IHn5kxsC7tVO." + "_HbkQfyy_KV5zjR3j1twdTKWTddB-XhkAS1voQG6yyz"
	ShopifyToken      = "shpat_" + "c3fc1626e53a13043b026c48bbf33fef"
	DatabricksToken   = "dapi" + "f9243a8f506b40928b5b7a767c76fb00"
	GrafanaToken      = "glsa_" + "yReQMsm9Wcz7uW9XFOGOeMVNen5n1Ae6_b23c6f5d"
	SentryToken       = "sntryu_" + "a2cec255404e4fb440034d6608697a8d41bed440e50454f31af3176813e02ea6"
	AgeSecretKey      = "AGE-SECRET-KEY-1" + "HFSGAWXEL2W2ME46VK59HP4AUPC4JY8WX9S3ZT3GMSEFL593RTMY3P9S9W"
	LinearKey         = "lin_api_" + "EQ3HdAVja76RnIChtP8HKQDLM7ToThwNScgrLRWz"
	PulumiToken       = "pul-" + "081006f7e3dfc967a64cb14028d512c9791e558e"
	DopplerToken      = "dp.pt." + "AQX9VjUPC94TNWLAVYFeRgpMPgxAFQ0FJZlCZBTToOF"
	PostmanKey        = "PMAK-" + "072014b3ce107f80e222f828-767efc2f91624a8940f1f836f99eee3692"
	AtlassianToken    = "ATATT3" + "8Cl6J5ixaaJLShuQjOud_-yDUA-5zmS1swoPqApryPZBlgvIyxJu2jGjNGkTfi3oYv2DzaKG05Rk-GQV81rkmghzem9yPVUJa_c5q52RYfLWrLoevhZC0x0awirH_juQbLifxz53nCQE28-AJy75fNcTTN6KFAQdEmQg3OMJmYxhcABm6=8A7F770D"
	DockerHubToken    = "dckr_pat_" + "nHCY_1Kgd2vd_Er1uyZAlIa_ZnY"
	GoogleOAuthToken  = "ya29." + "a0AfB_byC1kQ9vLmN2pR7sT1uW4yZ-Qx7vR2mK9pL4tZ0123"
	GroqKey           = "gsk_" + "Qm7xT2vLp9Zr4Kc8Wn1Yb6Hd3Fs5Ja0Ge7Ru2Ti9Oe4Pw1Lq8Mz3Xv"
	XAIKey            = "xai-" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh5Ij7Kl9Mn1Op3Qr5St7Uv9Wx1Yz3Ab5Cd7Ef9G"
	ReplicateToken    = "r8_" + "Tq4Wm8Zp2Xr6Vn0Ks3Jd7Hb1Gf5Lc9Ya4Ne8Ru2"
	LangSmithKey      = "lsv2_pt_" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0" + "_" + "a1b2c3d4e5"
	AWSSecret         = "q8Zt3Lm9Xw2" + "Vb7Nc4Rk1Jp6Hs5Gd0Fa/Ey+Tu"
	JWT               = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	BearerToken       = "b3aR3r" + "9f8e7d6c5b4a39281706"
	BasicAuth         = "YWxpY2U6" + "czNjcjN0LVBhNTU="
	CookieVal         = "s%3A" + "Qx7vR2mK9pL4.tZ"
	PEMBody           = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" + "QyNTUxOQAAACDqZk2Vd9xq"
	PEMBlock          = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + PEMBody + "\n-----END " + "OPENSSH PRIVATE KEY-----"
	URLPassword       = "s3cr3t-" + "Pa55w0rd"
	Password          = "hunter2-" + "Xq9"
	APIKey            = "k3y-" + "0123abcdZ"
	CustomKeyVal      = "int-" + "auth-77Qz"
	SecretVal         = "cl13nt-" + "s3cr3t-Qv"
	TokenVal          = "t0k3n-" + "Vq81Lx"
	Credential        = "cr3d-" + "Zk7Pw2"
	PrivateKey        = "pr1v-" + "Mx4Nb8"
	RegistryAuth      = "Ym9iOnIz" + "Z2lzdHJ5LVB3MDk=" // base64 of user:password, as in Docker's config.json
	JSONSecret        = "j50n-" + "Sc7Rq"
	OtherAuth         = "0th3r-" + "Au7hZ9"
	CustomMatch       = "INTERNAL-" + "493027"
)

// Samples of the formats cut inside a URL or a file, with their secret.
var (
	// DiscordWebhookToken is the token of DiscordWebhook, its last segment.
	DiscordWebhookToken = "Xq7vR2mK9pL4tZ0" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ_0123456789-AbCdEfGhIjKlMnOpQrStUv"
	DiscordWebhook      = "https://discord.com/api/webhooks/1234567890123456789/" + DiscordWebhookToken
	// PuTTYPrivate is the private line of PuTTYKey, a PuTTY key file.
	PuTTYPrivate = "AAAAIHRlc3Qtb25seS1lZDI1NTE5LX" + "ByaXZhdGUta2V5LWJ5dGVzLXh5ejk="
	PuTTYKey     = "PuTTY-User-Key-" + "File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20260101\nPublic-Lines: 2\n" +
		"AAAAC3NzaC1lZDI1NTE5AAAAIDqZk2Vd9xqR8sTq2VwXyZ1aBcDeFgHiJkLmNoPq\nRsTuV4w=\n" +
		"Private-Lines: 1\n" + PuTTYPrivate + "\nPrivate-MAC: 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n"
)

// UserPattern and UserKey are the user rules that cut CustomMatch and
// CustomKeyVal.
const (
	UserPattern = `INTERNAL-[0-9]{6}`
	UserKey     = "x_internal_auth"
)

// Secrets lists every sample's secret text, none of which may survive
// redaction.
func Secrets() []string {
	return append([]string{GitHubToken, GitHubPAT, GitLabToken, SlackToken, OpenAIKey, AWSKeyID, AWSSecret, JWT,
		BearerToken, BasicAuth, CookieVal, PEMBody, URLPassword, Password, APIKey, CustomKeyVal, CustomMatch,
		SecretVal, TokenVal, Credential, PrivateKey, OtherAuth, StripeKey, GoogleAPIKey, HFToken, VaultToken, NPMToken, PyPIToken, RegistryAuth, JSONSecret,
		DiscordWebhookToken, PuTTYPrivate}, VendorTokens()...)
}

// VendorTokens lists the samples of the other vendors' formats.
func VendorTokens() []string {
	return []string{DigitalOceanToken, SendGridKey, ShopifyToken, DatabricksToken, GrafanaToken, SentryToken,
		AgeSecretKey, LinearKey, PulumiToken, DopplerToken, PostmanKey, AtlassianToken, DockerHubToken, GoogleOAuthToken,
		GroqKey, XAIKey, ReplicateToken, LangSmithKey}
}

// Argv is a command line with a secret of every kind, flags and their
// values in separate elements as an exec's argv holds them.
func Argv() []string {
	return []string{
		"sh", "-c", "curl",
		"-H", "Authorization: Bearer " + BearerToken,
		"-H", "Proxy-Authorization: Basic " + BasicAuth,
		"--aws-access-key-id", AWSKeyID,
		"--secret-access-key", AWSSecret,
		"https://alice:" + URLPassword + "@git.example.com/r.git",
		"--password", Password,
		"--api-key=" + APIKey,
		"--" + UserKey, CustomKeyVal,
		GitHubToken, GitHubPAT, GitLabToken, SlackToken, OpenAIKey, JWT, CustomMatch,
		PEMBlock,
		"--token-file", "/var/run/secrets/token",
	}
}

// Env is an environment with secrets in values named for them.
func Env() map[string]string {
	return map[string]string{
		"DB_PASSWORD":           Password,
		"AWS_SECRET_ACCESS_KEY": AWSSecret,
		"GITHUB_TOKEN":          GitHubToken,
		"OPENAI_API_KEY":        OpenAIKey,
		"CLIENT_SECRET":         SecretVal,
		"VAULT_TOKEN":           TokenVal,
		"SERVICE_CREDENTIAL":    Credential,
		"SIGNING_PRIVATE_KEY":   PrivateKey,
		"HOME":                  "/home/agent",
		// JSON text in values: a registry login, and an OAuth client's
		// secret after an escaped quote
		"DOCKER_CONFIG_JSON": `{"auths":{"ghcr.io":{"auth":"` + RegistryAuth + `"}}}`,
		"OAUTH_CLIENT_JSON":  `{"client_id":"app","client_secret":"p\"` + JSONSecret + `"}`,
	}
}

// Text is free text (an error message, command output) holding a secret
// of every kind.
func Text() string {
	return strings.Join([]string{
		"Authorization: Bearer " + BearerToken,
		"Authorization: Basic " + BasicAuth,
		"Authorization: " + OtherAuth,
		"Cookie: theme=dark; sid=" + CookieVal,
		"export CLIENT_SECRET=" + SecretVal + " VAULT_TOKEN=" + TokenVal,
		"login --credential " + Credential + " --private-key=" + PrivateKey,
		"export AWS_ACCESS_KEY_ID=" + AWSKeyID,
		"aws_secret_access_key = " + AWSSecret,
		"cloning https://alice:" + URLPassword + "@git.example.com/r.git",
		"DB_PASSWORD=" + Password + " psql",
		"X-Api-Key: " + APIKey,
		UserKey + "=" + CustomKeyVal,
		"vendors " + strings.Join(VendorTokens(), " "),
		"webhook " + DiscordWebhook,
		"tokens " + GitHubToken + " " + GitHubPAT + " " + GitLabToken + " " + SlackToken + " " + OpenAIKey + " " + StripeKey + " " + GoogleAPIKey + " " + HFToken + " " + VaultToken + " " + NPMToken + " " + PyPIToken + " " + JWT + " " + CustomMatch,
		PEMBlock,
		PuTTYKey,
	}, "\n")
}
