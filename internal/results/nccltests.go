package results

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NCCLOutput is everything one nccl-tests text output (or NCCL_DEBUG=INFO
// log) holds: the result tables and what the interleaved NCCL lines say.
type NCCLOutput struct {
	Tables []NCCLTable `json:"tables"`
	Log    NCCLLog     `json:"log"`
	// Lines counts input lines; Unparsed counts table rows that could not be read.
	Lines    int `json:"lines"`
	Unparsed int `json:"unparsed_rows,omitempty"`
	// DroppedTables counts tables beyond the first maxTables, not kept.
	DroppedTables int `json:"dropped_tables,omitempty"`
	// Wrapped counts rows read whole from two lines (a paste wrapped them).
	Wrapped int `json:"wrapped_rows,omitempty"`
	// Launch is what the headers and footers say about how the test was
	// started, kept also when no table row survived.
	Launch NCCLLaunch `json:"launch"`
}

// NCCLLaunch counts the header and footer lines that tell how many
// processes each ran a test of their own.
type NCCLLaunch struct {
	// StrayFooters counts "Avg bus bandwidth" footers read while no table
	// was open (a paste of footers alone); StrayMin and StrayMax are the
	// smallest and largest of their values.
	StrayFooters int     `json:"stray_footers,omitempty"`
	StrayMin     float64 `json:"stray_min_gbs,omitempty"`
	StrayMax     float64 `json:"stray_max_gbs,omitempty"`
	// RankZeroHosts counts the distinct hosts that printed a "Rank 0"
	// device line, up to 2: an MPI-launched test prints one.
	RankZeroHosts int    `json:"rank_zero_hosts,omitempty"`
	rankZeroHost  string // the first such host
	// RankZeroPIDs is 2 where one host printed "Rank 0" device lines of
	// two processes (two Pids) in one header: with MPI=1 each rank is
	// printed once, with its own rank number; without MPI every process
	// is rank 0 of a test of its own.
	RankZeroPIDs int `json:"rank_zero_pids,omitempty"`
	rankZeroPID  int // the first such line's Pid
	// CompiledNCCL is the NCCL release an old nccl-tests header names
	// ("# NCCL Tests compiled with NCCL 1.0").
	CompiledNCCL string `json:"compiled_nccl,omitempty"`
	// StackedHeaders counts "# nThread" headers read right after another,
	// with nothing but comment lines between (no device line, no table):
	// nccl-tests prints its header on the main process only (PRINT is
	// "if (is_main_thread) printf", src/common.h), and every process of a
	// build without MPI=1 is its own main process.
	StackedHeaders int `json:"stacked_headers,omitempty"`
	// NoRows is the last test when the input ends after its device lines
	// (and column header) with no result row (none unreadable either): the
	// test stopped during init or before its first size completed, or the
	// paste was cut there.
	NoRows *NCCLNoRows `json:"no_rows,omitempty"`
}

// NCCLNoRows is a test that listed its devices and printed no row.
type NCCLNoRows struct {
	// Ranks counts the device lines above the header; Hosts are their
	// distinct hosts ("" for a device line without one), at most 4.
	Ranks int      `json:"ranks"`
	Hosts []string `json:"hosts"`
	// Header: the column header was printed (the communicators were up);
	// without it the output stops after the device lines, during init.
	Header bool `json:"header"`
}

// maxTables bounds how many tables one input keeps.
const maxTables = 1024

// column roles of an nccl-tests table
const (
	colSkip = iota
	colSize
	colCount
	colType
	colRedop
	colRoot
	colTime
	colAlgBW
	colBusBW
	colWrong
)

var defaultColumns = []int{colSize, colCount, colType, colRedop, colRoot,
	colTime, colAlgBW, colBusBW, colWrong, colTime, colAlgBW, colBusBW, colWrong}

type ncclParser struct {
	// bareHeader: the last "# nThread" header has had nothing after it
	// but comment lines
	bareHeader bool
	fields     [][]byte // reused between lines
	out        NCCLOutput
	cur        *NCCLTable
	cols       []int
	meta       NCCLTable // header fields waiting for their table
	hasMeta    bool
	// header is the column header p.cols was read from: a log repeats it
	header []byte
	name   []byte // scratch for a device name
	strs   recentStrings
	// spare holds a table past maxTables: counted, never kept, so one
	// is reused rather than one allocated per table.
	spare NCCLTable
	seen  func([]byte)
	// lr is the source of the lines, asked for a table's line number
	lr   LineSource
	memo headerMemo
	// wrapped is a row cut short, kept one line in case its rest follows
	wrapped []byte
	joined  []byte // scratch
}

// unwrap joins a row cut short with the line after it when that line is
// only numbers (a forum or terminal wrapped the row) and the two read as one
// row; it reports whether they did.
func (p *ncclParser) unwrap(t []byte) bool {
	prev := p.wrapped
	p.wrapped = p.wrapped[:0]
	if len(prev) == 0 || len(t) == 0 {
		return false
	}
	cols := p.cols
	if cols == nil {
		cols = defaultColumns
	}
	f := appendFields(p.fields[:0], t)
	if len(f) >= len(cols) {
		return false // a whole row of its own
	}
	for _, x := range f {
		if _, ok := parseNum(x); !ok && string(x) != "N/A" {
			return false
		}
	}
	p.joined = append(append(append(p.joined[:0], prev...), ' '), t...)
	rows := 0
	if p.cur != nil {
		rows = len(p.cur.Rows)
	}
	unparsed := p.out.Unparsed
	if !p.row(p.joined) || p.cur == nil || len(p.cur.Rows) != rows+1 {
		p.out.Unparsed = unparsed
		p.wrapped = p.wrapped[:0]
		return false
	}
	p.out.Unparsed = unparsed - 1 // the short row counted before is read now
	p.out.Wrapped++
	return true
}

// ParseNCCLTests reads nccl-tests text output in one streaming pass: every
// collective, old ("# nThread ...") and new ("# nccl-tests version ...")
// headers, mpirun and srun line prefixes, NCCL INFO lines interleaved, several
// tables per input, N/A and #wrong columns, and the footer. It returns what
// it could read together with the first read error, if any.
func ParseNCCLTests(r io.Reader) (NCCLOutput, error) {
	return ParseNCCLTestsLines(NewLineReader(r))
}

// ParseNCCLTestsLines is ParseNCCLTests over lines another reader splits
// (analyze's, which also undoes what pasting did to them).
func ParseNCCLTestsLines(lr LineSource) (NCCLOutput, error) {
	return ParseNCCLTestsLinesSeen(lr, nil)
}

// QuietInfoSource is a LineSource that can hand an NCCLLog, in one loop,
// the NCCL INFO lines at its position that NCCLLog.ObserveQuietLines reads
// (LineReader.ObserveQuietInfo), counting them as lines read; it returns
// how many it handed over.
type QuietInfoSource interface {
	ObserveQuietInfo(l *NCCLLog) int
}

// ParseNCCLTestsLinesSeen is ParseNCCLTestsLines that also hands every line
// to seen, except NCCL INFO lines that report no failure (the bulk of a
// log), so that a second reader (analyze's error catalogue) costs little.
func ParseNCCLTestsLinesSeen(lr LineSource, seen func([]byte)) (NCCLOutput, error) {
	p := &ncclParser{seen: seen, lr: lr}
	quiet, _ := lr.(QuietInfoSource)
	// alarms counts the WARN and ATTN lines read: after one, the next
	// line is most likely another (a WARN-heavy log), not worth a try
	alarms := int64(0)
	var err error
	for {
		// a run of quiet INFO lines read at once: what line() does with
		// each (no table row, no catalogue line) but end a wrapped row
		// and a bare header
		if quiet != nil && alarms == p.out.Log.WarnCount+p.out.Log.AttnCount && quiet.ObserveQuietInfo(&p.out.Log) > 0 {
			p.wrapped = p.wrapped[:0]
			p.bareHeader = false
		}
		alarms = p.out.Log.WarnCount + p.out.Log.AttnCount
		var line []byte
		line, err = lr.Next()
		if err != nil {
			break
		}
		// most lines open with a letter (a host) or '#': no launcher tag
		if len(line) > 0 {
			if c := line[0]; c == '[' || c == ' ' || c >= '0' && c <= '9' {
				line = StripLauncherPrefix(line)
			}
		}
		p.line(line)
	}
	p.finish()
	p.out.Lines = lr.Line()
	if err == io.EOF {
		err = nil
	}
	return p.out, err
}

func (p *ncclParser) line(line []byte) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	t := line[i:]
	if len(t) == 0 {
		return
	}
	if len(p.wrapped) > 0 && p.unwrap(t) {
		return
	}
	if t[0] != '#' {
		p.bareHeader = false
	}
	switch {
	case t[0] == '#':
		p.comment(t)
	case t[0] >= '0' && t[0] <= '9':
		if !p.row(t) {
			p.out.Log.Observe(line)
		}
	default:
		if !p.out.Log.Observe(line) {
			p.commandLine(t)
		}
	}
	if p.seen != nil && !p.out.Log.QuietInfo() {
		p.seen(line)
	}
}

// commandLine remembers the collective of a pasted command line such as
// "mpirun ... ./build/all_gather_perf -b 16G", for tables printed without
// a "Collective test starting" line.
func (p *ncclParser) commandLine(t []byte) {
	i := bytes.Index(t, []byte("_perf"))
	if i <= 0 {
		return
	}
	j := bytes.LastIndexAny(t[:i], " /=")
	name := CanonicalCollective(string(t[j+1 : i+5]))
	if BusBWFactor(name, 2) == 0 || strings.ContainsAny(name, " .") {
		return
	}
	if slices.Contains(Collectives, name) {
		if p.cur != nil && len(p.cur.Rows) > 0 {
			p.closeTable()
		}
		if !p.hasMeta {
			p.newMeta()
		}
		p.meta.Collective = name
		// the GPUs each process drives: "-g 8" or "--ngpus 8" (nccl-tests'
		// own options); the header's "nGpus" replaces it where printed
		p.fields = appendFields(p.fields[:0], t[i:])
		for k := 1; k+1 < len(p.fields); k++ {
			if f := string(p.fields[k]); f == "-g" || f == "--ngpus" {
				if g := atoi(p.fields[k+1]); g > 0 {
					p.meta.NGpus = g
				}
			}
		}
	}
}

func (p *ncclParser) comment(t []byte) {
	// every case below starts with one of commentFirst; most comment
	// lines (rules, column units, "Using devices") start with none, told
	// by their first byte after ASCII blanks without trimming the line
	// (a byte of 0x80 or more may start a Unicode space TrimSpace trims)
	if commentSkipped(t[1:]) {
		return
	}
	body := bytes.TrimSpace(t[1:])
	if len(body) == 0 || !commentFirst[body[0]] {
		return
	}
	switch {
	case hasPrefix(body, "NCCL Tests compiled with NCCL "):
		// nccl-tests of the NCCL 1 era: "# NCCL Tests compiled with NCCL 1.0"
		if v := bytes.TrimSpace(body[len("NCCL Tests compiled with NCCL "):]); len(v) > 0 && len(v) < 16 {
			p.out.Launch.CompiledNCCL = string(v)
		}
	case hasPrefix(body, "nccl-tests version "):
		p.closeTable()
		p.newMeta()
		v, ok := p.memo.version.get(body)
		if !ok {
			p.fields = appendFields(p.fields[:0], body)
			f := p.fields
			v.tool = string(f[2])
			for _, kv := range f[3:] {
				if lib, ok := bytes.CutPrefix(kv, []byte("nccl-library=")); ok {
					v.nccl, v.hasNCCL = NCCLVersionString(atoi(lib)), true
				}
			}
			p.memo.version.put(body, v)
		}
		p.meta.ToolVersion = v.tool
		if v.hasNCCL {
			p.meta.NCCLVersion = v.nccl
		}
	case hasPrefix(body, "sparkrig ") && bytes.Contains(body, []byte(" bench gpu collective")):
		// sparkrig bench gpu prints nccl-tests' layout under its own first line.
		p.closeTable()
		p.newMeta()
		p.fields = appendFields(p.fields[:0], body)
		p.meta.Tool = "sparkrig"
		p.meta.ToolVersion = string(p.fields[1])
		for _, kv := range p.fields[2:] {
			if v, ok := bytes.CutPrefix(kv, []byte("nccl-library=")); ok {
				p.meta.NCCLVersion = string(v)
			}
		}
	case hasPrefix(body, "Collective test starting:"):
		if p.cur != nil && len(p.cur.Rows) > 0 {
			p.closeTable()
		}
		if !p.hasMeta {
			p.newMeta()
		}
		c, ok := p.memo.collective.get(body)
		if !ok {
			c = CanonicalCollective(string(bytes.TrimSpace(body[len("Collective test starting:"):])))
			p.memo.collective.put(body, c)
		}
		p.meta.Collective = c
	case hasPrefix(body, "nThread "):
		if p.bareHeader {
			p.out.Launch.StackedHeaders++
		}
		if l := &p.out.Launch; l.RankZeroPIDs == 1 {
			// a header after one that listed its devices is another
			// launch (a retry): its "Rank 0" is no second process of
			// the first
			l.RankZeroPIDs, l.rankZeroPID = 0, 0
		}
		p.bareHeader = true
		if p.cur != nil && len(p.cur.Rows) > 0 || !p.hasMeta {
			p.closeTable()
			if !p.hasMeta {
				p.newMeta()
			}
		}
		h, ok := p.memo.threads.get(body)
		if !ok {
			h = p.readThreads(body)
			p.memo.threads.put(body, h)
		}
		if h.hasThreads {
			p.meta.NThreads = h.threads
		}
		if h.hasGpus {
			p.meta.NGpus = h.gpus
		}
	case hasPrefix(body, "Rank "):
		if d, ok := p.deviceLine(body); ok {
			p.bareHeader = false
			p.out.Launch.rankZero(d)
			if !p.hasMeta {
				p.closeTable()
				p.newMeta()
			}
			if len(p.meta.Devices) < 4096 {
				p.meta.Devices = append(p.meta.Devices, d)
			}
		}
	case isColumnHeader(body):
		p.bareHeader = false
		p.closeTable()
		if p.cols == nil || !bytes.Equal(body, p.header) {
			p.cols = columnsOf(body)
			p.header = append(p.header[:0], body...)
		}
		p.openTable()
	case hasPrefix(body, "Out of bounds values"):
		if p.cur != nil {
			_, v, _ := bytes.Cut(body, []byte(":"))
			p.fields = appendFields(p.fields[:0], v)
			f := p.fields
			if len(f) > 0 {
				n := int64(atoi(f[0]))
				p.cur.OutOfBounds = &n
			}
		}
	case hasPrefix(body, "Avg bus bandwidth"):
		if p.cur != nil {
			_, v, _ := bytes.Cut(body, []byte(":"))
			p.fields = appendFields(p.fields[:0], v)
			f := p.fields
			if len(f) > 0 {
				if x, err := strconv.ParseFloat(string(f[0]), 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
					p.cur.AvgBusBWGBs = &x
				}
				// with NCCL_TESTS_MIN_BW set, the footer says whether the
				// average reached 90 % of it (src/util.cu writeResultFooter)
				if len(f) > 1 && string(f[1]) == "FAILED" {
					p.cur.MinBWFailed = true
				}
			}
			p.cur.Footers++
			p.cur.Complete = true
		} else {
			_, v, _ := bytes.Cut(body, []byte(":"))
			p.fields = appendFields(p.fields[:0], v)
			if len(p.fields) > 0 {
				if x, err := strconv.ParseFloat(string(p.fields[0]), 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
					p.out.Launch.stray(x)
				}
			}
		}
	case hasPrefix(body, "Collective test concluded"):
		if p.cur != nil {
			p.cur.Complete = true
		}
		p.closeTable()
	}
}

// newMeta starts a table's header fields; the device list keeps its
// storage, since openTable copies it.
func (p *ncclParser) newMeta() {
	p.meta = NCCLTable{Devices: p.meta.Devices[:0]}
	p.hasMeta = true
}

func (p *ncclParser) openTable() {
	t := p.meta
	if t.Tool == "" {
		t.Tool = "nccl-tests"
	}
	t.Line = p.lr.Line()
	if len(p.out.Tables) >= maxTables {
		t.Devices = append(p.spare.Devices[:0], p.meta.Devices...)
		p.spare = t
		p.cur = &p.spare
	} else {
		// a table of its own, t copied into it: t itself stays on the
		// stack, so a table past maxTables allocates nothing
		c := new(NCCLTable)
		*c = t
		c.Devices = append([]NCCLDevice(nil), p.meta.Devices...)
		p.cur = c
	}
	p.hasMeta = false
	p.meta = NCCLTable{Devices: p.meta.Devices[:0]}
	if p.out.Launch.RankZeroHosts < 2 && p.out.Launch.RankZeroPIDs < 2 {
		// a later "Rank 0" on another host belongs to another run
		p.out.Launch.RankZeroHosts, p.out.Launch.rankZeroHost = 0, ""
		p.out.Launch.RankZeroPIDs, p.out.Launch.rankZeroPID = 0, 0
	}
}

func (p *ncclParser) closeTable() {
	if p.cur == nil {
		return
	}
	switch {
	case len(p.cur.Rows) > 0:
		p.out.Tables = append(p.out.Tables, *p.cur)
	case len(p.out.Tables) >= maxTables:
		p.out.DroppedTables++
	}
	p.cur = nil
}

// row parses one result line; it returns false when the line is not one.
func (p *ncclParser) row(t []byte) bool {
	if !looksLikeRow(t) {
		return false
	}
	cols := p.cols
	if cols == nil {
		cols = defaultColumns
	}
	if len(p.out.Tables) >= maxTables {
		// a row past the last table kept: only whether it is a whole row
		// counts (a short one may be the first part of a wrapped row),
		// which its number of fields tells without splitting it
		if n := fieldCount(t); n >= 4 && n >= len(cols) {
			if p.cur == nil {
				p.openTable()
			}
			return true // counted in closeTable, not kept
		}
	}
	p.fields = appendFields(p.fields[:0], t)
	f := p.fields
	if len(f) < 4 {
		return false
	}
	if len(f) < len(cols) {
		f = splitGlued(f)
	}
	if len(f) < len(cols) {
		if p.cur != nil {
			// the rest may follow on the next line (a paste wrapped it)
			p.wrapped = append(p.wrapped[:0], t...)
			p.out.Unparsed++
		}
		return p.cur != nil
	}
	if p.cur == nil {
		p.openTable()
	}
	if len(p.out.Tables) >= maxTables || len(p.cur.Rows) >= 1<<16 {
		return true // counted in closeTable, not kept
	}
	r, ok := parseRow(f, cols)
	if !ok {
		p.out.Unparsed++
		return true
	}
	p.cur.Rows = append(p.cur.Rows, r)
	return true
}

// looksLikeRow is a cheap test that a line starts with an integer followed
// by a space, as every result row does.
func looksLikeRow(t []byte) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t) && (t[i] == ' ' || t[i] == '\t')
}

func parseRow(f [][]byte, cols []int) (NCCLRow, bool) {
	var r NCCLRow
	// one allocation holds every number of the row
	store := new([8]float64)
	next := 0
	num := func(v []byte) *float64 {
		x, ok := parseNum(v)
		if !ok || next == len(store) {
			return nil
		}
		store[next] = x
		next++
		return &store[next-1]
	}
	half := 0
	seenTime := false
	for i, c := range cols {
		v := f[i]
		tm := &r.OOP
		if half == 1 {
			tm = &r.IP
		}
		switch c {
		case colSize:
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return r, false
			}
			r.SizeBytes = n
		case colCount:
			r.Count, _ = strconv.ParseInt(string(v), 10, 64)
		case colType:
			r.Type = string(v)
		case colRedop:
			r.RedOp = string(v)
		case colRoot:
			r.Root = atoi(v)
		case colTime:
			if seenTime {
				half = 1
				tm = &r.IP
			}
			seenTime = true
			tm.TimeUS = num(v)
		case colAlgBW:
			tm.AlgBWGBs = num(v)
		case colBusBW:
			tm.BusBWGBs = num(v)
		case colWrong:
			if x, ok := parseNum(v); ok {
				n := int64(x)
				tm.WrongErrs = &n
			}
		}
	}
	return r, true
}

// splitGlued separates numbers that ran into each other when a column
// overflowed, e.g. "1234.5612.34" (two %.2f values) or "268435456float".
func splitGlued(f [][]byte) [][]byte {
	out := make([][]byte, 0, len(f)+4)
	for _, tok := range f {
		for len(tok) > 0 {
			d := bytes.IndexByte(tok, '.')
			if d >= 0 && d+3 < len(tok) && bytes.IndexByte(tok[d+1:], '.') >= 0 {
				out = append(out, tok[:d+3])
				tok = tok[d+3:]
				continue
			}
			if k := digitsThenLetters(tok); k > 0 {
				out = append(out, tok[:k])
				tok = tok[k:]
				continue
			}
			out = append(out, tok)
			break
		}
	}
	return out
}

func digitsThenLetters(tok []byte) int {
	i := 0
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		i++
	}
	if i > 0 && i < len(tok) && (tok[i] >= 'a' && tok[i] <= 'z') {
		return i
	}
	return 0
}

func isColumnHeader(body []byte) bool {
	// NCCL 1 era: "bytes N type op time algbw busbw res ..."
	return (hasPrefix(body, "size") || hasPrefix(body, "bytes ")) && (bytes.Contains(body, []byte("busbw")) || bytes.Contains(body, []byte("algbw")))
}

func columnsOf(body []byte) []int {
	var cols []int
	for _, f := range bytes.Fields(body) {
		c := colSkip
		switch string(f) {
		case "size", "bytes":
			c = colSize
		case "count", "N":
			c = colCount
		case "type":
			c = colType
		case "redop", "op":
			c = colRedop
		case "root":
			c = colRoot
		case "time", "cputime":
			c = colTime
		case "algbw":
			c = colAlgBW
		case "busbw":
			c = colBusBW
		case "#wrong", "error", "#error":
			c = colWrong
		}
		cols = append(cols, c)
	}
	// trailing optional columns (#iters, timestamp, per-iteration stats) are
	// not required of a row
	for len(cols) > 0 && cols[len(cols)-1] == colSkip {
		cols = cols[:len(cols)-1]
	}
	return cols
}

// deviceLine reads "Rank  0 Group  0 Pid 1935208 on spark device  0 [000f:01:00] NVIDIA GB10"
// (the "#" already removed); older versions print "[0x35]" and no Group.
// deviceLine reads "Rank  0 Group  0 Pid  23491 on spark-fb97 device  0
// [000f:01:00] NVIDIA GB10", or says the line is not one; the lines of
// the last few tests are remembered (every test prints its own).
func (p *ncclParser) deviceLine(body []byte) (NCCLDevice, bool) {
	if r, ok := p.memo.devices.get(body); ok {
		return r.d, r.ok
	}
	d, ok := p.readDevice(body)
	p.memo.devices.put(body, deviceRead{d, ok})
	return d, ok
}

// readThreads reads the "nThread 1 nGpus 1 minBytes ..." header line.
func (p *ncclParser) readThreads(body []byte) threadsRead {
	var h threadsRead
	p.fields = appendFields(p.fields[:0], body)
	f := p.fields
	for i := 0; i+1 < len(f); i++ {
		switch string(f[i]) {
		case "nThread":
			h.threads, h.hasThreads = atoi(f[i+1]), true
		case "nGpus":
			h.gpus, h.hasGpus = atoi(f[i+1]), true
		}
	}
	return h
}

// headerMemo is what the header lines of the last few tests were read
// as: a log of many tests repeats them, and a line read before needs no
// second reading.
type headerMemo struct {
	version    recentRead[versionRead]
	collective recentRead[string]
	threads    recentRead[threadsRead]
	devices    recentRead[deviceRead]
}

type versionRead struct {
	tool, nccl string
	hasNCCL    bool
}

type threadsRead struct {
	threads, gpus       int
	hasThreads, hasGpus bool
}

type deviceRead struct {
	d  NCCLDevice
	ok bool
}

// recentRead remembers what the last few lines of one kind (each up to
// maxRemembered bytes) were read as.
type recentRead[T any] struct {
	lines [4][]byte
	vals  [4]T
	next  int
}

const maxRemembered = 512

func (r *recentRead[T]) get(line []byte) (T, bool) {
	for i := range r.lines {
		if r.lines[i] != nil && string(r.lines[i]) == string(line) {
			return r.vals[i], true
		}
	}
	var zero T
	return zero, false
}

func (r *recentRead[T]) put(line []byte, v T) {
	if len(line) == 0 || len(line) > maxRemembered {
		return
	}
	r.lines[r.next] = append(r.lines[r.next][:0], line...)
	r.vals[r.next] = v
	r.next = (r.next + 1) % len(r.lines)
}

func (p *ncclParser) readDevice(body []byte) (NCCLDevice, bool) {
	var d NCCLDevice
	p.fields = fieldsInto(p.fields[:0], body)
	f := p.fields
	on, dev := -1, -1
	for i := 0; i+1 < len(f); i++ {
		switch string(f[i]) {
		case "Rank":
			d.Rank = atoi(f[i+1])
		case "Pid":
			d.PID = atoi(f[i+1])
		case "on":
			if on < 0 {
				on = i
				d.Host = p.intern(f[i+1])
			}
		case "device":
			if dev < 0 {
				dev = i
				d.Device = atoi(f[i+1])
			}
		}
	}
	// nccl-tests of the NCCL 1 era: "Rank  0 uses device  0 [0x05] Tesla M40 24GB"
	if on < 0 && dev > 0 && string(f[dev-1]) == "uses" {
		on = dev
	}
	if on < 0 || dev < 0 {
		return d, false
	}
	rest := f[min(dev+2, len(f)):]
	if len(rest) > 0 && rest[0][0] == '[' {
		d.PCIBus = p.intern(bytes.Trim(rest[0], "[]"))
		rest = rest[1:]
	}
	p.name = p.name[:0]
	for i, w := range rest {
		if i > 0 {
			p.name = append(p.name, ' ')
		}
		p.name = append(p.name, w...)
	}
	d.Name = p.intern(p.name)
	return d, true
}

func (p *ncclParser) intern(b []byte) string { return p.strs.get(b) }

func (p *ncclParser) finish() {
	var devs []NCCLDevice
	header := false
	switch c := p.cur; {
	case c != nil && len(c.Rows) == 0 && p.out.Unparsed == 0:
		devs, header = c.Devices, true
	case c == nil && p.hasMeta && len(p.out.Tables) == 0:
		devs = p.meta.Devices // device lines, then no column header
	}
	if len(devs) > 0 {
		nr := &NCCLNoRows{Ranks: len(devs), Hosts: []string{}, Header: header}
		for _, d := range devs {
			if !slices.Contains(nr.Hosts, d.Host) && len(nr.Hosts) < 4 {
				nr.Hosts = append(nr.Hosts, d.Host)
			}
		}
		p.out.Launch.NoRows = nr
	}
	p.closeTable()
	p.out.Log.Finish()
	for i := range p.out.Tables {
		t := &p.out.Tables[i]
		t.finishMeta(&p.out.Log)
	}
}

// finishMeta fills ranks, nodes, NCCL version and the peak from what the
// table and the log say, inferring the rank count from busbw/algbw when no
// device lines were printed.
func (t *NCCLTable) finishMeta(log *NCCLLog) {
	if t.Collective == "" {
		t.Collective = guessCollective(t)
		t.CollectiveGuessed = t.Collective != ""
	}
	if t.NCCLVersion == "" {
		t.NCCLVersion = log.Version
	}
	if len(t.Devices) > 0 {
		t.Ranks = len(t.Devices)
		hosts := map[string]bool{}
		for _, d := range t.Devices {
			hosts[d.Host] = true
		}
		t.Nodes = len(hosts)
	} else if log.NRanks > 0 {
		t.Ranks, t.Nodes = log.NRanks, log.NNodes
	}
	if t.Ranks == 0 {
		if n := InferRanks(t); n > 0 {
			t.Ranks, t.RanksInferred = n, true
		}
	}
	t.FinishPeak()
}

// guessCollective names a table that had no "Collective test starting" line
// from its redop and root columns, only where that is unambiguous.
func guessCollective(t *NCCLTable) string {
	if len(t.Rows) == 0 {
		return ""
	}
	r := t.Rows[0]
	if r.RedOp != "" && r.RedOp != "none" && r.Root == -1 {
		if n := InferRanks(&NCCLTable{Collective: "all_reduce", Rows: t.Rows}); n > 0 {
			return "all_reduce"
		}
	}
	return ""
}

// InferRanks recovers the rank count from busbw/algbw for collectives whose
// factor depends on it (all_reduce, all_gather, reduce_scatter, alltoall);
// 0 when it cannot be told.
func InferRanks(t *NCCLTable) int {
	var alg, bus float64
	for _, r := range t.Rows {
		for _, tm := range []Timing{r.OOP, r.IP} {
			if tm.AlgBWGBs != nil && tm.BusBWGBs != nil && *tm.AlgBWGBs > alg {
				alg, bus = *tm.AlgBWGBs, *tm.BusBWGBs
			}
		}
	}
	if alg < 0.3 {
		return 0
	}
	f := bus / alg
	// Both columns are rounded to two decimals, so a 2-rank ratio can print a
	// hair under its exact value (5.24/10.49 for all_gather): allow 3 % below.
	var n float64
	switch t.Collective {
	case "all_reduce":
		if f >= 2 || f < 0.97 {
			return 0
		}
		n = 2 / (2 - f)
	case "all_gather", "reduce_scatter", "alltoall":
		if f >= 1 || f < 0.485 {
			return 0
		}
		n = 1 / (1 - f)
	default:
		return 0
	}
	k := int(math.Round(n))
	if k < 2 || k > 1<<20 || math.Abs(BusBWFactor(t.Collective, k)-f) > 0.03*f {
		return 0
	}
	// both columns are printed to two decimals: the rank counts the
	// rounding allows must all be k, or the count is not told
	lo, hi := (bus-0.005)/(alg+0.005), (bus+0.005)/(alg-0.005)
	for _, g := range []float64{lo, hi} {
		if m := ranksForFactor(t.Collective, g); m != 0 && m != k {
			return 0
		}
	}
	return k
}

// Collectives are nccl-tests' collectives by their canonical names (the
// binaries are NAME_perf).
var Collectives = []string{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", "scatter", "gather", "hypercube"}

// ranksForFactor is the rank count whose bus factor is f, rounded; 0 when
// none (f at or past the factor's limit).
func ranksForFactor(collective string, f float64) int {
	var n float64
	switch collective {
	case "all_reduce":
		if f >= 2 {
			return -1
		}
		n = 2 / (2 - f)
	default:
		if f >= 1 {
			return -1
		}
		n = 1 / (1 - f)
	}
	return int(math.Round(n))
}

// CanonicalCollective maps "all_gather_perf", "./build/all_reduce_perf_mpi",
// "AllGather" and the like to nccl-tests' canonical names.
func CanonicalCollective(s string) string {
	s = strings.ToLower(s)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, "_mpi")
	s = strings.TrimSuffix(s, "_perf")
	switch strings.ReplaceAll(s, "_", "") {
	case "allreduce":
		return "all_reduce"
	case "allgather":
		return "all_gather"
	case "reducescatter":
		return "reduce_scatter"
	case "alltoall":
		return "alltoall"
	case "broadcast":
		return "broadcast"
	case "reduce":
		return "reduce"
	case "sendrecv":
		return "sendrecv"
	case "scatter":
		return "scatter"
	case "gather":
		return "gather"
	case "hypercube":
		return "hypercube"
	}
	return s
}

// NCCLVersionString turns NCCL_VERSION_CODE (22803) into "2.28.3".
func NCCLVersionString(code int) string {
	if code <= 0 {
		return ""
	}
	if code >= 10000 {
		return strconv.Itoa(code/10000) + "." + strconv.Itoa(code/100%100) + "." + strconv.Itoa(code%100)
	}
	return strconv.Itoa(code/1000) + "." + strconv.Itoa(code/100%10) + "." + strconv.Itoa(code%100)
}

func numOrNil(v []byte) *float64 {
	x, ok := parseNum(v)
	if !ok {
		return nil
	}
	return &x
}

// parseNum reads a finite number; "N/A" and the like are not one.
func parseNum(v []byte) (float64, bool) {
	if len(v) == 0 || !(v[0] >= '0' && v[0] <= '9' || v[0] == '-' || v[0] == '+' || v[0] == '.') {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// appendFields is bytes.Fields into a reused slice.
func appendFields(dst [][]byte, s []byte) [][]byte {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j])
		}
		i = j
	}
	return dst
}

// fieldCount is len(appendFields(nil, s)): the bytes that are not a blank
// (' ' or '\t') and follow one or the start, eight tested at a time.
func fieldCount(s []byte) int {
	const tabs = 0x0909090909090909
	const high = 0x8080808080808080
	n := 0
	carry := uint64(1) // the byte before s counts as a blank
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(s)
		b := zeroBytes(w^blanks) | zeroBytes(w^tabs) // high bit of each blank
		n += bits.OnesCount64(^b & high & (b<<8 | carry<<7))
		carry = b >> 63
		s = s[8:]
	}
	blank := carry == 1
	for _, c := range s {
		b := c == ' ' || c == '\t'
		if blank && !b {
			n++
		}
		blank = b
	}
	return n
}

// fieldsInto is bytes.Fields into a reused slice: appendFields where s has
// no whitespace but spaces and tabs, bytes.Fields otherwise.
func fieldsInto(dst [][]byte, s []byte) [][]byte {
	for _, c := range s {
		if c >= '\n' && c <= '\r' || c >= 0x80 {
			return append(dst, bytes.Fields(s)...)
		}
	}
	return appendFields(dst, s)
}

func atoi(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}

// rankZero notes a "Rank 0" device line's host.
func (l *NCCLLaunch) rankZero(d NCCLDevice) {
	if d.Rank != 0 || d.Host == "" || l.RankZeroHosts >= 2 || l.RankZeroPIDs >= 2 {
		return
	}
	switch {
	case l.RankZeroHosts == 0:
		l.rankZeroHost, l.RankZeroHosts = d.Host, 1
		l.rankZeroPID, l.RankZeroPIDs = d.PID, 1
	case d.Host != l.rankZeroHost:
		l.RankZeroHosts = 2
	case d.PID > 0 && l.rankZeroPID > 0 && d.PID != l.rankZeroPID:
		l.RankZeroPIDs = 2
	}
}

// stray notes a footer read outside a table.
func (l *NCCLLaunch) stray(x float64) {
	if l.StrayFooters == 0 || x < l.StrayMin {
		l.StrayMin = x
	}
	if l.StrayFooters == 0 || x > l.StrayMax {
		l.StrayMax = x
	}
	l.StrayFooters++
}

// commentFirst holds the first bytes of the comment lines comment reads
// (its cases' prefixes, and the column header's "size" and "bytes").
var commentFirst = byteSet("nsbCROAN")

// asciiBlank holds the ASCII bytes bytes.TrimSpace trims.
var asciiBlank = byteSet("\t\n\v\f\r ")

// commentSkipped: bytes.TrimSpace(b) is empty or starts with a byte
// commentFirst lacks, told without trimming b.
func commentSkipped(b []byte) bool {
	c, ok := firstAfterBlanks(b)
	return !ok || c < utf8.RuneSelf && !commentFirst[c]
}

// firstAfterBlanks is b's first byte that is not an ASCII blank
// (asciiBlank), and false when there is none.
func firstAfterBlanks(b []byte) (byte, bool) {
	// the column header's lines open with dozens of blanks: eight compared
	// at a time
	for len(b) >= 8 && binary.LittleEndian.Uint64(b) == blanks {
		b = b[8:]
	}
	for _, c := range b {
		if !asciiBlank[c] {
			return c, true
		}
	}
	return 0, false
}
