package analyze

import (
	"bytes"
	"encoding/json"
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

// iperf3StreamErrors are the error events of an iperf3 --json-stream
// output in a paste ({"event":"error","data":"..."}: the -J document's
// "error", src/iperf_api.c iperf_json_finish), each read by the signatures
// as the line iperf3 prints without -J; raw keeps the event lines by
// number, so that a hit's evidence is the paste's own line.
type iperf3StreamErrors struct {
	raw map[int]string
}

var litStreamError = []byte(`{"event":"error"`)

// maxStreamErrors bounds the event lines kept: the first are evidence
// enough.
const maxStreamErrors = 16

// iperf3StreamErrorLine is the line iperf3 prints for an error event
// without --json-stream, false for any other line.
func iperf3StreamErrorLine(line []byte) ([]byte, bool) {
	// the event stands at the line's start, or behind a prefix the paste
	// reader does not know
	i := bytes.Index(line, litStreamError)
	if i < 0 {
		return nil, false
	}
	var ev struct {
		Event string `json:"event"`
		Data  string `json:"data"`
	}
	if json.Unmarshal(line[i:], &ev) != nil || ev.Event != "error" || ev.Data == "" {
		return nil, false
	}
	return []byte("iperf3: error - " + strings.TrimPrefix(ev.Data, "error - ")), true
}

// translate returns the line the signatures read for line number n.
func (s *iperf3StreamErrors) translate(n int, line []byte) []byte {
	ev, ok := iperf3StreamErrorLine(line)
	if !ok {
		return line
	}
	if s.raw == nil {
		s.raw = map[int]string{}
	}
	if len(s.raw) < maxStreamErrors {
		s.raw[n] = string(line[:min(len(line), 400)])
	}
	return ev
}

// restore puts the event lines back as the evidence of the hits they
// gave.
func (s *iperf3StreamErrors) restore(hits []diagnose.ErrorHit) []diagnose.ErrorHit {
	for i := range hits {
		if raw, ok := s.raw[hits[i].Line]; ok {
			hits[i].First = strings.ToValidUTF8(raw, "?")
		}
	}
	return hits
}
