package analyze

import (
	"bytes"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
)

// iperf3JSONErrors matches the error an iperf3 -J document reports against
// the signatures, as the line iperf3 prints for it without -J ("iperf3:
// error - %s", src/main.c). A hit's evidence is the document's own line.
func iperf3JSONErrors(data []byte, msg string) []diagnose.ErrorHit {
	if msg == "" {
		return nil
	}
	sigs, err := expect.Signatures()
	if err != nil {
		return nil
	}
	line, raw := 1, msg
	if i := bytes.LastIndex(data, []byte(`"error"`)); i >= 0 {
		line += bytes.Count(data[:i], []byte("\n"))
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data) - i
		}
		raw = string(bytes.TrimSpace(data[i : i+end]))
	}
	m := diagnose.NewErrorMatcher(sigs)
	// iperf_err puts its whole text in "error" ("error - %s" for most),
	// the client's failure iperf_strerror's alone
	m.ObserveAt(line, []byte("iperf3: error - "+strings.TrimPrefix(msg, "error - ")))
	hits := m.Hits()
	for i := range hits {
		hits[i].First = raw
	}
	return hits
}

// iperf3ErrorKnown: one of the hits is the line of the iperf3 error the
// result reports, so the error's cause is named rather than unknown.
func iperf3ErrorKnown(hits []diagnose.ErrorHit, msg string) bool {
	if msg == "" {
		return false
	}
	for _, h := range hits {
		if strings.Contains(h.First, msg) {
			return true
		}
	}
	return false
}
