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
	sample, err := br.Peek(sampleSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Parsed{}, fmt.Errorf("read: %w", err)
	}
	if format == "" {
		if format, err = Detect(sample); err != nil {
			return Parsed{}, err
		}
	} else if len(sample) == 0 {
		return Parsed{Format: format}, ErrEmpty
	}
	p := Parsed{Format: format}
	var src io.Reader = br
	if framed(sample) {
		src = newVerbatimReader(br)
	}
	switch format {
	case FormatNCCLTests, FormatNCCLLog:
		o, err := results.ParseNCCLTests(src)
		p.NCCL = &o
		if err != nil {
			return p, fmt.Errorf("%s: %w", format, err)
		}
		if len(o.Tables) == 0 && o.Log.InfoLines == 0 && o.Log.Version == "" {
			if o.Unparsed > 0 {
				return p, fmt.Errorf("%s: %d table rows could not be read and no complete row was found", format, o.Unparsed)
			}
			return p, fmt.Errorf("%s: no result rows and no NCCL INFO lines found (truncated?)", format)
		}
		if len(o.Tables) > 0 {
			p.Format = FormatNCCLTests
		} else {
			p.Format = FormatNCCLLog
		}
	case FormatPerftest:
		runs, err := results.ParsePerftest(src)
		p.Perftest = runs
		if err != nil {
			return p, fmt.Errorf("perftest: %w", err)
		}
		if !anyRows(runs) {
			return p, fmt.Errorf("perftest: no result rows found (truncated?)")
		}
	case FormatNVBandwidth:
		run, err := results.ParseNVBandwidth(src)
		p.NVBandwidth = &run
		if err != nil {
			return p, fmt.Errorf("nvbandwidth: %w", err)
		}
		if len(run.Tests) == 0 || len(run.Tests[0].Values) == 0 {
			return p, fmt.Errorf("nvbandwidth: no result matrix found (truncated?)")
		}
	case FormatAllReduceBench:
		t, err := results.ParseAllReduceBench(src)
		p.NCCL = &results.NCCLOutput{Tables: []results.NCCLTable{t}}
		if err != nil {
			return p, fmt.Errorf("all_reduce_bench: %w", err)
		}
		if len(t.Rows) == 0 {
			return p, fmt.Errorf("all_reduce_bench: no table rows found")
		}
	case FormatIperf3, FormatNCCLTestsJSON, FormatSparkrigJSON:
		data, err := io.ReadAll(io.LimitReader(src, maxJSON+1))
		if err != nil {
			return p, fmt.Errorf("read: %w", err)
		}
		if len(data) > maxJSON {
			return p, fmt.Errorf("%s: JSON document larger than %d MiB", format, maxJSON>>20)
		}
		return parseJSON(p, data)
	default:
		return p, fmt.Errorf("unknown input format %q (want one of %v)", format, Formats)
	}
	return p, nil
}

func parseJSON(p Parsed, data []byte) (Parsed, error) {
	if p.Format == FormatIperf3 {
		r, err := results.ParseIperf3(data)
		if err != nil {
			return p, err
		}
		p.Iperf3 = &r
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
	a.infer(p, opt)
	switch {
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
	}
	a.res.Status = a.status()
	return a.res
}

type analysis struct {
	set *expect.Set
	res report.AnalysisResult
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
