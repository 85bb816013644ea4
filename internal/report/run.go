package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Options are the inputs of the report command's pipeline (Run). What
// reads raw benchmark outputs and what audits snapshots are handed in, so
// this package stays the model: it reads sparkrig documents itself and
// passes everything else to them.
type Options struct {
	// Inputs are the paths named: sparkrig JSON documents, snapshots
	// (directories or archives) and raw benchmark outputs.
	Inputs []string
	// Version and Now stamp the report.
	Version string
	Now     time.Time
	// Raw analyses a raw benchmark output as `sparkrig analyze` would.
	Raw RawReader
	// IsSnapshot reports whether a path that is not a directory names a
	// snapshot archive.
	IsSnapshot func(path string) bool
	// AuditSnapshots audits the snapshot paths together, as `sparkrig doctor
	// --snapshot A --snapshot B` would, so the cluster checks see every node.
	AuditSnapshots func(paths []string) *Report
	// Warn hears each input that could not be read, as it is found.
	Warn func(input, msg string)
	// Open opens an input file (nil: os.Open).
	Open func(path string) (io.ReadCloser, error)
}

// RawReader analyses one raw benchmark output read from r.
type RawReader func(path string, r io.Reader) AnalysisResult

// ErrNoInput is returned by Run for a path that names nothing: a mistake on
// the command line, not an input that failed, so no report is written.
var ErrNoInput = errors.New("no such file or directory (no report written)")

// Run is the report command's pipeline: every input read, the documents
// merged (Merge), the snapshots audited together, the raw outputs analysed,
// and the status judged again from the content, never better than a kept
// part's own document said and unknown when an input could not be read.
// An input that names nothing ends it with an error wrapping ErrNoInput.
func Run(ctx context.Context, o Options) (*Report, error) {
	for _, in := range o.Inputs {
		if in == "-" {
			continue
		}
		if _, err := os.Stat(in); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", in, ErrNoInput)
		}
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string, string) {}
	}
	r := &Report{Schema: SchemaVersion, Tool: "sparkrig", ToolVersion: o.Version,
		Command: "report", GeneratedAt: o.Now.UTC(), Hosts: []Host{}}
	m := NewMerge(r)
	m.Open = o.Open
	bad := func(in string, err error) {
		a := Unreadable(in, err)
		warn(in, a.Error)
		r.Analyses = append(r.Analyses, a)
	}
	nbad := 0
	var snaps []string
	for _, in := range o.Inputs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := os.Stat(in)
		switch {
		case err != nil:
			bad(in, err)
			nbad++
		case st.IsDir() || o.IsSnapshot != nil && o.IsSnapshot(in):
			snaps = append(snaps, in)
		default:
			if err := m.AddFile(in, o.Raw); err != nil {
				bad(in, err)
				nbad++
			}
		}
	}
	if len(snaps) > 0 && o.AuditSnapshots != nil {
		doc := o.AuditSnapshots(snaps)
		for _, h := range doc.Hosts {
			if h.Status == HostBadSnapshot {
				warn(h.Source, h.Error)
				nbad++
			}
		}
		m.Add(doc, "the snapshots")
	}
	floor := m.Finish()
	r.Status = Unread(Worse(r.Overall(), floor), nbad > 0)
	return r, nil
}

// Unreadable is the analysis of an input that could not be read: its
// status unknown and the reason, without the path a PathError repeats.
func Unreadable(name string, err error) AnalysisResult {
	msg := err.Error()
	if pe, ok := err.(*fs.PathError); ok {
		msg = pe.Op + ": " + pe.Err.Error()
	}
	return AnalysisResult{File: name, Status: VerdictUnknown, Error: msg,
		Items: []AnalysisItem{}, Flags: []AnalysisFlag{}}
}

// MaxInputBytes bounds the JSON inputs of one merge (sparkrig documents
// and JSON benchmark outputs), each and together: each is read whole and
// decoded, and the report renders what they hold.
// Raw benchmark outputs stream through the analysis in constant memory,
// whatever their size.
const MaxInputBytes = 128 << 20

// MaxInputObjects bounds the JSON objects (hosts, findings, links, rows …)
// of the JSON inputs of one merge together. Memory follows the objects a
// document holds more than its bytes: 3 bytes ("{},") decode into a finding
// of 152 and render into a section of the page. A doctor document of 16,000
// hosts holds 608,034 objects in 95 MB and its page takes about 400 MB.
const MaxInputObjects = 1 << 20

// countObjects counts the JSON objects of data: the '{' outside strings.
func countObjects(data []byte) int {
	n, in, esc := 0, false, false
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == '{':
			n++
		}
	}
	return n
}

// budget refuses a JSON input that would take the merge past
// MaxInputBytes or MaxInputObjects, or counts it.
func (m *Merge) budget(data []byte) error {
	if len(data) > MaxInputBytes-m.jsonBytes {
		if m.jsonBytes == 0 {
			return fmt.Errorf("larger than %d MiB, the most one report reads", MaxInputBytes>>20)
		}
		return fmt.Errorf("past %d MiB with the documents before it, the most one report reads", MaxInputBytes>>20)
	}
	n := countObjects(data)
	if n > MaxInputObjects-m.jsonObjects {
		before := ""
		if m.jsonObjects > 0 {
			before = fmt.Sprintf(" (%d in the documents before it)", m.jsonObjects)
		}
		return fmt.Errorf("holds %d JSON objects (hosts, findings, links …)%s, past the %d one report reads",
			n, before, MaxInputObjects)
	}
	m.jsonBytes += len(data)
	m.jsonObjects += n
	return nil
}

// AddFile reads a sparkrig JSON document (any command's) and merges it, or
// analyses a raw benchmark output with raw (nil: every raw output is an
// error). A document that says its command failed is merged with what it
// holds and returned as an error.
func (m *Merge) AddFile(path string, raw RawReader) error {
	open := m.Open
	if open == nil {
		open = func(p string) (io.ReadCloser, error) { return os.Open(p) }
	}
	f, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var in io.Reader
	if br := bufio.NewReader(f); startsJSONObject(br) {
		data, err := io.ReadAll(io.LimitReader(br, MaxInputBytes+1))
		if err != nil {
			return err
		}
		if err := m.budget(data); err != nil {
			return err
		}
		if doc, ok, err := Decode(data); ok {
			if err != nil {
				return err
			}
			m.Add(doc, path)
			if doc.Error != "" {
				return fmt.Errorf("%s", doc.Error)
			}
			if doc.GPU == nil || len(doc.GPU.Collectives) == 0 {
				return nil
			}
			// bench gpu collective's tables are judged and plotted as
			// analyze reads them
		}
		in = bytes.NewReader(data)
	} else {
		in = br
	}
	if raw == nil {
		return fmt.Errorf("not a sparkrig document")
	}
	a := raw(path, in)
	if a.Error != "" {
		return fmt.Errorf("%s", a.Error)
	}
	m.r.Analyses = append(m.r.Analyses, a)
	return nil
}

// startsJSONObject reports whether the first byte after white space (and a
// byte-order mark) is '{', or the input is a bare GPU benchmark output,
// without consuming anything.
func startsJSONObject(br *bufio.Reader) bool {
	head, _ := br.Peek(4096)
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	return len(t) > 0 && (t[0] == '{' || LooksLikeGPUOutput(t))
}

// RunStepSep joins a bench run's id and a step's id in an analysis' File;
// the HTML report names the run in legends and comparisons.
const RunStepSep = " · "

// Decode decodes data when it is a sparkrig JSON document (ok true; err
// says why a sparkrig document cannot be used). A bench record's analyses
// are relabelled with the run's id, so runs compare by name in the report.
func Decode(data []byte) (doc *Report, ok bool, err error) {
	var d struct {
		Report
		Bench *struct {
			ID string `json:"id"`
		} `json:"bench"`
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if doc, ok := DecodeGPUOutput(t); ok {
		return doc, true, nil
	}
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(data, &d) != nil || d.Tool != "sparkrig" {
		return nil, false, nil
	}
	if d.Schema > SchemaVersion {
		return nil, true, fmt.Errorf("written by a newer sparkrig (schema %d; this one reads %d)", d.Schema, SchemaVersion)
	}
	if ap := d.AllPairs; ap != nil && !square(ap.Matrix, len(ap.Nodes)) {
		return nil, true, fmt.Errorf("all_pairs: the matrix is not one row and one column per node (%d nodes)", len(ap.Nodes))
	}
	if d.Bench != nil && d.Bench.ID != "" {
		for i := range d.Analyses {
			d.Analyses[i].File = d.Bench.ID + RunStepSep + d.Analyses[i].File
		}
	}
	return &d.Report, true, nil
}

// square reports whether m has n rows of n values.
func square(m [][]float64, n int) bool {
	if len(m) != n {
		return false
	}
	for _, row := range m {
		if len(row) != n {
			return false
		}
	}
	return true
}
