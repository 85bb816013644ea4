package report

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeDoc writes doc as a sparkrig JSON document under dir.
func writeDoc(t *testing.T, dir, name string, doc *Report) string {
	t.Helper()
	doc.Schema, doc.Tool = SchemaVersion, "sparkrig"
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func qualifyDoc(at time.Time, status Verdict, rate float64) *Report {
	return &Report{Command: "qualify", GeneratedAt: at, Status: status,
		AllPairs: &AllPairs{Nodes: []string{"a", "b"}, Matrix: [][]float64{{0, rate}, {rate, 0}}},
		Cluster:  &Cluster{Findings: []Finding{{ID: "allpairs.suspect", Severity: Fail, Subject: "a"}}}}
}

// TestRunKeepsTheLatestPart: of two qualify runs the one generated last is
// kept whatever the order given, with its findings and its verdict as the
// floor, and the report says which it left out; a host audited twice keeps
// the later input's audit.
func TestRunKeepsTheLatestPart(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	late := writeDoc(t, dir, "late.json", qualifyDoc(t0.Add(time.Hour), VerdictCritical, 12))
	early := writeDoc(t, dir, "early.json", qualifyDoc(t0, VerdictOK, 90))
	h1 := writeDoc(t, dir, "d1.json", &Report{Command: "doctor", Hosts: []Host{{Host: "n1", Status: HostAudited, Source: "old"}}})
	h2 := writeDoc(t, dir, "d2.json", &Report{Command: "doctor", Hosts: []Host{{Host: "n1", Status: HostAudited, Source: "new"}}})
	for _, order := range [][]string{{late, early, h1, h2}, {early, late, h1, h2}} {
		r, err := Run(context.Background(), Options{Inputs: order, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if r.AllPairs == nil || r.AllPairs.Matrix[0][1] != 12 {
			t.Fatalf("%v: all-pairs %+v, want late.json's", order, r.AllPairs)
		}
		if r.Status != VerdictCritical {
			t.Errorf("%v: status %s, want critical (late.json's own)", order, r.Status)
		}
		if len(r.Hosts) != 1 || r.Hosts[0].Source != "new" {
			t.Errorf("%v: hosts %+v, want n1 once, from d2.json", order, r.Hosts)
		}
		var ids []string
		for _, f := range r.Cluster.Findings {
			ids = append(ids, f.ID)
		}
		if !slices.Equal(ids, []string{"allpairs.suspect", "report.part-replaced"}) {
			t.Errorf("%v: cluster findings %q", order, ids)
		}
		note := r.Cluster.Findings[1].Observed
		if !strings.HasPrefix(note, early+" and "+late) && !strings.HasPrefix(note, late+" and "+early) || !strings.Contains(note, late+"'s (generated 2026-11-02T11:00:00Z) is shown") {
			t.Errorf("%v: note %q", order, note)
		}
		if got := PartNames(r); !slices.Equal(got, []string{"an all-pairs run"}) {
			t.Errorf("PartNames = %q", got)
		}
	}
}

// TestRunNamesEachBadInputAndKeepsTheOthers: a raw output the reader
// refuses, a document from a newer sparkrig, a document whose command
// failed and a path to a directory of snapshots: each bad one is heard
// once and named in the report, the status is unknown, the good inputs are
// all there, and the snapshots go to the audit together.
func TestRunNamesEachBadInputAndKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(good, []byte("# nccl-tests\n"), 0o644)
	os.WriteFile(junk, []byte("nothing known\n"), 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(`{"tool":"sparkrig","schema_version":99}`), 0o644)
	failed := writeDoc(t, dir, "failed.json", &Report{Command: "doctor", Error: "ssh: no route", Status: VerdictUnknown})
	snapA, snapB := filepath.Join(dir, "a"), filepath.Join(dir, "b.tar.gz")
	os.Mkdir(snapA, 0o755)
	os.WriteFile(snapB, nil, 0o644)
	var heard []string
	var audited []string
	o := Options{Inputs: []string{good, junk, snapA, newer, failed, snapB}, Now: time.Unix(0, 0),
		Raw: func(path string, r io.Reader) AnalysisResult {
			b, _ := io.ReadAll(r)
			if !strings.HasPrefix(string(b), "# nccl-tests") {
				return AnalysisResult{File: path, Error: "format not recognised"}
			}
			return AnalysisResult{File: path, Status: VerdictOK}
		},
		IsSnapshot: func(p string) bool { return strings.HasSuffix(p, ".tar.gz") },
		AuditSnapshots: func(paths []string) *Report {
			audited = paths
			return &Report{Hosts: []Host{{Host: "a", Status: HostAudited}, {Host: "?", Status: HostBadSnapshot, Source: snapB, Error: "not gzip"}}}
		},
		Warn: func(in, msg string) { heard = append(heard, filepath.Base(in)+": "+msg) },
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"junk.txt: format not recognised",
		"newer.json: written by a newer sparkrig (schema 99; this one reads 3)",
		"failed.json: ssh: no route", "b.tar.gz: not gzip"}
	if !slices.Equal(heard, want) {
		t.Errorf("heard\n%q\nwant\n%q", heard, want)
	}
	if !slices.Equal(audited, []string{snapA, snapB}) {
		t.Errorf("audited %q together, want both snapshots", audited)
	}
	if r.Status != VerdictUnknown {
		t.Errorf("status %s, want unknown", r.Status)
	}
	var files []string
	for _, a := range r.Analyses {
		files = append(files, filepath.Base(a.File)+"="+string(a.Status))
	}
	if !slices.Equal(files, []string{"good.txt=ok", "junk.txt=unknown", "newer.json=unknown", "failed.json=unknown"}) {
		t.Errorf("analyses %q", files)
	}
	if len(r.Hosts) != 2 {
		t.Errorf("hosts %+v, want the snapshots' two", r.Hosts)
	}
}

// TestRunRefusesAPathThatNamesNothing: a mistyped path ends the run before
// anything is read, so no report silently lacks it.
func TestRunRefusesAPathThatNamesNothing(t *testing.T) {
	dir := t.TempDir()
	ok := writeDoc(t, dir, "d.json", &Report{Command: "doctor"})
	_, err := Run(context.Background(), Options{Inputs: []string{ok, filepath.Join(dir, "missing.json")}})
	if !errors.Is(err, ErrNoInput) || !strings.HasSuffix(err.Error(), "missing.json: no such file or directory (no report written)") {
		t.Errorf("err = %v", err)
	}
}

// TestDecode: only sparkrig's documents decode; an all-pairs matrix that is
// not square is refused; a bench record's analyses are named by its run.
func TestDecode(t *testing.T) {
	for _, in := range []string{`{"tool":"other"}`, `[1]`, ``, `{"tool":"sparkrig"`} {
		if _, ok, _ := Decode([]byte(in)); ok {
			t.Errorf("%q decoded as a sparkrig document", in)
		}
	}
	_, ok, err := Decode([]byte(`{"tool":"sparkrig","schema_version":3,"all_pairs":{"nodes":["a","b"],"matrix_gbps":[[0,1]]}}`))
	if !ok || err == nil || !strings.Contains(err.Error(), "not one row and one column per node (2 nodes)") {
		t.Errorf("ragged matrix: ok %v, err %v", ok, err)
	}
	doc, ok, err := Decode([]byte(" \n" + `{"tool":"sparkrig","schema_version":3,"bench":{"id":"run-7"},"analyses":[{"file":"all_reduce","status":"ok"}]}`))
	if !ok || err != nil || doc.Analyses[0].File != "run-7"+RunStepSep+"all_reduce" {
		t.Errorf("bench record: ok %v, err %v, %+v", ok, err, doc)
	}
}
