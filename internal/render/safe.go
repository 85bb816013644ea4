package render

import (
	"fmt"
	"io"
	"strings"
)

// esc stands for ESC in sparkrig's own colour codes until the output is
// cleaned: a private-use rune that no input can make reach the terminal as
// an escape, since Clean turns only this marker into ESC and shows every
// control character that came from outside.
const esc = "\uE01B"

// Clean makes text safe for a terminal or a Markdown page: control
// characters (from logs, snapshots, node names, file names) are shown as
// \xNN rather than sent, newlines and tabs stay, and sparkrig's own colour
// markers become real escape sequences.
func Clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\uE01B':
			b.WriteByte(0x1b)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Line is Clean for a value that must stay on one line (a host name, a
// subject, a file name): newlines and tabs are shown too.
func Line(s string) string {
	s = strings.ReplaceAll(s, "\n", `\x0a`)
	return strings.ReplaceAll(s, "\t", `\x09`)
}

func unsafeRune(r rune) bool {
	return r == '\uE01B' || r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f)
}

// cleanWriter passes everything written through Clean.
type cleanWriter struct{ w io.Writer }

func (c cleanWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, Clean(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safe wraps w so a renderer's output is cleaned exactly once.
func safe(w io.Writer) io.Writer {
	if _, ok := w.(cleanWriter); ok {
		return w
	}
	return cleanWriter{w}
}
