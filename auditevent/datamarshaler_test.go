package auditevent_test

import (
	"net"
	"testing"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// hexDigest is a byte slice with its own JSON form, as a caller's digest
// type would be.
type hexDigest []byte

func (h hexDigest) MarshalJSON() ([]byte, error) { return []byte(`"ab01"`), nil }

// A value that says how it is written (a json.Marshaler or a
// TextMarshaler: net.IP, uuid.UUID) is written so, as encoding/json and
// the reference's pydantic write an address or a UUID: as its text, not
// as the bytes or array of numbers it is made of.
func TestMarshalDataUsesTheValuesOwnForm(t *testing.T) {
	id := uuid.MustParse("0b4e7c2a-3f1d-4c8e-9a6b-5d2f1e0c9b7a")
	d, err := auditevent.MarshalData(map[string]any{
		"ip": net.ParseIP("10.0.0.1"), "id": id, "sum": hexDigest{0xab, 0x01},
		"ips": []net.IP{net.ParseIP("::1")}, "ptr": &id,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"0b4e7c2a-3f1d-4c8e-9a6b-5d2f1e0c9b7a","ip":"10.0.0.1","ips":["::1"],"ptr":"0b4e7c2a-3f1d-4c8e-9a6b-5d2f1e0c9b7a","sum":"ab01"}`
	if d.String() != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
}
