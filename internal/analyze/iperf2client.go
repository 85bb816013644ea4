package analyze

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
)

// maxParamsJSON is the longest parameter JSON an iperf3 server accepts
// (MAX_PARAMS_JSON_STRING, src/iperf_api.h, 3.18 and later): a client's
// real parameters are a few hundred bytes.
const maxParamsJSON = 8 * 1024

// iperf2Client names an iperf2 client at an iperf3 server. The server
// reads a 37-byte cookie, then a 4-byte length and that much JSON; an
// iperf2 client sends its test data instead (ASCII '0'..'9' repeating),
// so the "length" is four digits, hundreds of megabytes, and the read
// fails with "unable to receive parameters from client".
// For: that failure with no iperf3 client in the paste; a length whose
// four bytes are ASCII digits; an iperf2 client's own "Client connecting
// to" line. Against: an iperf3 client's lines in the paste (the client
// was iperf3), or a length an iperf3 client sends (8 KiB or less: its
// parameters started and did not all arrive).
func (a *analysis) iperf2Client(c iperfCtrlFacts, hits []diagnose.ErrorHit) {
	var params, length *diagnose.ErrorHit
	for i := range hits {
		switch hits[i].Signature.ID {
		case "iperf3-params-not-received":
			params = &hits[i]
		case "iperf3-json-length-read":
			length = &hits[i]
		}
	}
	if params == nil || c.client {
		return
	}
	ev := fmt.Sprintf("line %d: %s; no iperf3 client line (Connecting to host, Control connection MSS) in the paste", params.Line, params.First)
	if length != nil {
		n, ok := jsonLength(length.First)
		if ok && n <= maxParamsJSON {
			return
		}
		if ok && asciiDigits(n) {
			ev += fmt.Sprintf("; the length read, %d, is the four ASCII digits %q: iperf2's payload", n, digitsOf(n))
		}
	}
	if c.iperf2Client != "" {
		ev += "; an iperf2 client's line: " + c.iperf2Client
	}
	a.cause(1.05, report.Fail, "iperf3.iperf2-client",
		"an iperf2 client most likely connected to the iperf3 server: the server found no iperf3 test parameters after the cookie, which is what an iperf2 client's test data gives it (iperf2 and iperf3 do not interoperate); else another program sent to the port, or an iperf3 client's parameters were lost: nothing was measured",
		ev,
		"run iperf3 at both ends (iperf3 -v prints 'iperf 3.x'; iperf2's -v prints 'iperf version 2.x'; phone and Windows 'iperf' apps are often iperf2), or iperf2 at both ends (iperf -s on the server)",
		"https://github.com/esnet/iperf/blob/3.19/src/iperf_api.c (iperf_exchange_parameters and JSON_read: a 4-byte length, then the JSON; MAX_PARAMS_JSON_STRING 8 KiB in iperf_api.h); https://github.com/esnet/iperf/issues/710 and /530 (the maintainer: an iperf2 client cannot connect to an iperf3 server); iperf3's manual, --repeating-payload (iperf2's payload is ASCII '0..9' repeating)")
}

// jsonLength reads the length an iperf3 JSON_read warning names: "expected
// N bytes" or "overflow - N bytes".
func jsonLength(line string) (uint32, bool) {
	for _, key := range []string{"expected ", "overflow - "} {
		if _, rest, ok := strings.Cut(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, false
			}
			return uint32(n), true // printed with %d: a length over 2^31 reads negative
		}
	}
	return 0, false
}

// asciiDigits: every byte of the big-endian length is '0'..'9'.
func asciiDigits(n uint32) bool {
	for _, b := range []byte(digitsOf(n)) {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

func digitsOf(n uint32) string {
	return string([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
