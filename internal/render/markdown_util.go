package render

import (
	"fmt"
	"io"
	"strings"
)

// Shared Markdown helpers for the sections of Markdown(): compact tables and
// collapsible raw output, as GitHub and Discourse forums render them.

// mdTable writes a compact GitHub-flavoured table. Cells are escaped for
// table syntax; rows shorter than the header are padded. Columns whose header
// starts with "+" are right-aligned (numbers); the "+" is not printed.
func mdTable(w io.Writer, header []string, rows [][]string) error {
	var b strings.Builder
	align := make([]string, len(header))
	b.WriteByte('|')
	for i, h := range header {
		align[i] = "---"
		if strings.HasPrefix(h, "+") {
			h, align[i] = h[1:], "--:"
		}
		b.WriteString(" " + mdCell(h) + " |")
	}
	b.WriteString("\n|")
	for _, a := range align {
		b.WriteString(a + "|")
	}
	b.WriteByte('\n')
	for _, row := range rows {
		b.WriteByte('|')
		for i := range header {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

var mdCellEscaper = strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>")

// mdCell makes s safe inside a table cell: pipes escaped, newlines as <br>.
func mdCell(s string) string { return mdCellEscaper.Replace(strings.TrimSpace(s)) }

// mdCode wraps s in an inline code span that survives backticks inside it.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// mdDetails writes a collapsible block: a summary line that stays visible and
// the raw text in a fenced code block (lang may be ""), the way GitHub and
// Discourse render <details>. The fence is longer than any backtick run in
// raw, so pasted output cannot end it early.
func mdDetails(w io.Writer, summary, lang, raw string) error {
	fence := "```"
	for strings.Contains(raw, fence) {
		fence += "`"
	}
	raw = strings.TrimRight(raw, "\n")
	_, err := fmt.Fprintf(w, "<details><summary>%s</summary>\n\n%s%s\n%s\n%s\n\n</details>\n\n",
		htmlEscapeText(summary), fence, lang, raw, fence)
	return err
}

var htmlTextEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscapeText(s string) string { return htmlTextEscaper.Replace(s) }

// mdSeverity is a short, greppable marker for a severity in tables.
func mdSeverity(sev string) string {
	switch sev {
	case "fail":
		return "❌ fail"
	case "warn":
		return "⚠️ warn"
	case "not-evaluated":
		return "❔ not-evaluated"
	case "info":
		return "ℹ️ info"
	case "ok":
		return "✅ ok"
	}
	return sev
}
