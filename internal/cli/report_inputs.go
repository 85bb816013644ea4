package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/sparkrig/sparkrig/internal/analyze"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// reportInputs sorts the inputs of `sparkrig report` into snapshots (audited
// together, so the cluster checks see every node) and files (JSON documents
// or raw benchmark outputs), and adds them to r. It returns how many inputs
// could not be read, each named on stderr and in the report, and the worst
// verdict the documents of the parts kept gave (see reportMerge).
func reportInputs(env *Env, r *report.Report, inputs []string, aopt analyze.Options) (int, report.Verdict) {
	bad := 0
	m := newReportMerge(r)
	var snaps []string
	for _, in := range inputs {
		st, err := os.Stat(in)
		switch {
		case err != nil:
			bad += badInput(env, r, in, err)
		case st.IsDir() || snapshot.IsArchiveName(in):
			snaps = append(snaps, in)
		default:
			if err := addFile(m, in, aopt); err != nil {
				bad += badInput(env, r, in, err)
			}
		}
	}
	if len(snaps) > 0 {
		// The same path as `sparkrig doctor --snapshot A --snapshot B`.
		doc := auditReport(readSnapshots(snaps), check.ProfileUnknown, env)
		for _, h := range doc.Hosts {
			if h.Status == report.HostBadSnapshot {
				fmt.Fprintf(env.Stderr, "sparkrig: report: %s: %s\n", h.Source, h.Error)
				bad++
			}
		}
		m.add(doc, "the snapshots")
	}
	return bad, m.finish()
}

func badInput(env *Env, r *report.Report, in string, err error) int {
	a := unreadable(in, err)
	fmt.Fprintf(env.Stderr, "sparkrig: report: %s: %s\n", in, a.Error)
	r.Analyses = append(r.Analyses, a)
	return 1
}

// maxInputBytes bounds a JSON input, which is read whole; raw benchmark
// outputs stream through the analysis in constant memory, whatever their size.
const maxInputBytes = 256 << 20

// addFile reads a sparkrig JSON document (any command's) or analyses a raw
// benchmark output as `sparkrig analyze` would. A document that says its
// command failed is merged with what it holds and named as a bad input.
func addFile(m *reportMerge, path string, aopt analyze.Options) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var in io.Reader
	if br := bufio.NewReader(f); startsJSONObject(br) {
		data, err := io.ReadAll(io.LimitReader(br, maxInputBytes+1))
		if err != nil {
			return err
		}
		if len(data) > maxInputBytes {
			return fmt.Errorf("larger than %d MiB", maxInputBytes>>20)
		}
		if doc, ok, err := sparkrigDocument(data); ok {
			if err != nil {
				return err
			}
			m.add(doc, path)
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
	a := analyze.Reader(path, in, aopt)
	if a.Error != "" {
		return fmt.Errorf("%s", a.Error)
	}
	m.r.Analyses = append(m.r.Analyses, a)
	return nil
}

// startsJSONObject reports whether the first byte after white space (and a
// byte-order mark) is '{', without consuming anything.
func startsJSONObject(br *bufio.Reader) bool {
	head, _ := br.Peek(4096)
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

// runStepSep joins a bench run's id and a step's id in an analysis' File; the
// HTML report names the run in legends and comparisons (render.runLabel).
const runStepSep = " · "

// sparkrigDocument decodes data when it is a sparkrig JSON document. A bench
// record's analyses are relabelled with the run's id, so runs compare by
// name in the report.
func sparkrigDocument(data []byte) (*report.Report, bool, error) {
	var doc struct {
		report.Report
		Bench *struct {
			ID string `json:"id"`
		} `json:"bench"`
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(data, &doc) != nil || doc.Tool != "sparkrig" {
		return nil, false, nil
	}
	if doc.Schema > report.SchemaVersion {
		return nil, true, fmt.Errorf("written by a newer sparkrig (schema %d; this one reads %d)", doc.Schema, report.SchemaVersion)
	}
	if ap := doc.AllPairs; ap != nil && !square(ap.Matrix, len(ap.Nodes)) {
		return nil, true, fmt.Errorf("all_pairs: the matrix is not one row and one column per node (%d nodes)", len(ap.Nodes))
	}
	if doc.Bench != nil && doc.Bench.ID != "" {
		for i := range doc.Analyses {
			doc.Analyses[i].File = doc.Bench.ID + runStepSep + doc.Analyses[i].File
		}
	}
	return &doc.Report, true, nil
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
