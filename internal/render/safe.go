package render

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// esc starts sparkrig's own colour markers (sanitize.Mark): only the writer
// safe returns turns them into escape sequences, and no input can make one.
var esc = sanitize.Mark

// safe wraps w so a renderer's output is cleaned exactly once.
func safe(w io.Writer) io.Writer { return sanitize.NewWriter(w) }

// lineWriter hands w whole lines (or, past maxPending bytes without a
// newline, whole runes), so that a template writing in pieces is cleaned a
// line at a time and a page is streamed instead of held whole.
type lineWriter struct {
	w   io.Writer
	buf []byte
}

// maxPending bounds what a lineWriter holds back waiting for a newline.
const maxPending = 1 << 20

func (l *lineWriter) Write(p []byte) (int, error) {
	// What is held has no newline: only p is searched for one.
	cut := 0
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		cut = len(l.buf) + i + 1
	}
	l.buf = append(l.buf, p...)
	if cut == 0 && len(l.buf) > maxPending {
		cut = len(l.buf)
		for cut > 0 && !utf8.RuneStart(l.buf[cut-1]) {
			cut--
		}
		if cut > 0 {
			cut-- // the last rune may be incomplete: keep it back
		}
	}
	if cut > 0 {
		if _, err := l.w.Write(l.buf[:cut]); err != nil {
			return 0, err
		}
		l.buf = l.buf[:copy(l.buf, l.buf[cut:])]
	}
	return len(p), nil
}

// Flush writes what is held back.
func (l *lineWriter) Flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}
