// Package browser tests sandboxaudit serve in a real headless Chromium.
// It lives in the bench module so that chromedp and its protocol types
// stay out of the main module's dependencies.
package browser
