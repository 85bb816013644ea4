package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// randomValue is a JSON value of any shape: nested objects and arrays
// (empty ones too), strings with quotes, backslashes, controls and
// non-ASCII runes, numbers, booleans and null.
func randomValue(rng *rand.Rand, depth int) any {
	pieces := []string{"a", "\"", "\\", "\\\"", "\n", "\t", "\x01", "<>&", "≥", "漢", "\u2028", "\x7f", " ", ":", ",", "{", "]", "\xff"}
	str := func() string {
		var s string
		for range rng.IntN(6) {
			s += pieces[rng.IntN(len(pieces))]
		}
		return s
	}
	k := rng.IntN(8)
	if depth > 4 {
		k = rng.IntN(4)
	}
	switch k {
	case 0:
		return str()
	case 1:
		return rng.NormFloat64() * 1e6
	case 2:
		return rng.IntN(2) == 0
	case 3:
		return nil
	case 4, 5:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[str()] = randomValue(rng, depth+1)
		}
		return m
	default:
		a := []any{}
		for range rng.IntN(4) {
			a = append(a, randomValue(rng, depth+1))
		}
		return a
	}
}

// TestIndentJSONAsJSONIndent: indentJSON writes what json.Indent writes
// for every document json.Marshal makes, random ones and the reports of
// the golden files.
func TestIndentJSONAsJSONIndent(t *testing.T) {
	var docs [][]byte
	rng := rand.New(rand.NewPCG(36, 2))
	for range 5000 {
		b, err := json.Marshal(randomValue(rng, 0))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	if len(files) == 0 || len(docs) < 5001 {
		t.Fatalf("%d golden JSON files read", len(files))
	}
	for i, b := range docs {
		var want bytes.Buffer
		if err := json.Indent(&want, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(nil, b); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("document %d %s:\ngot  %s\nwant %s", i, b, got, want.Bytes())
		}
	}
}

// TestJSONInBlocks: JSON writes, a block at a time, what one indented and
// escaped buffer of the whole document holds (json.Marshal, indentJSON,
// sanitize.JSON), for documents of one block and of many, and passes a
// write error on.
func TestJSONInBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 5))
	for n := range 40 {
		var doc []any
		for range 1 + n*n*5 {
			doc = append(doc, randomValue(rng, 0), "\u202e≥\x7f")
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		want := sanitize.JSON(append(indentJSON(nil, b), '\n'))
		w := &countWrites{}
		if err := JSON(w, doc); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.buf.Bytes(), want) {
			t.Fatalf("document %d (%d bytes): written otherwise than in one buffer", n, len(want))
		}
		if blocks := len(want)/jsonBlock + 1; w.writes > blocks || len(want) > 2*jsonBlock && w.writes < 2 {
			t.Fatalf("document %d (%d bytes): %d writes", n, len(want), w.writes)
		}
	}
	if err := JSON(failWriter{}, []int{1}); err == nil || err.Error() != "full" {
		t.Fatalf("a write error is %v", err)
	}
	if err := JSON(&countWrites{}, func() {}); err == nil {
		t.Fatal("a value JSON cannot encode is no error")
	}
}

type countWrites struct {
	buf    bytes.Buffer
	writes int
}

func (c *countWrites) Write(b []byte) (int, error) {
	c.writes++
	return c.buf.Write(b)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("full") }

// failAfter accepts n writes and refuses every later one.
type failAfter struct {
	n, writes int
}

func (f *failAfter) Write(b []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

// TestJSONStopsAtFirstWriteError: a document of many blocks whose writer
// fails after n writes is written n+1 times, no more, and the first error
// is what JSON returns; the indenting stops at the failed block too.
func TestJSONStopsAtFirstWriteError(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 6))
	var doc []any
	for range 16000 {
		doc = append(doc, randomValue(rng, 0))
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := len(indentJSON(nil, b)) / jsonBlock
	if blocks < 4 {
		t.Fatalf("the document is %d blocks, too few to test", blocks)
	}
	for n := range 3 {
		w := &failAfter{n: n}
		if err := JSON(w, doc); err == nil || err.Error() != "disk full" {
			t.Fatalf("failing after %d writes: error %v", n, err)
		}
		if w.writes != n+1 {
			t.Errorf("failing after %d writes: %d writes of a %d-block document", n, w.writes, blocks)
		}
	}
	calls := 0
	dst, err := indentJSONBlocks(nil, b, jsonBlock, func(d []byte) ([]byte, error) {
		calls++
		return d[:0], errors.New("disk full")
	})
	if err == nil || calls != 1 || len(dst) != 0 {
		t.Errorf("indenting after a failed block: %d flushes, %d bytes more, error %v", calls, len(dst), err)
	}
}
