package fix

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WritePlan prints, per host, the rails, then a unified diff of every file
// that would change with the findings it resolves. It returns the number of
// files that would change.
func WritePlan(w io.Writer, p *Plan) (changes int, err error) {
	var b strings.Builder
	fmt.Fprintf(&b, "topology %s, %s addressing\n", p.Topology, p.Addressing)
	for _, h := range p.Hosts {
		fmt.Fprintf(&b, "\n== %s\n", h.Host)
		for _, r := range h.Rails {
			addr := r.Addr
			if addr == "" {
				addr = "link-local"
			}
			fmt.Fprintf(&b, "   %-14s %-13s %-18s mtu %d -> %s\n", r.NetDev, r.RDMADev, addr, r.MTU, strings.Join(r.Peers, ", "))
			if r.Change != "" && !strings.HasPrefix(r.Change, "keep ") {
				fmt.Fprintf(&b, "   %-14s %s\n", "", r.Change)
			}
		}
		if len(h.Protected) > 0 {
			fmt.Fprintf(&b, "   untouched: %s\n", strings.Join(h.Protected, ", "))
		}
		for _, n := range h.Notes {
			fmt.Fprintf(&b, "   note: %s\n", n)
		}
		for _, c := range h.Files {
			if !c.Changed() {
				fmt.Fprintf(&b, "\n%s: no change\n", c.Path)
				continue
			}
			changes++
			fmt.Fprintf(&b, "\n%s (mode %04o): %s\n", c.Path, c.Mode, c.Why)
			if len(c.Resolves) > 0 {
				fmt.Fprintf(&b, "resolves: %s\n", strings.Join(c.Resolves, ", "))
			}
			oldName := "a" + c.Path
			if !c.OldExists {
				oldName = "/dev/null"
			}
			b.WriteString(Unified(oldName, "b"+c.Path, c.Old, c.New))
		}
	}
	if changes == 0 {
		b.WriteString("\nnothing to change\n")
	}
	_, err = io.WriteString(w, b.String())
	return changes, err
}

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
