// Package secretlog keeps secrets out of what is logged about an HTTP
// endpoint: it lists the secrets of a client's configuration, redacts them
// from a response excerpt in every form an endpoint may echo them, withholds
// an excerpt that still echoes one, and tells a transport failure without
// the bytes the peer sent.
package secretlog
