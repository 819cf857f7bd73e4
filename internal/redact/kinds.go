package redact // import "github.com/sandboxaudit/sandboxaudit/internal/redact"

// Kind is what a cut held; its name is the marker's and the metric's.
type Kind uint8

// The kinds, in the order Counts reports them.
const (
	KindAuthorization Kind = iota
	KindBearerToken
	KindBasicAuth
	KindCookie
	KindJWT
	KindAWSAccessKey
	KindAWSSecretKey
	KindGitHubToken
	KindGitLabToken
	KindSlackToken
	KindOpenAIKey
	KindStripeKey
	KindGoogleAPIKey
	KindHuggingFaceToken
	KindVaultToken
	KindNPMToken
	KindPyPIToken
	KindDigitalOceanToken
	KindSendGridKey
	KindShopifyToken
	KindDatabricksToken
	KindGrafanaToken
	KindSentryToken
	KindAgeSecretKey
	KindLinearKey
	KindPulumiToken
	KindDopplerToken
	KindPostmanKey
	KindAtlassianToken
	KindDockerHubToken
	KindGoogleOAuthToken
	KindGroqKey
	KindXAIKey
	KindReplicateToken
	KindLangSmithKey
	KindDiscordWebhook
	KindPEMPrivateKey
	KindPuTTYPrivateKey
	KindURLPassword
	KindPassword
	KindSecret
	KindToken
	KindAPIKey
	KindCredential
	KindPrivateKey
	KindCustomKey
	KindCustomPattern
	numKinds
)

var kindNames = [numKinds]string{
	"authorization", "bearer_token", "basic_auth", "cookie", "jwt", "aws_access_key", "aws_secret_key",
	"github_token", "gitlab_token", "slack_token", "openai_key", "stripe_key",
	"google_api_key", "huggingface_token", "vault_token", "npm_token", "pypi_token",
	"digitalocean_token", "sendgrid_key", "shopify_token", "databricks_token", "grafana_token", "sentry_token",
	"age_secret_key", "linear_key", "pulumi_token", "doppler_token", "postman_key", "atlassian_token", "dockerhub_token",
	"google_oauth_token", "groq_key", "xai_key", "replicate_token", "langsmith_key",
	"discord_webhook", "pem_private_key", "putty_private_key", "url_password",
	"password", "secret", "token", "api_key", "credential", "private_key", "custom_key", "custom_pattern",
}

// String is the kind's name, as markers and metrics spell it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// KindNames lists every kind's name.
func KindNames() []string { return append([]string(nil), kindNames[:]...) }

// Counts is how many cuts of each kind a call made; the values cut are
// never kept.
type Counts [numKinds]int

// Add adds o to c.
func (c *Counts) Add(o *Counts) {
	for i, n := range o {
		c[i] += n
	}
}

// Each calls f for every kind with a non-zero count.
func (c *Counts) Each(f func(kind string, n int)) {
	for i, n := range c {
		if n > 0 {
			f(kindNames[i], n)
		}
	}
}

// Total is the number of cuts of every kind.
func (c *Counts) Total() int {
	t := 0
	for _, n := range c {
		t += n
	}
	return t
}
