package analyze

import (
	"bytes"
	"io"

	"github.com/sparkrig/sparkrig/internal/results"
)

// What people paste is rarely a clean file: a forum post quotes it with
// "> ", a chat wraps it in a Markdown fence, a launcher, kubectl, syslog
// or Ray puts a tag and a timestamp in front of every line, Markdown
// turns nccl-tests' "# " header lines into headings and drops the "#", a
// progress bar redraws one line with carriage returns, logrotate's
// copytruncate leaves NUL bytes at the start. pasteReader hands the
// parsers the lines as the program printed them, streaming, in constant
// memory.

// maxPasteLine bounds one line handed on; a longer one (a progress bar
// without newlines, a binary blob) is skipped and counted.
const maxPasteLine = results.MaxLineBytes

// pasteStats says what the reader had to undo.
type pasteStats struct {
	LongLines   int   // lines over maxPasteLine, skipped
	Redrawn     int   // lines redrawn with '\r' (only the last drawing is kept)
	LeadingNULs int64 // NUL bytes skipped before the first line
	Restored    int   // nccl-tests header lines whose "#" Markdown had removed
	Unquoted    int   // lines that lost a quote, fence, list marker or tag
	// prefix is the tag in front of every line (docPrefix), removed first
	prefix []byte
	// scratch holds a line given back its "NCCL " tag (cutTag)
	scratch []byte
}

// pasteReader passes on normalised lines, each ending in '\n'.
type pasteReader struct {
	lr *results.LineReader
	// longBefore counts the over-long lines skipped before this reader,
	// skipped those the line reader skipped so far
	longBefore, skipped int
	stats               *pasteStats
	// observe, when set, sees each normalised line (without its '\n')
	observe func([]byte)
	out     []byte // pending output: a part of buf
	buf     []byte // out's storage, reused
	cur     []byte // the line next produced, nil if none
	n       int    // lines handed out by Next
	err     error
}

func newPasteReader(r io.Reader, st *pasteStats, observe func([]byte)) *pasteReader {
	lr := results.NewLineReader(r)
	lr.SkipLongLines()
	return &pasteReader{lr: lr, longBefore: st.LongLines, stats: st, observe: observe}
}

// Read hands on as many whole lines as fit in b (the parsers read large
// blocks), and a line longer than b in pieces.
func (p *pasteReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if len(p.out) == 0 {
			if p.err != nil || n > 0 && len(b)-n < 512 {
				break
			}
			if p.next(); p.cur != nil {
				p.buf = append(append(p.buf[:0], p.cur...), '\n')
				p.out = p.buf
			}
			continue
		}
		c := copy(b[n:], p.out)
		p.out = p.out[c:]
		n += c
	}
	if n == 0 && p.err != nil {
		return 0, p.err
	}
	return n, nil
}

// Next returns the next normalised line without its ending; it is valid
// until the next call.
func (p *pasteReader) Next() ([]byte, error) {
	for {
		line, err := p.raw()
		if err != nil {
			return nil, err
		}
		// most lines of a log: a host name or nccl-tests' '#' first,
		// nothing to undo and no one to show them to (normaliseLine's
		// own first case, and what it leaves of a '#' line, without its
		// call)
		if len(line) > 0 && (line[0] == '#' || len(line) > 1 && line[0] >= 'a' && line[0] <= 'z' && !(line[0] == 'n' && (line[1] == 'T' || line[1] == 'c') || line[0] == 's' && line[1] == 'i')) &&
			len(p.stats.prefix) == 0 && p.observe == nil && !p.lr.HasCR() {
			p.n++
			return line, nil
		}
		if clean := p.normal(line); clean != nil {
			p.n++
			return clean, nil
		}
	}
}

// Line is the number of the line Next returned last.
func (p *pasteReader) Line() int { return p.n }

// next reads one raw line and sets cur to its normalised form (nil when
// the line is skipped or there is none).
func (p *pasteReader) next() {
	p.cur = nil
	line, err := p.raw()
	if err != nil {
		return
	}
	p.cur = p.normal(line)
}

// raw reads one line as the file has it, counting over-long lines skipped
// and keeping the error for Err.
func (p *pasteReader) raw() ([]byte, error) {
	line, err := p.lr.Next()
	if n := p.lr.Skipped(); n != p.skipped {
		p.skipped = n
		p.stats.LongLines = p.longBefore + n
	}
	if err != nil {
		p.err = err
	}
	return line, err
}

// normal is a line's normalised form, nil when it is skipped.
func (p *pasteReader) normal(line []byte) []byte {
	// most lines have no '\r', which the line reader tells without a search
	if p.lr.HasCR() {
		i := bytes.LastIndexByte(line, '\r')
		// a terminal shows what was drawn last
		line = line[i+1:]
		p.stats.Redrawn++
	}
	clean := normaliseLine(line, p.stats)
	if clean == nil {
		return nil
	}
	if p.observe != nil {
		p.observe(clean)
	}
	return clean
}

// normaliseLine removes what display and transport put around a line of
// program output. It returns nil for a line that is only decoration (a
// Markdown fence).
func normaliseLine(line []byte, st *pasteStats) []byte {
	if p := st.prefix; len(p) > 0 && bytes.HasPrefix(line, p) {
		line = line[len(p):]
		st.Unquoted++
	}
	if len(line) > 0 && line[0] >= 'a' && line[0] <= 'z' {
		// most lines of a log (a host name first): no decoration starts
		// with a lower-case letter, only three lost-"#" headers do
		// ("nThread ", "nccl-tests version ", "size ")
		if len(line) > 1 && (line[0] == 'n' && (line[1] == 'T' || line[1] == 'c') || line[0] == 's' && line[1] == 'i') {
			if r := restoreHash(line); r != nil {
				st.Restored++
				return r
			}
		}
		return line
	}
	orig := len(line)
	for range 6 {
		before := len(line)
		line = stripDecoration(line)
		if len(line) == before {
			break
		}
	}
	if isFence(line) {
		st.Unquoted++
		return nil
	}
	if len(line) != orig {
		st.Unquoted++
	}
	if r := restoreHash(line); r != nil {
		st.Restored++
		return r
	}
	if len(line) > 5 && (line[0] == 'I' || line[0] == 'W') && cutTag(line) {
		st.scratch = append(append(st.scratch[:0], "NCCL "...), line...)
		st.Unquoted++
		return st.scratch
	}
	return line
}

// cutTag: a line of NCCL's whose host and "NCCL " a paste cut off, "INFO
// NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'": the level, then a
// message that starts with one of NCCL's subsystem words.
func cutTag(line []byte) bool {
	var rest []byte
	switch {
	case bytes.HasPrefix(line, []byte("INFO ")):
		rest = line[5:]
	case bytes.HasPrefix(line, []byte("WARN ")):
		rest = line[5:]
	default:
		return false
	}
	for _, w := range ncclWords {
		if bytes.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

var ncclWords = [][]byte{[]byte("NET/"), []byte("Bootstrap"), []byte("Channel "), []byte("Ring "), []byte("Trees"),
	[]byte("comm 0x"), []byte("Connected all"), []byte("Using network"), []byte("cudaDriverVersion"), []byte("NCCL_"), []byte("Call to")}

func trimBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func isFence(line []byte) bool {
	t := trimBlank(line)
	if len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return false
	}
	return bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~"))
}

// stripDecoration removes one layer: a "> " quote, a list marker, a
// launcher tag, a timestamp, a syslog or glog header, a Ray or torchrun
// process tag.
func stripDecoration(line []byte) []byte {
	if len(line) == 0 {
		return line
	}
	if c := line[0]; c == ' ' || c == '\t' {
		// a tag or a quote behind an indentation ("        [1,0]<stdout>:")
		if t := trimBlank(line); len(t) > 0 && (t[0] == '[' || t[0] == '>') {
			if r := stripDecoration(t); len(r) != len(t) {
				return r
			}
		}
		return line
	}
	switch c := line[0]; {
	case c == '>':
		line = line[1:]
		if len(line) > 0 && line[0] == ' ' {
			line = line[1:]
		}
		return line
	case c == '-' || c == '*' || c == '+':
		if len(line) > 1 && line[1] == ' ' && !bytes.HasPrefix(line, []byte("- - -")) {
			return line[2:]
		}
	case c == '[':
		if r, ok := cutBracketTag(line); ok {
			return r
		}
	case c == '(':
		// Ray: "(RayWorkerWrapper pid=2981, ip=10.0.0.2) ", "(train_rft pid=1) "
		if j := bytes.IndexByte(line, ')'); j > 0 && j < 160 && bytes.Contains(line[:j], []byte("pid=")) {
			return bytes.TrimLeft(line[j+1:], " ")
		}
	case c >= '0' && c <= '9':
		if n := isoTimestamp(line); n > 0 {
			return bytes.TrimLeft(line[n:], " ")
		}
	case c >= 'A' && c <= 'Z':
		if n := glogHeader(line); n > 0 {
			return line[n:]
		}
		if n := syslogHeader(line); n > 0 {
			return line[n:]
		}
		if n := ctimeStdout(line); n > 0 {
			return line[n:]
		}
	}
	if s := results.StripLauncherPrefix(line); len(s) != len(line) {
		return s
	}
	return line
}

// cutBracketTag removes "[2026-03-13 22:26:02] ", "[rank3]: ", "[1,0]<stdout>:"
// and Intel MPI's "[0] " in front of a line. NCCL's own "[0] " device field
// follows the host, never starts a line, except where a paste cut the host
// off; it is removed too, the rest reads the same.
func cutBracketTag(line []byte) ([]byte, bool) {
	j := bytes.IndexByte(line, ']')
	if j < 2 || j > 40 {
		return nil, false
	}
	in := line[1:j]
	rest := line[j+1:]
	switch {
	case bytes.HasPrefix(rest, []byte("<stdout>:")) || bytes.HasPrefix(rest, []byte("<stderr>:")):
		return rest[9:], true
	case isoTimestamp(in) > 0:
	case bytes.HasPrefix(in, []byte("rank")) && digits(in[4:]):
	case digits(in):
	default:
		return nil, false
	}
	rest = bytes.TrimPrefix(rest, []byte(":"))
	return bytes.TrimLeft(rest, " "), true
}

func digits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isoTimestamp measures "2024-05-11 14:10:52.224", "2024-05-11T14:10:52.123456789Z"
// (kubectl logs --timestamps) and the like at the start of b; 0 if none.
func isoTimestamp(b []byte) int {
	if len(b) < 19 || !digits(b[0:4]) || b[4] != '-' || !digits(b[5:7]) || b[7] != '-' || !digits(b[8:10]) ||
		(b[10] != ' ' && b[10] != 'T') || !digits(b[11:13]) || b[13] != ':' || !digits(b[14:16]) || b[16] != ':' || !digits(b[17:19]) {
		return 0
	}
	i := 19
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == ',' || b[i] == 'Z' || b[i] == '+' || b[i] == ':') {
		i++
	}
	return i
}

// glogHeader measures glog's "E0302 08:32:30.369483 57711 file.cpp:450] ".
func glogHeader(b []byte) int {
	if len(b) < 22 || !bytes.ContainsAny(b[:1], "IWEF") || !digits(b[1:5]) || b[5] != ' ' || b[8] != ':' {
		return 0
	}
	j := bytes.Index(b, []byte("] "))
	if j < 0 || j > 80 {
		return 0
	}
	return j + 2
}

var months = []string{"Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ", "Aug ", "Sep ", "Oct ", "Nov ", "Dec "}

// syslogHeader measures "Nov 25 14:12:12 node1 python3[1234]: " (journalctl
// and syslog); the host is not kept: NCCL prints its own.
func syslogHeader(b []byte) int {
	if len(b) < 16 {
		return 0
	}
	month := false
	for _, m := range months {
		if string(b[:4]) == m {
			month = true
			break
		}
	}
	if !month || b[9] != ':' || b[12] != ':' {
		return 0
	}
	j := bytes.Index(b[15:], []byte(": "))
	if j < 0 || j > 120 {
		return 0
	}
	return 15 + j + 2
}

// ctimeStdout measures mpirun --timestamp-output's "Thu Jul 18 15:41:05 2024<stdout>:".
func ctimeStdout(b []byte) int {
	if len(b) < 33 || b[3] != ' ' {
		return 0
	}
	for _, tag := range []string{"<stdout>:", "<stderr>:"} {
		if j := bytes.Index(b[:min(len(b), 48)], []byte(tag)); j > 0 {
			return j + len(tag)
		}
	}
	return 0
}

// hashlessKeys are nccl-tests' header lines, as Markdown leaves them once
// it has read the "#" as a heading marker, by their first byte.
func hashlessKeys(c byte) []string {
	switch c {
	case 'n':
		return []string{"nThread ", "nccl-tests version "}
	case 'C':
		return []string{"Collective test starting"}
	case 'U':
		return []string{"Using devices"}
	case 'R':
		return []string{"Rank "}
	case 's':
		return []string{"size "}
	case 'b':
		return []string{"bytes "}
	case '(':
		return []string{"(B) "}
	case 'O':
		return []string{"Out of bounds values"}
	case 'A':
		return []string{"Avg bus bandwidth"}
	}
	return nil
}

// restoreHash gives such a line its "# " back; nil if it is not one.
func restoreHash(line []byte) []byte {
	t := trimBlank(line)
	if len(t) == 0 {
		return nil
	}
	for _, k := range hashlessKeys(t[0]) {
		if len(t) < len(k) || string(t[:len(k)]) != k {
			continue
		}
		switch {
		case k[0] == 'R' && !bytes.Contains(t, []byte(" device ")):
			return nil
		case (k[0] == 's' || k[0] == 'b') && !bytes.Contains(t, []byte("busbw")):
			return nil
		}
		return append([]byte("# "), t...)
	}
	return nil
}

// ObserveQuietInfo hands l the quiet NCCL INFO lines at the reader's
// position (results.LineReader.ObserveQuietInfo) where nothing is to be
// undone or shown: no prefix on every line, no one observing lines.
func (p *pasteReader) ObserveQuietInfo(l *results.NCCLLog) int {
	if len(p.stats.prefix) > 0 || p.observe != nil {
		return 0
	}
	n := p.lr.ObserveQuietInfo(l)
	p.n += n
	return n
}
