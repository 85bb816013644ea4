package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// WriteFiles stores every host's full proposed files under
// dir/<host>/<absolute path>, with the modes they will have.
func WriteFiles(dir string, p *Plan) error {
	for _, h := range p.Hosts {
		if strings.ContainsAny(h.Host, "/\\") || h.Host == "." || h.Host == ".." {
			return fmt.Errorf("host name %q cannot be a directory name", h.Host)
		}
		for _, c := range h.Files {
			dst := filepath.Join(dir, h.Host, filepath.FromSlash(c.Path))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, c.New, c.Mode); err != nil {
				return err
			}
			if err := os.Chmod(dst, c.Mode); err != nil {
				return err
			}
		}
	}
	return nil
}

// commentWrap formats text as "# "-prefixed lines of at most width columns.
func commentWrap(text string, width int) string {
	var b strings.Builder
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > width && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// Remedies maps every finding the plan resolves (Change.Resolves) to the
// change remedy that resolves it: the files of every host that resolve it,
// with their diffs, and the command that applies them. how is the flags
// naming the nodes ("--hosts a,b").
func Remedies(p *Plan, how string) map[report.Key]*report.Remedy {
	out := map[report.Key]*report.Remedy{}
	add := func(k report.Key, ch report.Change) {
		r := out[k]
		if r == nil {
			r = &report.Remedy{Kind: report.RemedyChange, Command: "sparkrig fix --apply " + how}
			out[k] = r
		}
		r.Changes = append(r.Changes, ch)
	}
	for _, h := range p.Hosts {
		if a := h.Reactivate; a != nil {
			for _, k := range a.Resolves {
				add(k, report.Change{Host: h.Host, Action: a.Command()})
			}
		}
		for _, c := range h.Files {
			if !c.Changed() {
				continue
			}
			ch := report.Change{Host: h.Host, Path: c.Path, Diff: strings.Join(diffBody(c), "\n")}
			for _, k := range c.Resolves {
				add(k, ch)
			}
		}
	}
	return out
}

// diffBody is a change's unified diff without its file headers.
func diffBody(c Change) []string {
	oldName := "a" + c.Path
	if !c.OldExists {
		oldName = "/dev/null"
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(Unified(oldName, "b"+c.Path, c.Old, c.New), "\n"), "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@") {
			continue
		}
		out = append(out, l)
	}
	return out
}
