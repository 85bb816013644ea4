// Package analyze turns a benchmark output into verdicts: it detects the
// format from the content, parses it in one streaming pass, works out (or
// takes) the platform and topology, compares each result with the
// expectation that fits, and asks diagnose for the causes of any gap. The
// bench command calls Judge with results it parsed itself.
package analyze

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/text/transform"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// Options tune an analysis.
type Options struct {
	// InputFormat forces a format instead of detecting it.
	InputFormat string
	// Platform and Topology override what is inferred from the input.
	Platform string
	Topology string
	// Expect is the expectation set; nil means the embedded default.
	Expect *expect.Set
}

// sampleSize is how much of an input format detection looks at.
const sampleSize = 64 << 10

// maxJSON bounds a JSON document, which has to be read whole.
const maxJSON = 64 << 20

// Parsed is results already parsed, e.g. by the bench command.
type Parsed struct {
	Format      string
	NCCL        *results.NCCLOutput
	Perftest    []results.PerftestRun
	Iperf3      *results.Iperf3Result
	TCPProbe    []results.TCPProbeResult
	NVBandwidth *results.NVBandwidthRun
	RAS         *results.NCCLRAS
	// Iperf3Text says where the rate of an iperf3 text output came from.
	Iperf3Text *results.Iperf3Text
	// Errors are the error signatures found in the text, most telling first.
	Errors []diagnose.ErrorHit
	// Detection says how the format was told ("" Format when forced).
	Detection Detection
	// Input says what had to be undone to read the text.
	Input inputStats
	// kept are error-signature flags of an earlier analysis (a sparkrig
	// report document), whose lines are gone.
	kept []report.AnalysisFlag
	// cuda is what the error lines say of CUDA failures and the release
	cuda cudaFacts
	// iperfCtrl is what the lines say of an iperf3 control connection
	iperfCtrl iperfCtrlFacts
	// mlx5 is libmlx5's first error completion dump
	mlx5 mlx5Dump
	// iperfStream holds the error events of an iperf3 --json-stream output
	iperfStream iperf3StreamErrors
	// rdma is what ibdev2netdev and rdma link lines say of the RDMA ports
	rdma rdmaPorts
	// qpt is the first queue pair that timed out and the GIDs it names
	qpt qpTimeout
	// qpf is the first queue pair that failed, any errno, and its GIDs
	qpf qpFailure
}

// inputStats is what reading a pasted text had to undo.
type inputStats struct {
	pasteStats
	UTF16 string // "UTF-16LE" or "UTF-16BE" when transcoded
	// errorLines is set once a line matched an error signature.
	errorLines bool
}

// Reader analyses one input. It never fails: a file that cannot be read
// comes back with Status "unknown" and a one-line Error.
func Reader(name string, r io.Reader, opt Options) report.AnalysisResult {
	p, err := Parse(r, opt.InputFormat)
	if err != nil {
		res := report.AnalysisResult{File: name, Format: p.Format, Status: report.VerdictUnknown, Error: err.Error(),
			Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}}
		return res
	}
	return Judge(name, p, opt)
}

// Parse detects the format (unless forced) and parses the input.
func Parse(r io.Reader, format string) (Parsed, error) {
	// once the peeked bytes are used, the line reader's reads are at least
	// this buffer's size and bufio hands them to r directly: no second copy
	br := bufio.NewReaderSize(r, results.ReadBufferSize)
	var in inputStats
	if enc := utf16Of(br); enc != nil {
		in.UTF16 = enc.name
		br = bufio.NewReaderSize(transform.NewReader(br, enc.decoder()), results.ReadBufferSize)
	}
	nuls, err := skipNULs(br)
	if err != nil {
		return Parsed{}, fmt.Errorf("read: %w", err)
	}
	in.LeadingNULs = nuls
	if in.LongLines, err = skipLongLeading(br); err != nil {
		return Parsed{}, fmt.Errorf("read: %w", err)
	}
	sample, err := br.Peek(sampleSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Parsed{}, fmt.Errorf("read: %w", err)
	}
	isFramed := framed(sample)
	var det Detection
	if format == "" {
		s := sample
		if isFramed {
			s = verbatimSample(sample)
		}
		if det, err = DetectEvidence(s); err != nil {
			switch {
			case in.LongLines > 0 && errors.Is(err, ErrEmpty):
				return Parsed{}, fmt.Errorf("only %d line%s over %d KiB without a newline (a progress bar or binary data)", in.LongLines, plural(in.LongLines), sampleSize>>10)
			case nuls > 0 && errors.Is(err, ErrEmpty):
				return Parsed{}, fmt.Errorf("only NUL bytes (%d): a log truncated in place with nothing written since", nuls)
			}
			return Parsed{}, err
		}
		format = det.Format
	} else if len(sample) == 0 {
		return Parsed{Format: format}, ErrEmpty
	}
	if isFramed {
		in.prefix = docPrefix(verbatimSample(sample))
	} else {
		in.prefix = docPrefix(sample)
	}
	// the prefix is copied: the peeked sample is overwritten as the reader moves on
	in.prefix = bytes.Clone(in.prefix)
	p := Parsed{Format: format, Detection: det, Input: in}
	switch format {
	case FormatSparkrigReport:
		data, err := readJSON(br, isFramed, format)
		if err != nil {
			return p, err
		}
		docs, err := ParseDocument(data)
		if err != nil {
			return p, err
		}
		if len(docs) > 1 {
			return p, fmt.Errorf("sparkrig report: %d results in one document (sparkrig analyze reads each)", len(docs))
		}
		d := docs[0].Parsed
		d.Detection, d.Input = p.Detection, p.Input
		return d, nil
	case FormatIperf3, FormatNCCLTestsJSON, FormatSparkrigJSON:
		data, err := readJSON(br, isFramed, format)
		if err != nil {
			return p, err
		}
		return parseJSON(p, data)
	}
	sigs, err := expect.Signatures()
	if err != nil {
		return p, err
	}
	m := diagnose.NewErrorMatcher(sigs)
	var textIn io.Reader = br
	if isFramed {
		textIn = newVerbatimReader(br)
	}
	var src *pasteReader
	observe := func(line []byte) {
		// the parsers hand on only the lines worth the catalogue's time:
		// the line reader's count is the line's number in the input
		m.ObserveAt(src.lr.Line(), p.iperfStream.translate(src.lr.Line(), line))
		p.cuda.observe(line)
		p.iperfCtrl.observe(line)
		p.mlx5.observe(src.lr.Line(), line)
		p.rdma.observe(line)
		p.qpt.observe(src.lr.Line(), line)
		p.qpf.observe(src.lr.Line(), line)
		if !p.Input.errorLines && m.Found() {
			p.Input.errorLines = true
		}
	}
	src = newPasteReader(textIn, &p.Input.pasteStats, observe)
	err = parseTextInto(&p, src, sample, br, isFramed)
	p.qpt.end()
	p.qpf.end()
	p.Errors = p.iperfStream.restore(m.Hits())
	if err != nil && len(p.Errors) > 0 && p.Format != FormatErrors {
		// the output stopped before its results (a waived test, a tool
		// that failed): its error lines are what it says
		p = Parsed{Format: FormatErrors, Detection: p.Detection, Input: p.Input, Errors: p.Errors, cuda: p.cuda, iperfCtrl: p.iperfCtrl, mlx5: p.mlx5, qpt: p.qpt, qpf: p.qpf}
		err = nil
	}
	if err == nil && p.Format == FormatErrors && len(p.Errors) == 0 {
		err = fmt.Errorf("%s: no line matches a known error", p.Format)
	}
	if err != nil && p.Input.LongLines > 0 {
		err = fmt.Errorf("%w; %d over-long line%s skipped", err, p.Input.LongLines, plural(p.Input.LongLines))
	}
	return p, err
}

// parseTextInto parses a text format from the normalised lines.
func parseTextInto(p *Parsed, src *pasteReader, sample []byte, br *bufio.Reader, isFramed bool) error {
	format := p.Format
	switch format {
	case FormatNCCLTests, FormatNCCLLog:
		// the NCCL parser hands the error catalogue the lines worth its time
		obs := src.observe
		src.observe = nil
		o, err := results.ParseNCCLTestsLinesSeen(src, obs)
		p.NCCL = &o
		if err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
		l := &o.Log
		if len(o.Tables) == 0 && l.InfoLines == 0 && l.Version == "" && l.WarnCount == 0 && l.AttnCount == 0 && len(l.Diag) == 0 && !p.Input.errorLines && !separateTests(o.Launch) && o.Launch.CompiledNCCL == "" && (o.Launch.NoRows == nil || !o.Launch.NoRows.Header) {
			if o.Unparsed > 0 {
				return fmt.Errorf("%s: %d table rows could not be read and no complete row was found", format, o.Unparsed)
			}
			return fmt.Errorf("%s: no result rows and no NCCL log lines found (truncated?)", format)
		}
		if len(o.Tables) > 0 {
			p.Format = FormatNCCLTests
		} else {
			p.Format = FormatNCCLLog
		}
		return nil
	case FormatPerftest:
		runs, err := results.ParsePerftest(src)
		p.Perftest = runs
		if err != nil {
			return fmt.Errorf("perftest: %w", err)
		}
		if !anyRows(runs) {
			return fmt.Errorf("perftest: no result rows found (truncated?)")
		}
	case FormatNVBandwidth:
		run, err := results.ParseNVBandwidth(src)
		p.NVBandwidth = &run
		if err != nil {
			return fmt.Errorf("nvbandwidth: %w", err)
		}
		if len(run.Tests) == 0 || len(run.Tests[0].Values) == 0 {
			return fmt.Errorf("nvbandwidth: no result matrix found (truncated?)")
		}
	case FormatAllReduceBench:
		t, err := results.ParseAllReduceBench(src)
		p.NCCL = &results.NCCLOutput{Tables: []results.NCCLTable{t}}
		if err != nil {
			return fmt.Errorf("all_reduce_bench: %w", err)
		}
		if len(t.Rows) == 0 {
			return fmt.Errorf("all_reduce_bench: no table rows found")
		}
	case FormatIperf3Text:
		r, how, err := results.ParseIperf3Text(src)
		if err != nil {
			return fmt.Errorf("iperf3: %w", err)
		}
		if r.Intervals == 0 && how.RateFrom == "" {
			return fmt.Errorf("iperf3: no interval or summary line with a rate found")
		}
		p.Iperf3, p.Iperf3Text = &r, &how
	case FormatNCCLRAS:
		t := sample
		if isFramed {
			t = verbatimSample(sample)
		}
		if t = bytes.TrimSpace(t); len(t) > 0 && t[0] == '{' {
			data, err := readJSON(br, isFramed, format)
			if err != nil {
				return err
			}
			ras, err := results.ParseRASJSON(data)
			if err != nil {
				return err
			}
			p.RAS = &ras
			return nil
		}
		ras, err := results.ParseRAS(src)
		p.RAS = &ras
		if err != nil {
			return fmt.Errorf("nccl-ras: %w", err)
		}
		if len(ras.Groups) == 0 && len(ras.Findings) == 0 {
			return fmt.Errorf("nccl-ras: no communicator table and no finding found")
		}
	case FormatErrors:
		if _, err := io.Copy(io.Discard, src); err != nil {
			return fmt.Errorf("read: %w", err)
		}
	default:
		return fmt.Errorf("unknown input format %q (want one of %v)", format, Formats)
	}
	return nil
}

// readJSON reads a JSON document whole, bounded.
func readJSON(br *bufio.Reader, isFramed bool, format string) ([]byte, error) {
	var src io.Reader = br
	if isFramed {
		src = newVerbatimReader(br)
	}
	data, err := io.ReadAll(io.LimitReader(src, maxJSON+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxJSON {
		return nil, fmt.Errorf("%s: JSON document larger than %d MiB", format, maxJSON>>20)
	}
	return data, nil
}

func parseJSON(p Parsed, data []byte) (Parsed, error) {
	if p.Format == FormatIperf3 {
		r, err := results.ParseIperf3(data)
		if err != nil {
			return p, err
		}
		p.Iperf3 = &r
		p.Errors = iperf3JSONErrors(data, r.Error)
		return p, nil
	}
	if p.Format == FormatSparkrigJSON {
		var tables []results.NCCLTable
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' { // the command's report document
			var doc struct {
				GPU struct {
					Collectives []results.NCCLTable `json:"collectives"`
				} `json:"gpu"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				return p, fmt.Errorf("sparkrig JSON: %w", err)
			}
			tables = doc.GPU.Collectives
		} else if err := json.Unmarshal(data, &tables); err != nil {
			return p, fmt.Errorf("sparkrig JSON: %w", err)
		}
		if len(tables) == 0 || len(tables[0].Rows) == 0 {
			return p, fmt.Errorf("sparkrig JSON: no results")
		}
		for i := range tables {
			tables[i].FinishPeak()
		}
		p.NCCL = &results.NCCLOutput{Tables: tables}
		return p, nil
	}
	t, err := results.ParseNCCLTestsJSON(data)
	if err != nil {
		return p, err
	}
	if len(t.Rows) == 0 {
		return p, fmt.Errorf("nccl-tests JSON: no results (truncated?)")
	}
	p.NCCL = &results.NCCLOutput{Tables: []results.NCCLTable{t}}
	return p, nil
}

func anyRows(runs []results.PerftestRun) bool {
	for _, r := range runs {
		if len(r.BW) > 0 || len(r.Lat) > 0 {
			return true
		}
	}
	return false
}

// Judge compares already-parsed results with their expectations.
func Judge(name string, p Parsed, opt Options) report.AnalysisResult {
	set := opt.Expect
	if set == nil {
		s, err := expect.Default()
		if err != nil {
			return report.AnalysisResult{File: name, Format: p.Format, Status: report.VerdictUnknown, Error: err.Error()}
		}
		set = &s
	}
	a := &analysis{set: set, res: report.AnalysisResult{File: name, Format: p.Format,
		Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}}}
	if p.NCCL != nil {
		for _, n := range reconcile(p.NCCL) {
			a.note("%s", n)
		}
	}
	a.infer(p, opt)
	a.input(p)
	if p.Iperf3Text != nil {
		a.iperfText = p.Iperf3Text.RateFrom
		r := p.Iperf3
		if r == nil {
			r = &results.Iperf3Result{}
		}
		a.udpRules(p.Iperf3Text, r)
		a.reverseStopped(p.Iperf3Text, r)
	}
	switch {
	case p.RAS != nil:
		a.ras(p.RAS)
	case p.NCCL != nil:
		a.nccl(p.NCCL)
	case p.Perftest != nil:
		a.perftest(p.Perftest)
	case p.Iperf3 != nil:
		a.iperf3(p.Iperf3)
	case len(p.TCPProbe) > 0:
		a.tcpProbe(p.TCPProbe)
	case p.NVBandwidth != nil:
		a.nvbandwidth(p.NVBandwidth)
	case p.Format == FormatErrors:
		a.res.Measured = "error lines"
	}
	logVersion := ""
	if p.NCCL != nil {
		logVersion = p.NCCL.Log.Version
	}
	a.asyncAddrCopy(p.cuda, logVersion)
	a.memPoolUnsupported(p.cuda, logVersion)
	a.fixedLater(p.Errors, p.cuda, logVersion)
	var ncclLog *results.NCCLLog
	if p.NCCL != nil {
		ncclLog = &p.NCCL.Log
	}
	a.ibMTUAccessViolation(p.Errors, p.cuda, ncclLog)
	a.ibHCAFilterMatchesNone(ncclLog, &p.rdma)
	a.iperfNoServer(p.iperfCtrl, p.Format == FormatErrors && hasHit(p.Errors, "iperf3-control-closed"))
	a.iperf2Client(p.iperfCtrl, p.Errors)
	if p.NCCL != nil && len(p.Errors) == 0 {
		a.p2pStallAfterInit(p.NCCL)
	}
	hits := p.Errors
	if p.NCCL != nil {
		hits = a.rdmaUnneededOneNode(p.NCCL, hits)
		hits = a.connectInfoMismatch(p.NCCL, hits)
		a.systemErrorOneNode(p.NCCL, hits)
		a.efaNoGDR(p.NCCL, hits)
		a.debugEnvSet(p.NCCL, hits)
		a.envDiffers(p.NCCL, hits)
	}
	a.archTooOld(p.cuda, archVersion(logVersion, p.NCCL), archFailureExplained(hits, p.cuda))
	a.testSizeOOM(p.cuda)
	a.mlx5Syndrome(p.mlx5)
	a.qpLinkLocalRemote(p.qpt)
	a.sparkLinkSlow(hits)
	a.qpGIDFamily(p.qpf)
	a.errors(hits)
	a.slotPower(hits)
	if r := p.Iperf3; r != nil && a.res.Error != "" && iperf3ErrorKnown(hits, r.Error) {
		// the signature names the cause of the error iperf3 reported
		a.note("%s", a.res.Error)
		a.res.Error = ""
	}
	if len(p.kept) > 0 {
		a.res.Flags = append(append([]report.AnalysisFlag(nil), p.kept...), a.res.Flags...)
		if a.res.Measured == "" {
			a.res.Measured = "error lines"
		}
	}
	a.res.Status = a.status()
	return a.res
}

type analysis struct {
	// iperfText is where an iperf3 text output's rate came from
	iperfText string
	set       *expect.Set
	res       report.AnalysisResult
	// causes are what the startup lines show, ranked with the error
	// signatures when the flags are put in order
	causes []rankedFlag
}

// status is the worst verdict of the items and flags, or unknown when the
// input reports its own failure (an iperf3 "error").
func (a *analysis) status() report.Verdict {
	if a.res.Error != "" {
		return report.VerdictUnknown
	}
	worst := report.VerdictNone
	for _, it := range a.res.Items {
		worst = report.Worse(worst, it.Verdict)
	}
	for _, f := range a.res.Flags {
		worst = report.Worse(worst, f.Severity.Verdict())
	}
	return worst
}
