package redact

import (
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestDiscordWebhook: a Discord webhook URL is a credential (anyone who has
// it can post as the webhook); its token, the segment after the webhook's
// id, is cut on discord.com, discordapp.com and their ptb. and canary.
// hosts, with an API version in the path or not. The id and what follows
// the token stay.
func TestDiscordWebhook(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	tok := redacttest.DiscordWebhookToken
	assertCountedCuts(t, r, []countedCut{
		{`curl -H "Content-Type: application/json" -d '{"content":"hi"}' https://discord.com/api/webhooks/1234567890123456789/` + tok + ` && echo ok`,
			`curl -H "Content-Type: application/json" -d '{"content":"hi"}' https://discord.com/api/webhooks/1234567890123456789/[REDACTED:discord_webhook] && echo ok`, 1},
		{"https://discordapp.com/api/webhooks/123456789012345678/" + tok + "?wait=true",
			"https://discordapp.com/api/webhooks/123456789012345678/[REDACTED:discord_webhook]?wait=true", 1},
		{"https://canary.discord.com/api/v10/webhooks/123456789012345678/" + tok + "/messages/1",
			"https://canary.discord.com/api/v10/webhooks/123456789012345678/[REDACTED:discord_webhook]/messages/1", 1},
		{`{"url":"https://PTB.Discord.com/api/webhooks/123456789012345678/` + tok + `/github"}`,
			`{"url":"https://PTB.Discord.com/api/webhooks/123456789012345678/[REDACTED:discord_webhook]/github"}`, 1},
	})
	assertData(t, r, []dataCase{{`{"data":"https://discord.com/api/webhooks/123456789012345678/` + tok + `"}`,
		`{"data":"https://discord.com/api/webhooks/123456789012345678/[REDACTED:discord_webhook]"}`}})
	assertKept(t, r,
		"https://discord.com/api/webhooks/123456789012345678",
		"https://discord.com/api/webhooks/123456789012345678/",
		"https://discord.com/api/webhooks/abc/"+tok,
		"https://discord.com/api/v10/channels/123456789012345678/messages",
		"https://discord.com/developers/docs/resources/webhook",
		"https://notdiscord.com/api/webhooks/123456789012345678/"+tok,
		"https://discord.com.evil.example/api/webhooks/1/x",
		"https://discord.com/api/vx/webhooks/123456789012345678/"+tok,
	)
}

// TestWebhookWithAPort: a webhook URL that names its port (:443) is cut as
// one without, Slack's and Discord's.
func TestWebhookWithAPort(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertCountedCuts(t, r, []countedCut{
		{"https://discord.com:443/api/webhooks/1234567890123456789/" + redacttest.DiscordWebhookToken,
			"https://discord.com:443/api/webhooks/1234567890123456789/[REDACTED:discord_webhook]", 1},
		{"https://hooks.slack.com:443/services/T0000000/B0000000/" + "XXXXXXXXXXXXXXXXXXXXXXXX",
			"https://hooks.slack.com:443/services/T0000000/B0000000/[REDACTED:slack_token]", 1},
	})
	assertKept(t, r, "https://discord.com:443/channels/1234567890123456789/1234567890123456789")
}
