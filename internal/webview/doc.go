// Package webview is sandboxaudit serve: a read-only web view of an audit
// trail for an investigator's browser. Pages are rendered on the server
// with html/template from files embedded in the binary (no external
// scripts, fonts or CDNs), every field of the trail is escaped as
// untrusted text, and a Content-Security-Policy forbids any script.
package webview
