package render

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// TestCheckFormatAcceptsWhatWriteDraws: every name in Formats (and "md")
// passes CheckFormat and Write draws it; a name outside the allowed list is
// refused with the list, and a list cannot allow a name render lacks.
func TestCheckFormatAcceptsWhatWriteDraws(t *testing.T) {
	r := &report.Report{Schema: report.SchemaVersion, Command: "plan", Plans: []report.Plan{{Model: "m"}}}
	for _, f := range append(slices.Clone(Formats), "md") {
		got, err := CheckFormat(f, nil)
		if err != nil {
			t.Fatalf("CheckFormat(%q): %v", f, err)
		}
		if f == "md" && got != "markdown" {
			t.Errorf("CheckFormat(md) = %q, want markdown", got)
		}
		var b bytes.Buffer
		if err := Write(&b, r, got, Options{}); err != nil || b.Len() == 0 {
			t.Errorf("Write(%q): %d bytes, %v", got, b.Len(), err)
		}
	}
	_, err := CheckFormat("html", TextAndJSON)
	if err == nil || err.Error() != `unknown --format "html" (want one of text, json)` {
		t.Errorf("html against text, json: %v", err)
	}
	if _, err := CheckFormat("yaml", []string{"yaml"}); err == nil {
		t.Error("yaml accepted though render does not draw it")
	}
	if _, err := CheckFormat("md", TextAndJSON); err == nil {
		t.Error("md accepted where markdown is not")
	}
}
