package analyze

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/results"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/analyses.jsonl.gz from the current code")

const goldenFile = "testdata/golden/analyses.jsonl.gz"

// goldenRecord is one input's analysis as a line of the golden file.
type goldenRecord struct {
	File string `json:"file"`
	// Mode: "file" is the whole file as `sparkrig analyze` reads it,
	// "verbatim" its program output alone, "x3" that output three times
	// over (every count tripled, every fact read again).
	Mode     string          `json:"mode"`
	Analysis json.RawMessage `json:"analysis"`
	// NCCL is what the NCCL parser read from the verbatim text: the facts
	// the analysis draws on, kept also where no verdict shows them.
	NCCL json.RawMessage `json:"nccl,omitempty"`
	// GDR is the NCCL log's hosts with and without GPUDirect RDMA.
	GDR [2][]string `json:"gdr,omitzero"`
}

// goldenRecords analyses every file under testdata (the fixtures, the
// pasted and field cases, the fuzz seeds) three ways.
func goldenRecords(t *testing.T) []goldenRecord {
	t.Helper()
	var recs []goldenRecord
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The field corpus's held-out half is read only when it is scored.
			if path == filepath.Dir(goldenFile) || path == filepath.Join("testdata", "field", "holdout") {
				return filepath.SkipDir
			}
			return nil
		}
		data := fixture.Read(t, path)
		name := filepath.ToSlash(path)
		recs = append(recs, goldenRecord{File: name, Mode: "file", Analysis: mustJSON(t, ReaderAll(name, bytes.NewReader(data), Options{}))})
		v := fixture.Verbatim(data)
		if v == nil {
			v = data
		}
		for _, mode := range []string{"verbatim", "x3"} {
			in := v
			if mode == "x3" {
				in = bytes.Repeat(v, 3)
			}
			rec := goldenRecord{File: name, Mode: mode, Analysis: mustJSON(t, Reader(name, bytes.NewReader(in), Options{}))}
			if p, err := Parse(bytes.NewReader(in), ""); err == nil && p.NCCL != nil {
				rec.NCCL = mustJSON(t, p.NCCL)
				rec.GDR[0], rec.GDR[1] = p.NCCL.Log.GDRHosts()
			}
			recs = append(recs, rec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenAnalyses holds every analysis of every file under testdata to
// the one recorded in testdata/golden (written by the code before the
// NCCL log reader's fast paths): reading faster must not read differently.
// `go test ./internal/analyze -run TestGoldenAnalyses -update-golden`
// rewrites it where an analysis is meant to change.
func TestGoldenAnalyses(t *testing.T) {
	recs := goldenRecords(t)
	if *updateGolden {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		for _, r := range recs {
			zw.Write(append(mustJSON(t, r), '\n'))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r goldenRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		want[r.File+" "+r.Mode] = bytes.Clone(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// the golden file must hold NCCL facts, or it proves nothing about
	// the NCCL reader
	if n := withInfoLines(t, recs); n < 100 {
		t.Errorf("%d analyses with NCCL INFO lines, want at least 100", n)
	}
	if len(recs) != len(want) {
		t.Errorf("%d analyses, the golden file has %d (a fixture added or removed: -update-golden)", len(recs), len(want))
	}
	for _, r := range recs {
		key := r.File + " " + r.Mode
		w, ok := want[key]
		if !ok {
			t.Errorf("%s: not in the golden file", key)
			continue
		}
		if got := mustJSON(t, r); !bytes.Equal(got, w) {
			t.Errorf("%s: analysis differs from the golden one\n got: %s\nwant: %s", key, clip(got), clip(w))
		}
	}
}

// clip keeps a failure message readable.
func clip(b []byte) string {
	s := string(b)
	if len(s) > 4000 {
		s = s[:4000] + "…"
	}
	return strings.TrimSpace(s)
}

func withInfoLines(t *testing.T, recs []goldenRecord) int {
	n := 0
	for _, r := range recs {
		if r.NCCL == nil {
			continue
		}
		var o results.NCCLOutput
		if err := json.Unmarshal(r.NCCL, &o); err != nil {
			t.Fatal(err)
		}
		if o.Log.InfoLines > 0 {
			n++
		}
	}
	return n
}
