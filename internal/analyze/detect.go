package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/results"
)

// Input formats.
const (
	FormatNCCLTests      = "nccl-tests"
	FormatNCCLTestsJSON  = "nccl-tests-json"
	FormatNCCLLog        = "nccl-log"
	FormatPerftest       = "perftest"
	FormatIperf3         = "iperf3"
	FormatIperf3Text     = "iperf3-text"
	FormatNVBandwidth    = "nvbandwidth"
	FormatAllReduceBench = "all_reduce_bench"
	// FormatSparkrigJSON is `sparkrig bench gpu collective --format json`
	// (a report document) or its --json-file (a JSON array of tables).
	FormatSparkrigJSON = "sparkrig-json"
	// FormatNCCLRAS is NCCL's RAS status (`ncclras`, text or -f json).
	FormatNCCLRAS = "nccl-ras"
	// FormatErrors is error lines alone (ibverbs, perftest, PyTorch's NCCL
	// errors): no benchmark table and no NCCL log line.
	FormatErrors = "error-lines"
)

// Formats lists the accepted --input-format values.
var Formats = []string{FormatNCCLTests, FormatNCCLTestsJSON, FormatNCCLLog, FormatPerftest, FormatIperf3, FormatIperf3Text, FormatNVBandwidth, FormatAllReduceBench, FormatSparkrigJSON, FormatSparkrigReport, FormatNCCLRAS, FormatErrors}

// Detection errors.
var (
	ErrEmpty   = errors.New("empty input")
	ErrBinary  = errors.New("binary data, not a benchmark output")
	ErrUnknown = errors.New("no line of a benchmark output, an NCCL log or a known error found (nccl-tests, perftest, iperf3, nvbandwidth, NCCL_DEBUG output, ncclras; force one with --input-format)")
	ErrSource  = errors.New("this is source code or documentation, not a benchmark output or log (force a format with --input-format)")
	ErrJSON    = errors.New("a JSON document of no kind analyze reads (iperf3 -J, nccl-tests -J, ncclras -f json, sparkrig's own reports and bench gpu collective JSON)")
)

// Detection says which format the text is and from what.
type Detection struct {
	Format string
	// Evidence lists the line shapes counted, strongest first.
	Evidence string
	// Sure is "high" (a header or title of the tool), "medium" (several
	// lines of its shape) or "low" (one or two).
	Sure string
}

// Detect names the format of an input from its first bytes.
func Detect(sample []byte) (string, error) {
	d, err := DetectEvidence(sample)
	return d.Format, err
}

// DetectEvidence scores the line shapes of the sample, wherever they stand
// and behind whatever prefix, and names the format with the most evidence.
func DetectEvidence(sample []byte) (Detection, error) {
	t := bytes.TrimSpace(sample)
	switch {
	case len(t) == 0:
		return Detection{}, ErrEmpty
	case isBinary(sample):
		return Detection{}, ErrBinary
	case (t[0] == '{' || t[0] == '[') && jsonDocument(t):
		if f := detectJSON(t); f != "" {
			return Detection{Format: f, Evidence: "JSON document", Sure: "high"}, nil
		}
		// an iperf3 --json-stream output that reports an error: its
		// events are read line by line, the error event as an error line
		if !bytes.Contains(t, litStreamError) {
			return Detection{}, ErrJSON
		}
	}
	var sc scorer
	st := pasteStats{prefix: docPrefix(sample)}
	rest := sample
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimRight(line, "\r")
		if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		if n := normaliseLine(line, &st); n != nil {
			sc.line(n)
		}
	}
	return sc.verdict()
}

// jsonDocument: the sample is a JSON document, or the start of one cut
// by the sample's end: it parses as JSON up to there. A line that opens
// with a "[tag]" (a timestamp, a rank, "[1,0]<stdout>:") does not.
func jsonDocument(t []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(t))
	// one value, or several (JSON lines): each parses, or is cut by the
	// sample's end, up to the end of the sample
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		switch {
		case err == io.EOF:
			return true
		case errors.Is(err, io.ErrUnexpectedEOF):
			return true
		case err != nil:
			return false
		}
	}
}

func detectJSON(t []byte) string {
	switch {
	// sparkrig bench gpu collective's report document: its tables
	case t[0] == '{' && (bytes.Contains(t, []byte(`"command": "bench gpu collective"`)) || bytes.Contains(t, []byte(`"command":"bench gpu collective"`))):
		return FormatSparkrigJSON
	// any other sparkrig report document: the analyses it holds
	case sparkrigDocument(t):
		return FormatSparkrigReport
	case t[0] == '[' && (bytes.Contains(t, []byte(`"tool": "sparkrig"`)) || bytes.Contains(t, []byte(`"tool":"sparkrig"`))) && bytes.Contains(t, []byte(`"collective"`)):
		return FormatSparkrigJSON
	case t[0] != '{':
		return ""
	case bytes.Contains(t, []byte(`"test_start"`)) || bytes.Contains(t, []byte(`"intervals"`)):
		return FormatIperf3
	case bytes.Contains(t, []byte(`"communicators"`)) && (bytes.Contains(t, []byte(`"missing_ranks`)) || bytes.Contains(t, []byte(`"ras"`))):
		return FormatNCCLRAS
	case bytes.Contains(t, []byte(`"nccl_version"`)) || bytes.Contains(t, []byte(`"average_bus_bandwi`)) || bytes.Contains(t, []byte(`"results"`)):
		return FormatNCCLTestsJSON
	}
	return ""
}

// shape is one kind of line evidence.
type shape struct {
	format string
	what   string
	weight int
	header bool
}

var (
	shNCCLTestsHeader = shape{FormatNCCLTests, "nccl-tests header lines", 3, true}
	shNCCLTestsRow    = shape{FormatNCCLTests, "nccl-tests result rows", 2, false}
	shPerftestTitle   = shape{FormatPerftest, "perftest test titles and column headers", 4, true}
	shPerftestRow     = shape{FormatPerftest, "perftest result rows", 1, false}
	shNVBTitle        = shape{FormatNVBandwidth, "nvbandwidth matrix titles and version lines", 4, true}
	shNVBSum          = shape{FormatNVBandwidth, "nvbandwidth SUM lines", 2, false}
	shAllReduceBench  = shape{FormatAllReduceBench, "all_reduce_bench table lines", 4, true}
	shNCCLLog         = shape{FormatNCCLLog, "NCCL log lines", 2, false}
	shNCCLVersion     = shape{FormatNCCLLog, "NCCL version banners", 2, true}
	shNCCLWarn        = shape{FormatNCCLLog, "NCCL WARN/ATTN/DIAG lines", 3, false}
	shRAS             = shape{FormatNCCLRAS, "NCCL RAS status lines", 4, true}
	shError           = shape{FormatErrors, "error lines of a known shape", 2, false}
	shIperf3Text      = shape{FormatIperf3Text, "iperf3 interval and summary lines", 2, false}
)

type scorer struct {
	score  map[string]int
	count  map[shape]int
	header map[string]bool
	code   int
	total  int
}

func (s *scorer) add(sh shape) {
	if s.score == nil {
		s.score, s.count, s.header = map[string]int{}, map[shape]int{}, map[string]bool{}
	}
	s.score[sh.format] += sh.weight
	s.count[sh]++
	if sh.header {
		s.header[sh.format] = true
	}
}

func (s *scorer) line(l []byte) {
	t := bytes.TrimSpace(l)
	if len(t) == 0 {
		return
	}
	s.total++
	if markupLine(t) {
		s.code++
		return
	}
	if sh, ok := lineShape(t); ok {
		s.add(sh)
		return
	}
	if codeLine(t) {
		s.code++
	}
}

// lineShape classifies one normalised, trimmed line.
func lineShape(t []byte) (shape, bool) {
	if i := bytes.Index(t, []byte("NCCL ")); i >= 0 {
		rest := t[i+5:]
		switch {
		case bytes.HasPrefix(rest, []byte("WARN ")) || bytes.HasPrefix(rest, []byte("ATTN ")) || bytes.HasPrefix(rest, []byte("DIAG ")):
			return shNCCLWarn, true
		case bytes.HasPrefix(rest, []byte("INFO ")):
			if i == 0 || bytes.HasSuffix(bytes.TrimRight(t[:i], " "), []byte("]")) {
				return shNCCLLog, true
			}
		case bytes.HasPrefix(rest, []byte("version ")) && i == 0 && len(rest) > 8 && rest[8] >= '0' && rest[8] <= '9':
			return shNCCLVersion, true
		}
	} else if _, m := results.PreTagInfo(t); m > 0 {
		return shNCCLLog, true
	} else if m, _ := results.BareConnection(t); m >= 0 {
		return shNCCLLog, true
	} else if results.BareNetNote(t) >= 0 {
		return shNCCLLog, true
	}
	switch t[0] {
	case '#':
		body := bytes.TrimSpace(t[1:])
		switch {
		case bytes.HasPrefix(body, []byte("nThread ")), bytes.HasPrefix(body, []byte("nccl-tests version ")),
			bytes.HasPrefix(body, []byte("Collective test starting")), bytes.HasPrefix(body, []byte("Avg bus bandwidth")),
			bytes.HasPrefix(body, []byte("Out of bounds values")),
			bytes.HasPrefix(body, []byte("size ")) && bytes.Contains(body, []byte("busbw")),
			bytes.HasPrefix(body, []byte("Rank ")) && bytes.Contains(body, []byte(" device ")):
			return shNCCLTestsHeader, true
		case bytes.HasPrefix(body, []byte("bytes")) && bytes.Contains(body, []byte("#iterations")):
			return shPerftestTitle, true
		}
	case '|':
		if bytes.Contains(t, []byte("| payload |")) || bytes.Contains(t, []byte("busbw")) && bytes.Count(t, []byte("|")) >= 4 {
			return shAllReduceBench, true
		}
	case '=':
		if bytes.Equal(t, []byte("=== RAS Diagnostics ===")) {
			return shRAS, true
		}
	}
	switch {
	case bytes.HasSuffix(t, []byte(" BW Test")) || bytes.HasSuffix(t, []byte(" Latency Test")):
		return shPerftestTitle, true
	case bytes.HasPrefix(t, []byte("nvbandwidth Version")) || bytes.HasSuffix(t, []byte("bandwidth (GB/s)")) && bytes.Contains(t, []byte("(row)")):
		return shNVBTitle, true
	case bytes.HasPrefix(t, []byte("SUM ")) && bytes.Count(t, []byte(" ")) == 2:
		return shNVBSum, true
	case rasLine(t):
		return shRAS, true
	case ncclTestsRow(t):
		return shNCCLTestsRow, true
	case perftestRow(t):
		return shPerftestRow, true
	case iperf3Interval(t):
		return shIperf3Text, true
	case errorShape(t):
		return shError, true
	}
	return shape{}, false
}

var ncclTypes = map[string]bool{"float": true, "half": true, "bfloat16": true, "double": true, "int8": true, "uint8": true,
	"int32": true, "uint32": true, "int64": true, "uint64": true, "f8e4m3": true, "f8e5m2": true, "fp8_e4m3": true, "fp8_e5m2": true}

// ncclTestsRow: size, count, a type name, then numbers.
func ncclTestsRow(t []byte) bool {
	if t[0] < '0' || t[0] > '9' {
		return false
	}
	f := bytes.Fields(t)
	return len(f) >= 8 && digits(f[0]) && digits(f[1]) && ncclTypes[string(f[2])]
}

// perftestRow: "65536 5000 0.00 42.31 0.080701" (bytes, iterations, then
// three or more decimals).
func perftestRow(t []byte) bool {
	if t[0] < '0' || t[0] > '9' {
		return false
	}
	f := bytes.Fields(t)
	if len(f) < 4 || len(f) > 10 || !digits(f[0]) || !digits(f[1]) {
		return false
	}
	for _, x := range f[2:] {
		if !decimal(x) {
			return false
		}
	}
	return bytes.IndexByte(f[2], '.') > 0
}

func decimal(b []byte) bool {
	dot := false
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0:
			dot = true
		default:
			return false
		}
	}
	return len(b) > 0
}

// iperf3Interval: "[  5]   0.00-1.00   sec   217 MBytes  1.82 Gbits/sec".
func iperf3Interval(t []byte) bool {
	return t[0] == '[' && bytes.Contains(t, []byte(" sec ")) && bytes.Contains(t, []byte("bits/sec"))
}

// rasLine recognises ncclras' section and table lines.
func rasLine(t []byte) bool {
	switch {
	case bytes.HasPrefix(t, []byte("Communicators... (")), bytes.Equal(t, []byte("Job summary")),
		bytes.HasPrefix(t, []byte("Group ")) && bytes.Contains(t, []byte("Comms")) && bytes.Contains(t, []byte("Status")),
		bytes.HasPrefix(t, []byte("#")) && bytes.Contains(t, []byte("-")) && rasCommHeader(t),
		bytes.Contains(t, []byte(" managed by process ")) && bytes.Contains(t, []byte(" on node ")),
		bytes.HasPrefix(t, []byte("Missing communicator data from ")):
		return true
	}
	return false
}

// rasCommHeader: "#0-0 (fa93daea854b060b) MISMATCH".
func rasCommHeader(t []byte) bool {
	f := bytes.Fields(t)
	return len(f) >= 3 && len(f[1]) > 2 && f[1][0] == '(' && f[1][len(f[1])-1] == ')'
}

// errorShape: a line of a known error, cheaply: the signature catalogue
// tells what it means later.
func errorShape(t []byte) bool {
	// a verbs call named with its failure, not a tool mentioned in prose
	if bytes.Contains(t, []byte("ibv_")) && (bytes.Contains(t, []byte("failed")) || bytes.Contains(t, []byte("error")) || bytes.Contains(t, []byte("Error"))) {
		return true
	}
	for _, k := range errorKeys {
		if bytes.Contains(t, k) {
			return true
		}
	}
	if ev, ok := iperf3StreamErrorLine(t); ok {
		return signatureLine(ev)
	}
	return signatureLine(t)
}

// signatureLine: the line matches an error signature (the sample only is
// read so: detection's cost stays bounded).
func signatureLine(t []byte) bool {
	sigs, err := expect.Signatures()
	if err != nil {
		return false
	}
	for i := range sigs {
		s := &sigs[i]
		for j, re := range s.Res {
			if lit := s.Lits[j]; len(lit) > 0 && !bytes.Contains(t, lit) {
				continue
			}
			if re.Match(t) {
				return true
			}
		}
	}
	return false
}

var errorKeys = [][]byte{
	[]byte("Failed to modify QP"), []byte("Completion with error"), []byte("Failed status "),
	[]byte("Got completion from peer"), []byte("ncclRemoteError"), []byte("ncclSystemError"), []byte("ncclInternalError"),
	[]byte("ncclUnhandledCudaError"), []byte("unhandled cuda error"), []byte("unhandled system error"),
	[]byte("NCCL error"), []byte("Failed to query GID"), []byte("Watchdog caught collective operation timeout"),
	[]byte("libibverbs: Warning"), []byte("Couldn't connect to"), []byte("Unable to init the socket connection"),
}

// markupLine is a line of a data or source file that quotes messages
// rather than printing them: a quoted string literal, or a YAML key whose
// value is quoted or folded.
func markupLine(t []byte) bool {
	if n := len(t); n > 2 && (t[0] == '\'' || t[0] == '"' || t[0] == '`') && t[n-1] == t[0] {
		return true
	}
	i := 0
	for i < len(t) && (t[i] >= 'a' && t[i] <= 'z' || t[i] == '_' || t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 || i+2 >= len(t) || t[i] != ':' || t[i+1] != ' ' {
		return false
	}
	v := t[i+2:]
	return v[0] == '"' || v[0] == '\'' || bytes.Equal(v, []byte(">-")) || bytes.Equal(v, []byte("|"))
}

// codeLine is a line of source code or markup, which counts against every
// format.
func codeLine(t []byte) bool {
	switch {
	case bytes.HasPrefix(t, []byte("func ")), bytes.HasPrefix(t, []byte("package ")), bytes.HasPrefix(t, []byte("import ")),
		bytes.HasPrefix(t, []byte("#include")), bytes.HasPrefix(t, []byte("def ")), bytes.HasPrefix(t, []byte("return ")),
		bytes.HasPrefix(t, []byte("//")), bytes.HasPrefix(t, []byte("/*")), bytes.HasPrefix(t, []byte("##")),
		bytes.Equal(t, []byte("}")), bytes.Equal(t, []byte(")")), bytes.HasSuffix(t, []byte("{")), bytes.HasSuffix(t, []byte(";")),
		bytes.Contains(t, []byte(" := ")):
		return true
	}
	return false
}

func (s *scorer) verdict() (Detection, error) {
	best, bestScore := "", 0
	for _, f := range []string{FormatNCCLRAS, FormatAllReduceBench, FormatNVBandwidth, FormatPerftest, FormatNCCLTests, FormatNCCLLog, FormatIperf3Text, FormatErrors} {
		if sc := s.score[f]; sc > bestScore {
			best, bestScore = f, sc
		}
	}
	// perftest rows alone look like many tables of numbers: only a title
	// or column header makes them perftest
	if best == FormatPerftest && !s.header[FormatPerftest] {
		best, bestScore = "", 0
		for _, f := range []string{FormatNCCLTests, FormatNCCLLog, FormatErrors} {
			if sc := s.score[f]; sc > bestScore {
				best, bestScore = f, sc
			}
		}
	}
	// error lines inside an NCCL log are read with the log
	if best == FormatErrors && s.score[FormatNCCLLog] > 0 {
		best = FormatNCCLLog
	}
	if best == "" {
		if s.code > 0 {
			return Detection{}, ErrSource
		}
		return Detection{}, ErrUnknown
	}
	evidence := 0
	for sh, n := range s.count {
		if sh.format == best {
			evidence += n
		}
	}
	if s.code > 2 && s.code > 2*evidence {
		return Detection{}, ErrSource
	}
	d := Detection{Format: best, Evidence: s.evidence(best)}
	switch {
	case s.header[best]:
		d.Sure = "high"
	case evidence >= 3:
		d.Sure = "medium"
	default:
		d.Sure = "low"
	}
	return d, nil
}

func (s *scorer) evidence(format string) string {
	var parts []string
	for _, sh := range []shape{shRAS, shAllReduceBench, shNVBTitle, shNVBSum, shPerftestTitle, shPerftestRow, shNCCLTestsHeader, shNCCLTestsRow,
		shNCCLVersion, shNCCLWarn, shNCCLLog, shIperf3Text, shError} {
		if sh.format == format && s.count[sh] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", s.count[sh], sh.what))
		}
	}
	return strings.Join(parts, ", ")
}

func isBinary(sample []byte) bool {
	ctl := 0
	for _, c := range sample {
		if c == 0 {
			return true
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b {
			ctl++
		}
	}
	return ctl*20 > len(sample)
}
