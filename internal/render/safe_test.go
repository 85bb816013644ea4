package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

func TestCleanShowsControlCharacters(t *testing.T) {
	in := "NCCL WARN \x1b]52;c;cm0gLXJmIH4K\a\x1b[2J done\r\nnext\tline \u009b"
	want := `NCCL WARN \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J done\x0d` + "\nnext\tline " + `\x9b`
	if got := Clean(in); got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
}

// TestTextFromOutsideCannotDriveTheTerminal renders a report whose host name
// and finding came from a hostile node: nothing reaches the terminal as an
// escape but sparkrig's own colours.
func TestTextFromOutsideCannotDriveTheTerminal(t *testing.T) {
	r := &report.Report{Hosts: []report.Host{{Host: "evil\n\x1b[31mspark", Status: report.HostAudited, Findings: []report.Finding{
		{ID: "spark.mtu", Severity: report.Warn, Subject: "enp1s0f1np1", Observed: "MTU \x1b]52;c;cm0gLXJmIH4K\a1500"},
	}}}}
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		if err := Text(&b, r, Options{Width: 100, Color: color}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, "\x1b]") || strings.Contains(out, "\a") || strings.Contains(out, "\x1b[31mspark") {
			t.Errorf("color=%v: an outside escape reached the output: %q", color, out)
		}
		if !strings.Contains(out, `evil\x0a\x1b[31mspark`) || !strings.Contains(out, `\x1b]52;c;cm0gLXJmIH4K\x07`) {
			t.Errorf("color=%v: the outside text is not shown: %q", color, out)
		}
		if color && !strings.Contains(out, "\x1b[33mWARN\x1b[0m") {
			t.Errorf("sparkrig's own colour was lost: %q", out)
		}
	}
}
