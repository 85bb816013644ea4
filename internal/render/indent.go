package render

import "bytes"

// indentJSON is json.Indent(dst, src, "", "  ") for src as json.Marshal
// writes it (one compact, valid value, no blank outside its strings):
// the same bytes, without the validating scanner's step per byte (most
// of a large report's rendering). Strings are copied a run at a time.
func indentJSON(dst, src []byte) []byte {
	dst, _ = indentJSONBlocks(dst, src, 0, nil)
	return dst
}

// indentJSONBlocks is indentJSON handing dst to flush (which returns what
// to go on with) whenever it holds block bytes or more after an element's
// comma: a block never ends inside a string, so a rune is never cut. The
// first error flush returns stops it: nothing more is indented, and the
// error is returned. A nil flush is never called.
func indentJSONBlocks(dst, src []byte, block int, flush func([]byte) ([]byte, error)) ([]byte, error) {
	depth := 0
	// open: the last byte written opened an object or array, whose
	// newline waits for its first element ({} and [] stay as they are)
	open := false
	for i := 0; i < len(src); {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = newline(dst, depth)
		}
		switch c {
		case '"':
			j := stringEnd(src, i+1)
			dst = append(dst, src[i:j]...)
			i = j
			continue
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = newline(append(dst, c), depth)
			if flush != nil && len(dst) >= block {
				var err error
				if dst, err = flush(dst); err != nil {
					return dst, err
				}
			}
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
		i++
	}
	return dst, nil
}

// stringEnd is the offset just past the closing quote of the string
// whose text starts at src[from] (len(src) when it has none).
func stringEnd(src []byte, from int) int {
	for {
		q := bytes.IndexByte(src[from:], '"')
		if q < 0 {
			return len(src)
		}
		e := bytes.IndexByte(src[from:from+q], '\\')
		if e < 0 {
			return from + q + 1
		}
		from += e + 2 // a backslash and the byte it escapes
		if from >= len(src) {
			return len(src)
		}
	}
}

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
