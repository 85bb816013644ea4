package health

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Prefix starts every line sparkrig writes for a node's health: a Slurm
// drain reason, a node condition's message. Only drains whose reason starts
// with it are ever resumed.
const Prefix = "sparkrig:"

// Summary is head followed by "<check id>: <subject>: <what was seen>" for
// the first finding, and how many more there are: "sparkrig: gpu.xid: GPU
// 0: Xid 79 (+2 more)". Control characters become spaces; it is cut to max
// bytes on a rune boundary.
func Summary(head string, fs []report.Finding, max int) string {
	if len(fs) == 0 {
		return cut(clean(head), max)
	}
	f := fs[0]
	text := f.Observed
	if text == "" {
		text = f.Title
	}
	if f.Subject != "" && f.Subject != "node" {
		text = f.Subject + ": " + text
	}
	more := ""
	if len(fs) > 1 {
		more = fmt.Sprintf(" (+%d more)", len(fs)-1)
	}
	head = clean(head) + " " + clean(f.ID) + ": "
	head = strings.TrimLeft(head, " ")
	return head + cut(clean(text), max-len(head)-len(more)) + more
}

// clean makes s one printable line.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to n bytes on a rune boundary, ending with "…" when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:max(n, 0)]) + "…"
}
