package analyze

import (
	"bufio"
	"bytes"
	"io"
)

// A framed sample (the form sparkrig's own test data and bug reports use)
// carries SOURCE:, NOTE: and CMD: lines around blocks of program output
// between these markers; the provenance is a header, never evidence.
const (
	verbatimBegin = "=== BEGIN VERBATIM ==="
	verbatimEnd   = "=== END VERBATIM ==="
)

// framed reports a sample that starts with a SOURCE: header and frames its
// output.
func framed(sample []byte) bool {
	t := bytes.TrimLeft(sample, " \t\r\n")
	return bytes.HasPrefix(t, []byte("SOURCE:")) && bytes.Contains(sample, []byte(verbatimBegin))
}

// verbatimReader passes on only the lines inside the VERBATIM blocks,
// streaming: a line of any length is handed on in pieces.
type verbatimReader struct {
	br        *bufio.Reader
	inside    bool
	lineStart bool
	buf       []byte
	err       error
}

func newVerbatimReader(br *bufio.Reader) *verbatimReader {
	return &verbatimReader{br: br, lineStart: true}
}

func (v *verbatimReader) Read(p []byte) (int, error) {
	for len(v.buf) == 0 {
		if v.err != nil {
			return 0, v.err
		}
		line, err := v.br.ReadSlice('\n')
		if v.lineStart {
			switch string(bytes.TrimRight(line, "\r\n")) {
			case verbatimBegin:
				v.inside, line = true, nil
			case verbatimEnd:
				v.inside, line = false, nil
			}
		}
		v.lineStart = err != bufio.ErrBufferFull
		if v.inside {
			v.buf = line // valid until the next ReadSlice, which waits for it to drain
		}
		if err != nil && err != bufio.ErrBufferFull {
			v.err = err
		}
	}
	n := copy(p, v.buf)
	v.buf = v.buf[n:]
	return n, nil
}

var _ io.Reader = (*verbatimReader)(nil)
