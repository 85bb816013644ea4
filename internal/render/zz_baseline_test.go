package render

import (
	"bytes"
	"os"
	"testing"
)

func TestZZBaseline(t *testing.T) {
	dir := os.Getenv("BASE_DIR")
	for _, n := range []string{"allpairs-rig.json", "triage-rig.json"} {
		r := readReport(t, "testdata/"+n)
		for _, f := range []string{"text", "html", "prometheus"} {
			var b bytes.Buffer
			if err := Write(&b, r, f, Options{}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(dir+"/"+n+"."+f, b.Bytes(), 0o644)
		}
	}
}
