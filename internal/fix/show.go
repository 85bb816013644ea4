package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Advise maps the findings the plan resolves (Change.Resolves) to the
// changes that resolve them, so the doctor's fix text and `fix --plan` are
// the same change. how is the flags naming the nodes ("--hosts a,b").
func Advise(p *Plan, how string) map[string]string {
	byKey := map[string][]string{}
	var order []string
	for _, h := range p.Hosts {
		for _, c := range h.Files {
			if !c.Changed() {
				continue
			}
			body := diffBody(c)
			for _, r := range c.Resolves {
				id, subjects, _ := strings.Cut(r, " (")
				for _, s := range strings.Split(strings.TrimSuffix(subjects, ")"), ", ") {
					k := id + " " + s
					if byKey[k] == nil {
						order = append(order, k)
					}
					byKey[k] = append(byKey[k], fmt.Sprintf("# %s %s:", h.Host, c.Path))
					byKey[k] = append(byKey[k], body...)
				}
			}
		}
	}
	out := map[string]string{}
	for _, k := range order {
		out[k] = "sparkrig fix --apply " + how + "\n# which changes:\n" + strings.Join(byKey[k], "\n")
	}
	return out
}

// diffBody is a change's unified diff without its file headers, each line
// commented so a pasted fix block stays a valid shell script.
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
		out = append(out, "#   "+l)
	}
	return out
}
