package render

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// remedyText is a remedy as the text, Markdown and HTML reports print it: a
// change is the fix command and, commented so that a pasted block stays a
// valid shell script, what it writes and runs on each node; a manual remedy
// is its steps, numbered when there are several.
func remedyText(r *report.Remedy) string {
	if r == nil {
		return ""
	}
	var lines []string
	switch r.Kind {
	case report.RemedyChange:
		lines = append(lines, r.Command)
		for _, q := range r.Requires {
			lines = append(lines, "# ("+q+")")
		}
		if len(r.Changes) > 0 {
			lines = append(lines, "# which changes:")
		}
		for _, c := range r.Changes {
			switch {
			case c.Path != "":
				lines = append(lines, fmt.Sprintf("# %s %s:", c.Host, c.Path))
				for _, l := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
					if l != "" {
						lines = append(lines, "#   "+l)
					}
				}
			case c.Action != "":
				lines = append(lines, fmt.Sprintf("# then on %s: %s", c.Host, c.Action))
			}
		}
	default:
		for i, s := range r.Steps {
			t := s.Text
			if len(r.Steps) > 1 {
				t = fmt.Sprintf("%d. %s", i+1, t)
			}
			lines = append(lines, t)
		}
		for _, q := range r.Requires {
			lines = append(lines, "# ("+q+")")
		}
	}
	return strings.Join(lines, "\n")
}

// keyList names findings as "ID (subject, subject)", one entry per check, in
// the order given.
func keyList(ks []report.Key) string {
	var ids []string
	subjects := map[string][]string{}
	for _, k := range ks {
		if subjects[k.ID] == nil {
			ids = append(ids, k.ID)
		}
		subjects[k.ID] = append(subjects[k.ID], k.Subject)
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id + " (" + strings.Join(subjects[id], ", ") + ")"
	}
	return strings.Join(parts, ", ")
}
