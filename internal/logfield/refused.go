package logfield

import (
	"fmt"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// SpansRefused is the error of a batch whose sandbox spans were all
// refused (nil otherwise): see allRefused.
func SpansRefused(st spanmap.Stats, written int) error {
	if st.Invalid == 0 || written > 0 {
		return nil
	}
	return allRefused(fmt.Sprintf("%d sandbox spans refused, none written; first: %s", st.Invalid, SpanAttrText(st.FirstInvalid)))
}

// RecordsRefused is SpansRefused for audit event log records.
func RecordsRefused(st logmap.Stats, written int) error {
	if st.Invalid == 0 || written > 0 {
		return nil
	}
	return allRefused(fmt.Sprintf("%d audit event records refused, none written; first: %s", st.Invalid, EventFieldText(st.FirstInvalid)))
}

// allRefused is permanent, and InvalidArgument so that the OTLP receiver
// answers 400 (a bare permanent error is a 500, the server's fault): the
// client, a DeliverySync write-ahead caller among them, learns that
// nothing was recorded and does not resend it. A batch with anything
// written succeeds: a component cannot answer OTLP's partial success, and
// failing it would report the written events as dropped.
func allRefused(msg string) error {
	return consumererror.NewPermanent(status.Error(codes.InvalidArgument, msg))
}
