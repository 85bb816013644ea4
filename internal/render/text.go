package render

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The text writers lay every line out within Options.Width columns: prose
// wraps between words, a word longer than a whole line is cut, shell commands
// break with a backslash continuation, and tables drop to one record per
// block when their columns do not fit.

// textDefaults fills what a caller left unset: the width, 100 columns.
func textDefaults(opt Options) Options {
	if opt.Width <= 0 {
		opt.Width = 100
	}
	return opt
}

// vlen is the number of terminal columns s takes: its runes, less the colour
// sequences (esc "[…m") that take none.
func vlen(s string) int {
	if !strings.Contains(s, colourOpen) {
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i, ok := nextColumn(s, 0); ok; i, ok = nextColumn(s, i) {
		n++
	}
	return n
}

// colourOpen starts a colour sequence; made once, as esc is known only at
// run time.
var colourOpen = esc + "["

// nextColumn steps over the colour sequences at s[i:] and the rune after
// them: it returns where the next column starts, and false when only
// colour sequences (or nothing) were left.
func nextColumn(s string, i int) (int, bool) {
	for strings.HasPrefix(s[i:], colourOpen) {
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if i >= len(s) {
		return len(s), false
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return i + size, true
}

// padRight pads s with spaces to n columns.
func padRight(s string, n int) string {
	if d := n - vlen(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}

// wrap breaks s into lines of at most width columns, keeping its line
// breaks; a line that fits is kept as it is. A line too long breaks
// between its columns (runs of two or more spaces: "sm 9.0 (sm_90)  132
// SMs") where it has them, else between words. A word longer than width (a
// long URL or path) is cut into pieces of width columns: the terminal would
// cut it anyway, and a line that overflows also shifts every line after it.
func wrap(s string, width int) []string {
	width = max(width, 10)
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if vlen(para) <= width {
			// A line that fits keeps its spacing (aligned columns).
			out = append(out, strings.TrimRight(para, " "))
			continue
		}
		segs := columnsRe.Split(strings.TrimSpace(para), -1)
		out = append(out, pack(segs, "  ", width, func(seg string) []string { return wrapWords(seg, width) })...)
	}
	return out
}

// columnsRe separates the columns of a line laid out by hand.
var columnsRe = regexp.MustCompile(` {2,}`)

// wrapWords breaks one line between words; a word longer than width is
// cut.
func wrapWords(para string, width int) []string {
	return pack(strings.Fields(para), " ", width, func(w string) []string {
		var pieces []string
		for vlen(w) > width {
			head, rest := cut(w, width)
			pieces, w = append(pieces, head), rest
		}
		return append(pieces, w)
	})
}

// pack fills lines of at most width columns with units joined by sep; a
// unit wider than a line goes through split, its last piece starting the
// next line.
func pack(units []string, sep string, width int, split func(string) []string) []string {
	var out []string
	var line strings.Builder
	lineLen := 0 // the columns line takes
	for _, u := range units {
		n := vlen(u)
		if n > width {
			if line.Len() > 0 {
				out = append(out, line.String())
			}
			pieces := split(u)
			out, u = append(out, pieces[:len(pieces)-1]...), pieces[len(pieces)-1]
			line.Reset()
			n = vlen(u)
		}
		switch {
		case line.Len() == 0:
			line.WriteString(u)
			lineLen = n
		case lineLen+len(sep)+n <= width:
			line.WriteString(sep)
			line.WriteString(u)
			lineLen += len(sep) + n
		default:
			out = append(out, line.String())
			line.Reset()
			line.WriteString(u)
			lineLen = n
		}
	}
	return append(out, line.String())
}

// cut splits s after n visible columns.
func cut(s string, n int) (string, string) {
	i := 0
	for cols := 0; cols < n; cols++ {
		next, ok := nextColumn(s, i)
		if !ok {
			break
		}
		i = next
	}
	return s[:i], s[i:]
}

// hang writes text wrapped to width, its first line after first and the
// others after rest (a hanging indent): "  1. a long title" goes on under
// "     ".
func hang(b *strings.Builder, first, rest, text string, width int) {
	avail := width - max(vlen(first), vlen(rest))
	for i, l := range wrap(text, avail) {
		lead := rest
		if i == 0 {
			lead = first
		}
		b.WriteString(strings.TrimRight(lead+l, " ") + "\n")
	}
}

// writeField writes "label: value" with the value wrapped under itself.
// Fixes keep their lines (commands, file contents) and are not re-wrapped.
func writeField(b *strings.Builder, indent, label, value string, width int, verbatim bool) {
	labelColumn(b, indent, 10, label+":", value, width, verbatim)
}

// labelColumn writes value after label padded to col columns, every
// further line under the value's first. A verbatim value is a fix: its
// lines are pasted into a shell, so they keep their indentation; a comment
// too long goes on as comment lines, a command breaks only between words
// outside quotes and code spans with a backslash continuation, and a
// here-document's lines are never broken.
func labelColumn(b *strings.Builder, indent string, col int, label, value string, width int, verbatim bool) {
	if value == "" {
		return
	}
	if vlen(label) >= col {
		col = vlen(label) + 1
	}
	pad := indent + strings.Repeat(" ", col)
	avail := max(width-vlen(pad), 20)
	var ls []string
	if !verbatim {
		ls = wrap(value, avail)
	}
	heredoc := ""
	for _, l := range strings.Split(value, "\n") {
		if !verbatim {
			break
		}
		body := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(body)]
		switch {
		case heredoc != "":
			ls = append(ls, l)
			if strings.TrimSpace(l) == heredoc {
				heredoc = ""
			}
			continue
		case vlen(l) <= avail:
			ls = append(ls, l)
		case strings.HasPrefix(body, "#"):
			for _, part := range wrap(strings.TrimSpace(strings.TrimPrefix(body, "#")), avail-len(lead)-2) {
				ls = append(ls, lead+"# "+part)
			}
		default:
			// continuation lines are indented two more columns
			parts := wrapShell(body, avail-len(lead)-4)
			for i, part := range parts {
				if i > 0 {
					part = "  " + part
				}
				ls = append(ls, lead+part)
			}
		}
		heredoc = heredocEnd(body)
	}
	for i, l := range ls {
		if i == 0 {
			fmt.Fprintf(b, "%s%s%s\n", indent, padRight(label, col), l)
		} else {
			fmt.Fprintf(b, "%s%s\n", pad, l)
		}
	}
}

// heredocEnd is the delimiter a line opens a here-document with (<<'YAML'
// or <<EOF), or "".
func heredocEnd(line string) string {
	i := strings.Index(line, "<<")
	if i < 0 {
		return ""
	}
	f := strings.Fields(strings.TrimLeft(line[i+2:], "-"))
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], `'"`)
}

// opensQuote: a quote after word holds a shell quote's opening: at a
// word's start, after an assignment's '=' ("NCCL_IB_HCA='=mlx5_0'") or in
// an option (awk -F': '), not an apostrophe inside or after a word of prose
// ("the peer's address", "the instances' group").
func opensQuote(word string) bool {
	return word == "" || strings.HasSuffix(word, "=") || strings.HasPrefix(word, "-")
}

// wrapShell breaks a command line between words that are outside quotes and
// `code spans`, ending each broken line with " \\" so a shell reads one
// command. A word longer than the width stays whole.
func wrapShell(s string, width int) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case (r == '\'' || r == '"' || r == '`') && opensQuote(cur.String()):
			quote = r
		case r == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	if quote != 0 {
		// A quote never closed is an apostrophe in prose ("the host's
		// resources"), not a shell word: every space may break.
		words = strings.Fields(s)
	}
	// An option stays on the line of its value ("-x NCCL_DEBUG=INFO").
	var units []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if q := strings.IndexAny(w, "'\"`"); vlen(w) > width && q >= 0 && w[q] == '"' && strings.Contains(w, " ") &&
			!strings.ContainsAny(w[q+1:], "'`$") {
			// Too long for a line: inside double quotes a shell drops a
			// backslash-newline, so the span may break between words
			// (the next line's indent joins the string: a span with a
			// nested quote or an expansion stays whole).
			units = append(units, strings.Fields(w)...)
			continue
		}
		if strings.HasPrefix(w, "-") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && vlen(w)+1+vlen(words[i+1])+2 <= width {
			w += " " + words[i+1]
			i++
		}
		units = append(units, w)
	}
	var out []string
	line := ""
	for _, w := range units {
		if line != "" && vlen(line)+1+vlen(w)+2 > width {
			out = append(out, line+" \\")
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(out, line)
}

// Reflow lays out help text within width: a paragraph (lines starting at the
// margin) is wrapped as prose; an indented block is a list whose items
// start at the block's least indentation, "term   description" items
// keeping the description column; a line that fits is kept as written.
func Reflow(text string, width int) string {
	var b strings.Builder
	for i, block := range strings.Split(strings.TrimRight(text, "\n"), "\n\n") {
		if i > 0 {
			b.WriteString("\n")
		}
		// A block alternates runs of margin lines (prose) and indented
		// lines (a list), as "Exit status:" and its table.
		lines := strings.Split(block, "\n")
		for len(lines) > 0 {
			n := 1
			for n < len(lines) && (indentOf(lines[n]) == 0) == (indentOf(lines[0]) == 0) {
				n++
			}
			run := lines[:n]
			lines = lines[n:]
			if indentOf(run[0]) > 0 {
				reflowList(&b, run, width)
				continue
			}
			if fitsIn(run, width) {
				b.WriteString(strings.Join(run, "\n") + "\n")
				continue
			}
			hang(&b, "", "", strings.Join(run, " "), width)
		}
	}
	return b.String()
}

func fitsIn(lines []string, width int) bool {
	for _, l := range lines {
		if vlen(l) > width {
			return false
		}
	}
	return true
}

// reflowList wraps each item of an indented list under its description.
func reflowList(b *strings.Builder, lines []string, width int) {
	margin := indentOf(lines[0])
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			margin = min(margin, indentOf(l))
		}
	}
	var item []string
	flush := func() {
		if len(item) == 0 {
			return
		}
		if fitsIn(item, width) {
			b.WriteString(strings.Join(item, "\n") + "\n")
		} else {
			col := descColumn(item[0])
			var text []string
			for _, l := range item {
				text = append(text, strings.TrimSpace(l))
			}
			first := strings.TrimRight(item[0][:col], " ")
			body := strings.TrimSpace(strings.Join(text, " ")[len(strings.TrimSpace(first)):])
			if col > width/2 {
				col = margin + 4
			}
			hang(b, padRight(first+" ", col), strings.Repeat(" ", col), body, width)
		}
		item = nil
	}
	for _, l := range lines {
		if indentOf(l) == margin {
			flush()
		}
		item = append(item, l)
	}
	flush()
}

// descColumn is where the description of "  term   description" starts:
// after the last run of two or more spaces, or after the indentation.
func descColumn(line string) int {
	in := indentOf(line)
	col := in
	for i := in; i+1 < len(line); i++ {
		if line[i] == ' ' && line[i+1] == ' ' {
			j := i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			col, i = j, j
		}
	}
	return col
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// ReflowShell lays out example command lines within width: a comment wraps
// as comment lines, a command breaks between words with a backslash
// continuation, so every line stays pasteable.
func ReflowShell(text string, width int) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		body := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(body)]
		switch {
		case vlen(l) <= width:
			b.WriteString(l + "\n")
		case strings.HasPrefix(body, "#"):
			for _, part := range wrap(strings.TrimSpace(strings.TrimPrefix(body, "#")), width-len(lead)-2) {
				b.WriteString(lead + "# " + part + "\n")
			}
		default:
			for i, part := range wrapShell(body, width-len(lead)-2) {
				if i > 0 {
					part = "    " + part
				}
				b.WriteString(lead + part + "\n")
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// textTable writes rows under header in aligned columns, two spaces apart
// or, to fit width, one. When they do not fit even so, each row becomes a block: its first
// cell, then one "header  cell" line per other column, wrapped. A header
// starting with "+" is right-aligned, as mdTable reads it.
func textTable(b *strings.Builder, indent string, width int, header []string, rows [][]string) {
	cols := make([]int, len(header))
	right := make([]bool, len(header))
	names := make([]string, len(header))
	for i, h := range header {
		names[i], right[i] = strings.TrimPrefix(h, "+"), strings.HasPrefix(h, "+")
		cols[i] = vlen(names[i])
	}
	for _, r := range rows {
		for i := range header {
			if i < len(r) {
				cols[i] = max(cols[i], vlen(r[i]))
			}
		}
	}
	total := vlen(indent)
	for _, c := range cols {
		total += c
	}
	// Two spaces between columns; one when two do not fit.
	gap := "  "
	if total+2*(len(cols)-1) > width {
		gap = " "
	}
	if total+len(gap)*(len(cols)-1) <= width {
		for _, r := range append([][]string{names}, rows...) {
			var line strings.Builder
			line.WriteString(indent)
			for i := range header {
				c := ""
				if i < len(r) {
					c = r[i]
				}
				if i > 0 {
					line.WriteString(gap)
				}
				if right[i] {
					line.WriteString(strings.Repeat(" ", cols[i]-vlen(c)) + c)
				} else {
					line.WriteString(padRight(c, cols[i]))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
		return
	}
	label := 0
	for _, n := range names[1:] {
		label = max(label, vlen(n))
	}
	for _, r := range rows {
		if len(r) == 0 {
			continue
		}
		hang(b, indent, indent+"  ", r[0], width)
		for i := 1; i < len(header) && i < len(r); i++ {
			labelColumn(b, indent+"  ", label+2, names[i], r[i], width, false)
		}
	}
}
