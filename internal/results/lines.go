package results

import (
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
// instead of stopping silently. It reads into one buffer of at most
// maxBuffer bytes and hands out slices of it, so a line costs no copy and
// no allocation, and memory stays constant whatever the input's size.
type LineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // buf[start:end] is read but not yet returned
	err        error
	n          int
	read       int64
	// skipLong makes a line over MaxLineBytes skipped (and counted in
	// skipped) instead of an error; discarding is set inside such a line.
	skipLong, discarding bool
	skipped              int
	// cr is the offset in buf of the first '\r' at or after the start of
	// the line last returned (end when none); crKnown is false once a fill
	// has moved or added to the buffer
	cr      int
	crKnown bool
	// lastCR: the line last returned held a '\r' before its ending
	lastCR bool
}

// SkipLongLines makes the reader skip lines over MaxLineBytes (a progress
// bar redrawn without newlines, a binary blob) rather than stop at them.
func (lr *LineReader) SkipLongLines() { lr.skipLong = true }

// Skipped is how many lines over MaxLineBytes were skipped.
func (lr *LineReader) Skipped() int { return lr.skipped }

// ReadBufferSize is the least the LineReader asks for in one read once its
// buffer has grown (unless a longer line is pending); a *bufio.Reader of
// this size passed to NewLineReader hands such reads straight to the
// reader under it, without a copy.
const ReadBufferSize = 256 << 10

const (
	minBuffer = 16 << 10
	// maxBuffer holds the longest allowed line and one more read.
	maxBuffer = MaxLineBytes + ReadBufferSize
)

// LineSource hands out lines without their endings, each valid until the
// next call, and io.EOF at the end; Line is the number of the last one.
type LineSource interface {
	Next() ([]byte, error)
	Line() int
}

// NewLineReader returns a LineReader over r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: r}
}

// HasCR reports whether the line last returned by Next holds a '\r' (a
// terminal redraw) other than the one of a "\r\n" ending. It is told from
// one search over the buffer, not one per line: most logs have none.
func (lr *LineReader) HasCR() bool { return lr.lastCR }

// Line returns the number of the line last returned (1-based).
func (lr *LineReader) Line() int { return lr.n }

// Bytes returns how many bytes have been consumed.
func (lr *LineReader) Bytes() int64 { return lr.read }

// Next returns the next line without its line ending (\n or \r\n). The
// slice is valid until the next call. It returns io.EOF at the end.
func (lr *LineReader) Next() ([]byte, error) {
	for {
		rest := lr.buf[lr.start:lr.end]
		if lr.discarding {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				lr.read += int64(len(rest))
				lr.start = lr.end
				if lr.err != nil {
					lr.discarding = false
					return nil, lr.err
				}
				lr.fill()
				continue
			}
			lr.read += int64(i + 1)
			lr.start += i + 1
			lr.discarding = false
			continue
		}
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			if i+1 > MaxLineBytes && lr.skipLong {
				lr.skipLine(i + 1)
				continue
			}
			return lr.emit(rest[:i+1])
		}
		if len(rest) > MaxLineBytes {
			if lr.skipLong {
				lr.discarding = true
				lr.skipLine(len(rest))
				continue
			}
			return nil, lr.tooLong()
		}
		if lr.err != nil {
			if len(rest) > 0 {
				return lr.emit(rest)
			}
			return nil, lr.err
		}
		lr.fill()
	}
}

// skipLine drops n bytes of an over-long line and counts the line.
func (lr *LineReader) skipLine(n int) {
	lr.n++
	lr.skipped++
	lr.read += int64(n)
	lr.start += n
}

// emit consumes raw (one line with its ending) and returns it without the ending.
func (lr *LineReader) emit(raw []byte) ([]byte, error) {
	if len(raw) > MaxLineBytes {
		return nil, lr.tooLong()
	}
	from := lr.start
	if !lr.crKnown || lr.cr < from {
		lr.crKnown = true
		if i := bytes.IndexByte(lr.buf[from:lr.end], '\r'); i >= 0 {
			lr.cr = from + i
		} else {
			lr.cr = lr.end
		}
	}
	lr.start += len(raw)
	lr.n++
	lr.read += int64(len(raw))
	line := raw
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	// a '\r' before the ending, in this line's bytes
	lr.lastCR = lr.cr < from+len(line)
	return line, nil
}

func (lr *LineReader) tooLong() error {
	lr.n++
	lr.err = fmt.Errorf("line %d: %w (over %d bytes without a newline)", lr.n, ErrLineTooLong, MaxLineBytes)
	lr.start, lr.end = 0, 0
	return lr.err
}

// fill moves the unfinished line to the front of the buffer, grows the
// buffer when it is full, and reads once into the free space.
func (lr *LineReader) fill() {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	lr.crKnown = false
	if free := len(lr.buf) - lr.end; free < ReadBufferSize && len(lr.buf) < maxBuffer {
		size := max(minBuffer, min(2*len(lr.buf), maxBuffer))
		buf := make([]byte, size)
		copy(buf, lr.buf[:lr.end])
		lr.buf = buf
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.err = io.ErrNoProgress
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

// ObserveQuietInfo hands l the lines at the reader's position that
// NCCLLog.ObserveQuietLines reads (NCCL INFO lines that report no
// failure, of an opening seen before) and returns how many: one loop over
// the buffer instead of a call of each reader on the way per line. The
// line it stops at is left to Next.
func (lr *LineReader) ObserveQuietInfo(l *NCCLLog) int {
	// a line that does not open with a lower-case letter is none
	// (ObserveQuietLines' first test, without its call)
	if lr.discarding || lr.end-lr.start < 2 || lr.buf[lr.start]-'a' > 'z'-'a' {
		return 0
	}
	if !lr.crKnown || lr.cr < lr.start {
		lr.crKnown = true
		if j := bytes.IndexByte(lr.buf[lr.start:lr.end], '\r'); j >= 0 {
			lr.cr = lr.start + j
		} else {
			lr.cr = lr.end
		}
	}
	n, lines := l.ObserveQuietLines(lr.buf[lr.start:lr.end], lr.cr-lr.start)
	if lines > 0 {
		lr.start += n
		lr.n += lines
		lr.read += int64(n)
		lr.lastCR = false
	}
	return lines
}
