package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

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

// hostileReport is a report whose host names, subjects and observed values
// came from a hostile node: a private-use character that used to be
// decoded to ESC (OSC 52 to the clipboard, clear screen, a fake green "ALL
// GOOD"), a newline and a Markdown comment that hid the rows after it, a
// link, an image and raw HTML, and a right-to-left override.
func hostileReport() *report.Report {
	return &report.Report{Hosts: []report.Host{{
		Host: "spark-01\n<!-- \uE01B]52;c;cm0gLXJmIH4K\a", Status: report.HostAudited,
		Findings: []report.Finding{
			{ID: "spark.mtu", Severity: report.Fail, Subject: "<!--", Observed: "\uE01B[2J\uE01B[32mALL GOOD\uE01B[0m [x](http://evil.example) ![i](http://evil.example/i.png) <img src=x onerror=alert(1)>"},
			{ID: "spark.cma", Severity: report.Warn, Subject: "enp1s0f1np1\u202e", Observed: "MTU 1500\r\x1b[32m9000"},
		},
	}}}
}

// TestPrivateUseIsNeverDecoded: U+E01B from outside reaches neither the
// text nor the Markdown output as an escape, whether colour is on or not.
func TestPrivateUseIsNeverDecoded(t *testing.T) {
	for _, format := range []string{"text", "markdown"} {
		for _, color := range []bool{false, true} {
			var b bytes.Buffer
			if err := Write(&b, hostileReport(), format, Options{Width: 100, Color: color}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			own := strings.NewReplacer("\x1b[1;31m", "", "\x1b[33m", "", "\x1b[0m", "", "\x1b[1m", "", "\x1b[32m", "", "\x1b[35m", "", "\x1b[36m", "", "\x1b[31m", "").Replace(out)
			if strings.ContainsAny(own, "\x1b\a\r\u202e\uE01B") {
				t.Errorf("%s color=%v: a raw control character reached the output: %q", format, color, out)
			}
			if strings.Contains(out, "\x1b[32mALL GOOD") || strings.Contains(out, "\x1b]52") {
				t.Errorf("%s color=%v: the outside escape was decoded: %q", format, color, out)
			}
			if !strings.Contains(out, `\ue01b[32mALL GOOD`) && !strings.Contains(out, `\\ue01b\[32mALL GOOD`) {
				t.Errorf("%s color=%v: the outside text is not shown as escapes: %q", format, color, out)
			}
		}
	}
}

// TestMarkdownTakesOutsideTextAsText: no raw HTML, comment, link or image
// from outside, no line break from a host name, and the fail row is there.
func TestMarkdownTakesOutsideTextAsText(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, hostileReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// An unescaped "<" (HTML, comment, autolink), "](" (link) or "![" (image).
	if m := regexp.MustCompile(`(^|[^\\])(<|\]\(|!\[)`).FindString(out); m != "" {
		t.Errorf("%q reached the Markdown: %s", m, out)
	}
	if strings.Count(out, "\n") != 9 {
		t.Errorf("%d lines, want 9 (a name broke a line?):\n%s", strings.Count(out, "\n"), out)
	}
	for _, want := range []string{
		`### spark-01\\x0a\<\!-- \\ue01b\]52;c;cm0gLXJmIH4K\\x07`,
		`| ❌ fail | ` + "`spark.mtu`" + ` | \<\!-- |`,
		`\[x\](http://evil.example) \!\[i\](http://evil.example/i.png) \<img src=x onerror=alert(1)\>`,
		`enp1s0f1np1\\u202e`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// TestPrometheusLabelsShowControlCharacters: label values hold no raw ESC,
// BEL, CR or bidi override, and are valid exposition-format strings.
func TestPrometheusLabelsShowControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := Prometheus(&b, hostileReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\r\u202e\uE01B") {
		t.Errorf("a raw control character reached the exposition: %q", out)
	}
	for _, want := range []string{`host="spark-01\n<!-- \\ue01b]52;c;cm0gLXJmIH4K\\x07"`, `enp1s0f1np1\\u202e`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "sparkrig_") {
			t.Errorf("a label value broke the line: %q", l)
		}
	}
}

// TestHTMLShowsControlCharacters: the HTML page holds no raw control,
// bidi or private-use character from outside; they show as escapes.
func TestHTMLShowsControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, hostileReport(), HTMLOptions{Inputs: []string{"in\u202e.json"}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\r\u202e\uE01B") {
		t.Errorf("a raw control character reached the page")
	}
	for _, want := range []string{`enp1s0f1np1\u202e`, `in\u202e.json`, `\ue01b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in the page", want)
		}
	}
}
