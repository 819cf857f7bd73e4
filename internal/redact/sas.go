package redact

import "strings"

// maxSASQuery bounds how far back a SAS signature's query is read for its
// version parameter.
const maxSASQuery = 512

// sasScheme starts a Service Bus, Event Hubs or IoT Hub SAS token
// (SharedAccessSignature sr=…&sig=…&se=…&skn=…), which has no sv=.
const sasScheme = "SharedAccessSignature "

// sasSignature cuts the signature of an Azure shared access signature, the
// sig parameter (s[i:j] is "sig", its value at v) of a query that also
// has sv= (the storage service version): ?sv=…&se=…&sig=SECRET in a URL or
// after SharedAccessSignature= in a connection string; or of a query after
// sasScheme. The signature alone grants the access, so it is cut as a
// token; the other parameters stay. It reports whether it cut.
func (sc *scanner) sasSignature(i, j, v int) (int, bool) {
	s := sc.s
	if j-i != 3 || s[i:j] != "sig" || i == 0 {
		return 0, false
	}
	if !strings.HasSuffix(s[:i], sasScheme) && (s[i-1] != '&' || !sasVersionBefore(s, i)) {
		return 0, false
	}
	lo, hi := v, v
	for hi < len(s) && token68[s[hi]] || hi < len(s) && s[hi] == '%' {
		hi++
	}
	return sc.cutValue(lo, hi, KindToken), true
}

// sasVersionBefore reports whether the query that the parameter at i is in
// holds sv= before it.
func sasVersionBefore(s string, i int) bool {
	from := max(0, i-maxSASQuery)
	q := s[from:i]
	if k := strings.LastIndexAny(q, "?; \t\n\"'"); k >= 0 {
		if strings.HasSuffix(s[:from+k+1], sasScheme) {
			return true
		}
		q = q[k+1:]
	}
	return strings.HasPrefix(q, "sv=") || strings.Contains(q, "&sv=") || strings.HasPrefix(q, "SharedAccessSignature=sv=")
}
