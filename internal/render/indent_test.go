package render

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
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
