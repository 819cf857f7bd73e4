package secretlog

import (
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTransportErrorKeepsItsCause(t *testing.T) {
	cause := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	err := TransportError(&url.Error{Op: "Post", URL: "http://u:PASSSECRET@h/", Err: cause}, nil)
	assert.Equal(t, cause.Error(), err.Error(), "nothing quoted: the message is the cause's")
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, `malformed HTTP status code (the response's bytes it quoted are withheld)`,
		TransportError(errors.New(`malformed HTTP status code "/v1?api_key=x"`), nil).Error())
	// A proxy refusing CONNECT: net/http's error is its reason phrase,
	// unquoted, and a proxy may echo Proxy-Authorization there.
	secrets := Secrets("http://h/v1", []string{"PROXYSECRET", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:PROXYSECRET"))})
	for _, echo := range []string{
		"you sent Basic " + base64.StdEncoding.EncodeToString([]byte("user:PROXYSECRET")),
		"you sent PROXYSECRET",
	} {
		got := TransportError(errors.New(echo), secrets).Error()
		assert.NotContains(t, got, "PROXYSECRET")
		assert.NotContains(t, got, base64.StdEncoding.EncodeToString([]byte("user:PROXYSECRET"))[4:])
		assert.Contains(t, got, "withheld")
	}
	assert.Equal(t, "Forbidden", TransportError(errors.New("Forbidden"), secrets).Error())
}
