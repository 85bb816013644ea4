package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one line of text input. Benchmark outputs and NCCL logs
// have lines of a few hundred bytes; a longer "line" means the input is not
// text (a binary file, or gigabytes without a newline), and reading it whole
// would cost memory for nothing.
const MaxLineBytes = 1 << 20

// ErrLineTooLong is returned when a line exceeds MaxLineBytes.
var ErrLineTooLong = errors.New("line too long")

// LineReader reads lines with a bounded length from a stream. Unlike
// bufio.Scanner it reports an over-long line as an error naming its number
// instead of stopping silently, and it never holds more than one line.
type LineReader struct {
	r    *bufio.Reader
	buf  []byte
	n    int
	read int64
}

// ReadBufferSize is the LineReader's buffer; a *bufio.Reader of this size
// passed to NewLineReader is used as is.
const ReadBufferSize = 256 << 10

// NewLineReader returns a LineReader over r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, ReadBufferSize)}
}

// Line returns the number of the line last returned (1-based).
func (lr *LineReader) Line() int { return lr.n }

// Bytes returns how many bytes have been consumed.
func (lr *LineReader) Bytes() int64 { return lr.read }

// Next returns the next line without its line ending (\n or \r\n). The
// slice is valid until the next call. It returns io.EOF at the end.
func (lr *LineReader) Next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.buf = append(lr.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(lr.buf) > MaxLineBytes {
				lr.n++
				return nil, fmt.Errorf("line %d: %w (over %d bytes without a newline)", lr.n, ErrLineTooLong, MaxLineBytes)
			}
			line, err = lr.r.ReadSlice('\n')
			lr.buf = append(lr.buf, line...)
		}
		line = lr.buf
	}
	if len(line) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	if len(line) > MaxLineBytes {
		lr.n++
		return nil, fmt.Errorf("line %d: %w (over %d bytes without a newline)", lr.n, ErrLineTooLong, MaxLineBytes)
	}
	lr.n++
	lr.read += int64(len(line))
	// by hand: bytes.TrimSuffix costs a call to memequal per line
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// StripLauncherPrefix removes the per-line tags that job launchers add:
// Open MPI's --tag-output "[1,0]<stdout>:" and Slurm's srun --label "0: ".
func StripLauncherPrefix(line []byte) []byte {
	if len(line) > 0 && line[0] == '[' {
		i := bytes.Index(line, []byte("]<std"))
		if i > 0 && i < 24 {
			rest := line[i+5:]
			if bytes.HasPrefix(rest, []byte("out>:")) || bytes.HasPrefix(rest, []byte("err>:")) {
				return line[i+10:]
			}
		}
		return line
	}
	// srun --label: optional spaces, digits, ": ".
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j > i && j-i <= 6 && j+1 < len(line) && line[j] == ':' && line[j+1] == ' ' {
		return line[j+2:]
	}
	if j > i && j-i <= 6 && j+1 == len(line) && line[j] == ':' {
		return line[:0]
	}
	return line
}
