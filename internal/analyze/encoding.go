package analyze

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

type utf16Enc struct {
	name   string
	endian unicode.Endianness
	bom    bool
}

func (e *utf16Enc) decoder() *encoding.Decoder {
	policy := unicode.IgnoreBOM
	if e.bom {
		policy = unicode.ExpectBOM
	}
	return unicode.UTF16(e.endian, policy).NewDecoder()
}

// utf16Of tells a UTF-16 text (PowerShell's and Windows editors' default
// when a log is redirected or saved) by its byte-order mark, or without
// one by ASCII text's every other byte being NUL.
func utf16Of(br *bufio.Reader) *utf16Enc {
	b, _ := br.Peek(512)
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return &utf16Enc{"UTF-16LE", unicode.LittleEndian, true}
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return &utf16Enc{"UTF-16BE", unicode.BigEndian, true}
	}
	if len(b) < 16 {
		return nil
	}
	b = b[:len(b)&^1]
	var even, odd int
	for i := 0; i < len(b); i += 2 {
		if b[i] == 0 {
			even++
		}
		if b[i+1] == 0 {
			odd++
		}
	}
	half := len(b) / 2
	switch {
	case odd*10 >= half*9 && even*10 < half:
		return &utf16Enc{"UTF-16LE", unicode.LittleEndian, false}
	case even*10 >= half*9 && odd*10 < half:
		return &utf16Enc{"UTF-16BE", unicode.BigEndian, false}
	}
	return nil
}

// skipNULs discards the NUL bytes at the start of the input (a log
// truncated in place by logrotate's copytruncate while its writer kept its
// offset reads as a run of NULs, then the new lines) and counts them.
func skipNULs(br *bufio.Reader) (int64, error) {
	var n int64
	for {
		b, err := br.Peek(64 << 10)
		i := 0
		for i < len(b) && b[i] == 0 {
			i++
		}
		if _, derr := br.Discard(i); derr != nil {
			return n, derr
		}
		n += int64(i)
		if i < len(b) || len(b) == 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
	}
}

// verbatimSample keeps the lines inside a framed sample's VERBATIM blocks.
func verbatimSample(sample []byte) []byte {
	var out []byte
	inside := false
	for len(sample) > 0 {
		line := sample
		if i := bytes.IndexByte(sample, '\n'); i >= 0 {
			line, sample = sample[:i+1], sample[i+1:]
		} else {
			sample = nil
		}
		switch string(bytes.TrimRight(line, "\r\n")) {
		case verbatimBegin:
			inside = true
			continue
		case verbatimEnd:
			inside = false
			continue
		}
		if inside {
			out = append(out, line...)
		}
	}
	return out
}

// skipLongLeading discards the lines at the start that are longer than the
// detection sample (a progress bar redrawn with carriage returns, a blob
// without newlines), so that detection sees the text after them. It counts
// them.
func skipLongLeading(br *bufio.Reader) (int, error) {
	n := 0
	for {
		s, err := br.Peek(sampleSize)
		if t := bytes.TrimLeft(s, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') && jsonDocument(t) && n == 0 {
			return 0, nil // a JSON document on one line is read whole, not skipped
		}
		if len(s) < sampleSize || bytes.IndexByte(s, '\n') >= 0 {
			if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
				return n, err
			}
			return n, nil
		}
		for {
			_, err := br.ReadSlice('\n')
			if err == nil || err == io.EOF {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return n, err
			}
		}
		n++
	}
}
