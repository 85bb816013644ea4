package fix

import (
	"fmt"
	"strings"
)

// Unified returns a unified diff (diff -u format, 3 lines of context) from
// old to new, labelled with the two names; "" when they are equal. A file
// that does not exist is labelled /dev/null by the caller. Lines are compared
// whole; a last line without a newline is marked as diff(1) and patch(1) expect.
func Unified(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := lcsOps(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops, 3) {
		writeHunk(&out, h, a, b)
	}
	return out.String()
}

// op is one edit: kind ' ' (keep), '-' (delete a[i]) or '+' (insert b[j]).
type op struct {
	kind byte
	i, j int // positions in a and b before the op
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lcsOps computes an edit script through a longest common subsequence. The
// files fix compares are tens of lines, so the quadratic table is cheap.
func lcsOps(a, b []string) []op {
	n, m := len(a), len(b)
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', i, j})
			i, j = i+1, j+1
		case j < m && (i == n || t[i][j+1] > t[i+1][j]):
			ops = append(ops, op{'+', i, j})
			j++
		default:
			ops = append(ops, op{'-', i, j})
			i++
		}
	}
	return ops
}

// hunks groups the edit script into runs of changes with ctx lines of context.
func hunks(ops []op, ctx int) [][]op {
	var out [][]op
	start, end := -1, -1
	for k, o := range ops {
		if o.kind == ' ' {
			continue
		}
		lo, hi := max(0, k-ctx), min(len(ops), k+ctx+1)
		if start >= 0 && lo <= end {
			end = hi
			continue
		}
		if start >= 0 {
			out = append(out, ops[start:end])
		}
		start, end = lo, hi
	}
	if start >= 0 {
		out = append(out, ops[start:end])
	}
	return out
}

func writeHunk(w *strings.Builder, h []op, a, b []string) {
	na, nb := 0, 0
	for _, o := range h {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(h[0].i, na), hunkRange(h[0].j, nb))
	for _, o := range h {
		line := ""
		switch o.kind {
		case '+':
			line = b[o.j]
		default:
			line = a[o.i]
		}
		w.WriteByte(o.kind)
		w.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats "start,count" as diff -u does: 1-based, the count left
// out when it is 1, and start one before the position when count is 0.
func hunkRange(pos, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", pos)
	case 1:
		return fmt.Sprintf("%d", pos+1)
	}
	return fmt.Sprintf("%d,%d", pos+1, count)
}
