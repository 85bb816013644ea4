package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserHarnessDetects proves the browser test can fail: a page that
// loads an image from the network, fetches, and logs an error must be caught
// on every count, with and without a Content-Security-Policy.
func TestBrowserHarnessDetects(t *testing.T) {
	b := startBrowser(t)
	for _, csp := range []string{"", `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">`} {
		page := `<!DOCTYPE html><html><head>` + csp + `</head><body>
<img src="http://192.0.2.1/x.png">
<script>fetch("http://192.0.2.1/y.json").catch(function(){}); console.error("boom");</script></body></html>`
		path := filepath.Join(t.TempDir(), "probe.html")
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		url := "file://" + path
		b.open(url, false)
		got := strings.Join(b.problems(url), "\n")
		t.Logf("csp=%v:\n%s", csp != "", got)
		for _, want := range []string{"192.0.2.1/x.png", "192.0.2.1/y.json", "boom"} {
			if !strings.Contains(got, want) {
				t.Errorf("csp=%v: problems do not mention %q:\n%s", csp != "", want, got)
			}
		}
	}
}
