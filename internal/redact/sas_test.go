package redact

import "testing"

// TestSASTokenInDataIsCut: a Service Bus, Event Hubs or IoT Hub SAS token
// alone in data, with no other trigger, passes the prefilter (its scheme
// is a long run) and its signature is cut, wherever sig stands.
func TestSASTokenInDataIsCut(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertData(t, r, []dataCase{
		{`{"data":"SharedAccessSignature sr=ns.servicebus.windows.net&sig=` + `q1w2e3r4t5y6&se=1700000000&skn=send"}`,
			`{"data":"SharedAccessSignature sr=ns.servicebus.windows.net&sig=[REDACTED:token]&se=1700000000&skn=send"}`},
		{`{"data":"SharedAccessSignature sig=` + `q1w2e3r4t5y6&se=1700000000&sr=hub.azure-devices.net%2Fdevices%2Fd1"}`,
			`{"data":"SharedAccessSignature sig=[REDACTED:token]&se=1700000000&sr=hub.azure-devices.net%2Fdevices%2Fd1"}`},
	})
	assertKept(t, r, "SharedAccessSignature sr=ns.servicebus.windows.net&se=1700000000&skn=send", "the sig= parameter")
}
