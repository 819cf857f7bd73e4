package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"encoding/base64"
	"net/url"

	"go.opentelemetry.io/collector/config/confighttp"
)

// clientSecretValues is what a client's requests carry that no log may
// show: its header values, and its proxy's credentials as the password and
// as the Proxy-Authorization value net/http builds from them (a proxy
// refusing CONNECT may echo it in its reason phrase).
func clientSecretValues(cc *confighttp.ClientConfig) []string {
	var out []string
	for _, v := range cc.Headers.Iter {
		out = append(out, string(v))
	}
	if u, err := url.Parse(cc.ProxyURL); err == nil && u.User != nil {
		if pass, ok := u.User.Password(); ok {
			basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
			out = append(out, pass, "Basic "+basic)
		}
	}
	return out
}
