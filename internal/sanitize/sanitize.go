// Package sanitize is the one place that makes text from outside (logs,
// snapshots, node names, file names, command output) safe to show: on a
// terminal or in a text file, in Markdown, and as Prometheus label values.
//
// What a terminal or viewer would act on rather than show is written as a
// visible escape, never decoded: C0 and C1 control characters as \xNN,
// bidirectional overrides and isolates, line and paragraph separators, the
// byte order mark and private-use characters as \uXXXX (\UXXXXXXXX past
// the Basic Multilingual Plane). Newlines and tabs stay in Text; Line shows
// them too.
//
// sparkrig's own colours travel in its output as SGR markers (Colour) that
// only a Writer turns into escape sequences. A marker carries a key drawn
// at random when the process starts and never written out, so no input can
// forge one: the same private-use character without the key is escaped like
// any other.
package sanitize

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Mark starts every colour marker: a private-use character followed by the
// process's key. Renderers measuring text skip Mark + "[" ... "m" as taking
// no columns.
var Mark = newMark()

func newMark() string {
	var key [8]byte
	rand.Read(key[:]) // never fails on Linux (crypto/rand panics rather than return short)
	var b strings.Builder
	b.WriteRune('\uE01B')
	for _, k := range key {
		b.WriteRune(0xE000 + rune(k)) // private-use: escaped wherever it comes from outside
	}
	return b.String()
}

// Colour is sparkrig's own SGR sequence ESC [ code m as a marker ("31",
// "1;31", "0").
func Colour(code string) string { return Mark + "[" + code + "m" }

// Text makes s safe for a terminal or a text file: newlines and tabs stay,
// every other control character, bidi control, separator and private-use
// character is shown as an escape. Colour markers are escaped too: only a
// Writer turns them into colour.
func Text(s string) string { return clean(s, false, false) }

// Line is Text for a value that must stay on one line (a host name, a
// subject, a file name): newlines, carriage returns and tabs are shown too.
func Line(s string) string { return clean(s, true, false) }

// Markdown makes s inline Markdown text that renders as written: Line, and
// every character that could start a link, an image, raw HTML (a comment
// included), an entity, code or emphasis is backslash-escaped.
func Markdown(s string) string {
	s = Line(s)
	if !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(mdSpecial, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdSpecial are the ASCII punctuation characters CommonMark gives a meaning
// inline (all may be backslash-escaped); '_' is left, since names hold it
// (all_gather, nvidia_peermem) and within a word it makes no emphasis.
const mdSpecial = "\\`*[]<>!&|~#"

// LabelValue makes s a Prometheus label value: Text's escapes first, then
// the exposition format's own (backslash, double quote and newline), so the
// value holds no raw control character and parses back to the visible text.
func LabelValue(s string) string {
	return labelEscaper.Replace(Text(s))
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// Unsafe reports whether r is shown as an escape (outside Line's newline
// and tab).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r < 0x200b: // fast path: nothing below U+200B past the C1 block, but U+061C
		return r == 0x061c
	case r == 0x200b, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	case unicode.Is(unicode.Bidi_Control, r):
		return true
	}
	return privateUse(r)
}

func privateUse(r rune) bool {
	return r >= 0xe000 && r <= 0xf8ff || r >= 0xf0000 && r <= 0xffffd || r >= 0x100000 && r <= 0x10fffd
}

func clean(s string, line, marks bool) string {
	if !needsWork(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		if marks && s[i] == 0xee && strings.HasPrefix(s[i:], Mark) {
			b.WriteByte(0x1b)
			i += len(Mark)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString("\uFFFD") // not UTF-8: shown as the replacement character
		case line && (r == '\n' || r == '\t'), r < 0x100 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsWork(s string, line bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && (line || c != '\n' && c != '\t') || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			// Only non-ASCII text can hold the rest: decode from here.
			for _, r := range s[i:] {
				if r == utf8.RuneError || Unsafe(r) || line && (r == '\n' || r == '\t') {
					return true
				}
			}
			return false
		}
	}
	return false
}

// Writer passes everything written through Text, and turns sparkrig's own
// colour markers (and only those) into escape sequences. Each Write is
// cleaned on its own: write whole lines or whole renderings.
type Writer struct{ w io.Writer }

// NewWriter wraps w; a Writer is returned as it is, so output is cleaned
// exactly once.
func NewWriter(w io.Writer) *Writer {
	if sw, ok := w.(*Writer); ok {
		return sw
	}
	return &Writer{w}
}

func (c *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, clean(string(p), false, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap is the writer underneath, for output that is sparkrig's own alone
// (a progress line redrawn on a terminal).
func (c *Writer) Unwrap() io.Writer { return c.w }

// JSON escapes, in an encoded JSON document, every rune Unsafe would show
// as an escape and that encoding/json leaves as it is (DEL, the C1
// controls, bidi and zero-width marks, private use) as JSON's \u escapes:
// the document decodes to the very same values, and a terminal that shows
// it acts on none of them.
func JSON(b []byte) []byte {
	i := asciiPrefix(b)
	if i == len(b) {
		return b
	}
	return appendJSON(make([]byte, 0, len(b)+64), b, i)
}

// AppendJSON appends what JSON returns for b to dst: a writer of many
// blocks reuses one buffer.
func AppendJSON(dst, b []byte) []byte {
	i := asciiPrefix(b)
	if i == len(b) {
		return append(dst, b...)
	}
	return appendJSON(dst, b, i)
}

// asciiPrefix is the length of b's prefix of bytes below 0x7f, read
// eight at a time.
func asciiPrefix(b []byte) int {
	i := 0
	for i+8 <= len(b) && below7f(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	return i
}

// appendJSON appends b escaped to out, the i bytes before b[i] (a byte of
// 0x7f or more) as they are.
func appendJSON(out, b []byte, i int) []byte {
	out = append(out, b[:i]...)
	for i < len(b) {
		// a run of ASCII that Unsafe passes is copied as one: a document
		// with one non-ASCII rune near its top is otherwise decoded rune
		// by rune to its end
		j := i
		for {
			// eight safe ASCII bytes at a time (an indented document's
			// newlines too); a word the test refuses byte by byte
			for j+8 <= len(b) && safe8(binary.LittleEndian.Uint64(b[j:])) {
				j += 8
			}
			k := min(j+8, len(b))
			for j < k && asciiSafe[b[j]] {
				j++
			}
			if j < k || j == len(b) {
				break
			}
		}
		out = append(out, b[i:j]...)
		if i = j; i == len(b) {
			break
		}
		r, n := utf8.DecodeRune(b[i:])
		if !Unsafe(r) || r == utf8.RuneError && n == 1 {
			out = append(out, b[i:i+n]...)
		} else if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// printable8: every byte of x is printable ASCII, 0x20 to 0x7e: none has
// its high bit set, none is below 0x20, none is 0x7f, each told for the
// eight bytes at once.
func printable8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	low := (x - 0x20*ones) &^ x
	y := x ^ 0x7f*ones
	del := (y - ones) &^ y
	return (x|low|del)&highs == 0
}

// safe8: every byte of x is printable ASCII or '\n' (an indented
// document's lines): printable8 of x with each '\n' byte, found exactly
// (no borrow crosses a byte), given bit 5 ('\n' reads as '*'). A '\t',
// rare, is left to the test of each byte.
func safe8(x uint64) bool {
	const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	nl := x ^ '\n'*ones
	// 0x80 in each byte of nl that is zero
	return printable8(x | ^(nl&low7+low7|nl|low7)>>2)
}

// below7f: every byte of x is below 0x7f (one of 0x7f adds up to 0x80,
// one of 0x80 or more has its high bit; a carry comes only out of 0xff).
func below7f(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x|(x+ones))&highs == 0
}

// asciiSafe holds the ASCII bytes Unsafe passes: printable ones, '\n' and '\t'.
var asciiSafe = func() (t [256]bool) {
	for c := range 0x80 {
		t[c] = !Unsafe(rune(c))
	}
	return t
}()
