package analyze

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// FormatSparkrigReport is a report document sparkrig wrote (`--format
// json` of analyze, bench, doctor...): {"tool":"sparkrig","command":...}.
const FormatSparkrigReport = "sparkrig-report"

// sparkrigDocument tells a sparkrig report document by its "tool" field.
func sparkrigDocument(t []byte) bool {
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var head struct {
		Tool string `json:"tool"`
	}
	// the head of a large document may not parse whole; the field is near
	// the top, so look for it as text first
	if !bytes.Contains(t, []byte(`"tool"`)) || !bytes.Contains(t, []byte(`"sparkrig"`)) {
		return false
	}
	if json.Unmarshal(t, &head) == nil {
		return head.Tool == "sparkrig"
	}
	return bytes.Contains(t, []byte(`"tool": "sparkrig"`)) || bytes.Contains(t, []byte(`"tool":"sparkrig"`))
}

// ReaderAll analyses one input that may hold several results: a sparkrig
// report document gives one analysis per result it holds, judged again
// with today's expectations; any other input gives one, as Reader.
func ReaderAll(name string, r io.Reader, opt Options) []report.AnalysisResult {
	br := bufio.NewReaderSize(r, results.ReadBufferSize)
	head, _ := br.Peek(sampleSize)
	if opt.InputFormat != "" && opt.InputFormat != FormatSparkrigReport || !sparkrigDocument(bytes.TrimSpace(head)) && !report.LooksLikeGPUOutput(head) {
		return []report.AnalysisResult{Reader(name, br, opt)}
	}
	fail := func(err error) []report.AnalysisResult {
		return []report.AnalysisResult{{File: name, Format: FormatSparkrigReport, Status: report.VerdictUnknown, Error: err.Error(),
			Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}}}
	}
	data, err := io.ReadAll(io.LimitReader(br, maxJSON+1))
	if err != nil {
		return fail(fmt.Errorf("read: %w", err))
	}
	if len(data) > maxJSON {
		return fail(fmt.Errorf("sparkrig report: JSON document larger than %d MiB", maxJSON>>20))
	}
	if doc, ok, _ := report.Decode(data); ok && doc.GPU != nil && len(doc.Analyses) == 0 && (len(doc.GPU.Copies) > 0 || doc.GPU.Info != nil) {
		return []report.AnalysisResult{gpuAnalysis(name, doc.GPU)}
	}
	parsed, err := ParseDocument(data)
	if err != nil {
		return fail(err)
	}
	var causes []report.Cause
	if ev := linkEvidence(data); ev != nil {
		causes = diagnose.FieldCauses(*ev)
	}
	out := make([]report.AnalysisResult, 0, len(parsed))
	for _, d := range parsed {
		label := name
		if d.File != "" && d.File != name {
			label = name + ": " + d.File
		}
		res := Judge(label, d.Parsed, opt)
		if diagnose.FieldFormat(res.Format) {
			// the run's own evidence about its links: the causes bench named
			diagnose.WithFieldCauses(&res, causes)
		}
		out = append(out, res)
	}
	return out
}

// DocumentResult is one result a sparkrig report document holds.
type DocumentResult struct {
	File   string
	Parsed Parsed
}

// ParseDocument reads the results of a sparkrig report document: the
// parsed data of each analysis it holds. A document with none (a doctor
// report, an analysis that could not read its file) is an error naming its
// command.
func ParseDocument(data []byte) ([]DocumentResult, error) {
	var doc report.Report
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("sparkrig report: %w", err)
	}
	if doc.Tool != "sparkrig" {
		return nil, fmt.Errorf("sparkrig report: not a sparkrig document (tool %q)", doc.Tool)
	}
	var out []DocumentResult
	for _, a := range doc.Analyses {
		p, ok := parsedOf(a)
		if ok {
			out = append(out, DocumentResult{File: a.File, Parsed: p})
		}
	}
	if len(out) == 0 {
		cmd := doc.Command
		if cmd == "" {
			cmd = "unnamed command"
		}
		return nil, fmt.Errorf("sparkrig report of %s: it holds no benchmark result to analyze (render it with sparkrig report)", cmd)
	}
	return out, nil
}

// parsedOf rebuilds the parsed input an analysis kept in its data; the
// error signatures it found are kept as they were (the lines they came
// from are not in the document).
func parsedOf(a report.AnalysisResult) (Parsed, bool) {
	d := a.Data
	p := Parsed{Format: a.Format}
	for _, f := range a.Flags {
		if strings.HasPrefix(f.ID, "error.") {
			p.kept = append(p.kept, f)
		}
	}
	switch {
	case d.RAS != nil:
		p.RAS = d.RAS
	case len(d.NCCLTables) > 0 || d.NCCLLog != nil:
		o := &results.NCCLOutput{Tables: d.NCCLTables}
		if d.NCCLLog != nil {
			o.Log = *d.NCCLLog
		}
		for i := range o.Tables {
			o.Tables[i].FinishPeak()
		}
		p.NCCL = o
	case len(d.Perftest) > 0:
		p.Perftest = d.Perftest
	case d.Iperf3 != nil:
		p.Iperf3 = d.Iperf3
	case d.NVBandwidth != nil:
		p.NVBandwidth = d.NVBandwidth
	default:
		return p, len(p.kept) > 0
	}
	return p, true
}

// linkEvidence is the evidence about its links a bench run's document
// keeps, or nil.
func linkEvidence(data []byte) *report.LinkEvidence {
	var doc struct {
		LinkEvidence *report.LinkEvidence `json:"link_evidence"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return doc.LinkEvidence
}
