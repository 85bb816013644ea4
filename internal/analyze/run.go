package analyze

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Inputs say what Run reads and how it labels the report.
type Inputs struct {
	// Files are the paths to read; "-" is Stdin.
	Files []string
	Stdin io.Reader
	// ToolVersion and Now are written into the report.
	ToolVersion string
	Now         time.Time
}

// Run is the analyze command's pipeline: every file read and judged, one
// result per file (one per analysis a sparkrig report document holds), a
// file that cannot be read a result with its Error and status unknown.
// It returns ctx's error when interrupted (what was read so far with it).
func Run(ctx context.Context, in Inputs, opt Options) (*report.Report, error) {
	r := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: in.ToolVersion, Command: "analyze",
		GeneratedAt: in.Now.UTC(), Hosts: []report.Host{}}
	for _, name := range in.Files {
		res := analyzeFile(name, in.Stdin, opt)
		if err := ctx.Err(); err != nil {
			// stdin's read ended with the interrupt
			return r, err
		}
		r.Analyses = append(r.Analyses, res...)
	}
	r.Status = r.Overall()
	return r, nil
}

// analyzeFile analyses one input: one result, or one per result a sparkrig
// report document holds.
func analyzeFile(name string, stdin io.Reader, opt Options) []report.AnalysisResult {
	in := stdin
	display := name
	if name == "-" {
		display = "(stdin)"
		if in == nil {
			return []report.AnalysisResult{Unreadable(display, fmt.Errorf("no standard input"))}
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return []report.AnalysisResult{Unreadable(name, err)}
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return []report.AnalysisResult{Unreadable(name, fmt.Errorf("is a directory"))}
		}
		in = f
	}
	return ReaderAll(display, in, opt)
}

// Unreadable is the result for an input that could not be read: status
// unknown and one line saying why (an os.PathError without its path, which
// the result names already).
func Unreadable(name string, err error) report.AnalysisResult {
	msg := err.Error()
	if pe, ok := err.(*os.PathError); ok {
		msg = pe.Op + ": " + pe.Err.Error()
	}
	return report.AnalysisResult{File: name, Status: report.VerdictUnknown, Error: msg,
		Items: []report.AnalysisItem{}, Flags: []report.AnalysisFlag{}}
}
