package facts

import (
	"regexp"
	"strings"
	"sync"
)

// NCCLBuild is one libnccl.so.2 on the node and its ELF build ID.
type NCCLBuild struct {
	Path     string `json:"path"`               // where it was found
	Resolved string `json:"resolved,omitempty"` // the file the path names
	Version  string `json:"version,omitempty"`  // from the resolved file name, when it has one
	BuildID  string `json:"build_id,omitempty"` // NT_GNU_BUILD_ID, lower-case hex
}

var (
	// readelf -n: "    Build ID: 0c8a5e...".
	readelfBuildIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*Build ID:\s*([0-9a-fA-F]+)\s*$`) })
	// file -L: "..., BuildID[sha1]=0c8a5e..., stripped".
	fileBuildIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`BuildID\[[a-z0-9]+\]=([0-9a-fA-F]+)`) })
)

// parseNCCLBuilds reads the capture's nccl-build-id output: for each
// library a line "== PATH<TAB>RESOLVED", then its build ID as readelf -n or
// file -L prints it.
func parseNCCLBuilds(b []byte) []NCCLBuild {
	var out []NCCLBuild
	for _, l := range lines(b) {
		if rest, ok := strings.CutPrefix(l, "== "); ok {
			p, r, _ := strings.Cut(rest, "\t")
			nb := NCCLBuild{Path: strings.TrimSpace(p), Resolved: strings.TrimSpace(r)}
			nb.Version = ncclVersionFromNames(nb.Resolved, nb.Path)
			out = append(out, nb)
			continue
		}
		if len(out) == 0 || out[len(out)-1].BuildID != "" {
			continue
		}
		if m := readelfBuildIDRe().FindStringSubmatch(l); m != nil {
			out[len(out)-1].BuildID = strings.ToLower(m[1])
		} else if m := fileBuildIDRe().FindStringSubmatch(l); m != nil {
			out[len(out)-1].BuildID = strings.ToLower(m[1])
		}
	}
	return out
}
