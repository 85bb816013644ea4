package expect

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed known-issues.yaml
var knownData []byte

// KnownIssue is one published problem of a version, a kernel or firmware,
// with what shows it on a node.
type KnownIssue struct {
	ID       string     `yaml:"id" json:"id"`
	Title    string     `yaml:"title" json:"title"`
	Match    KnownMatch `yaml:"match" json:"match"`
	Severity string     `yaml:"severity" json:"severity"` // warn or fail
	Fixed    string     `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	Symptom  string     `yaml:"symptom" json:"symptom"`
	Fix      string     `yaml:"fix" json:"fix"`
	// Action is the kind of step Fix is (report.Action: run, configure,
	// upgrade, firmware, cable, power-cycle, reboot, inspect); run when empty.
	Action  string   `yaml:"action,omitempty" json:"action,omitempty"`
	Sources []string `yaml:"sources" json:"sources"`
	Status  string   `yaml:"status" json:"status"` // confirmed or reported
	// Log is Match.KernelLog compiled.
	Log *regexp.Regexp `yaml:"-" json:"-"`
}

// KnownMatch says what shows a known issue on a node (or the cluster).
type KnownMatch struct {
	NCCLBelow         string `yaml:"nccl_below,omitempty" json:"nccl_below,omitempty"`
	Arch              string `yaml:"arch,omitempty" json:"arch,omitempty"`
	KernelLog         string `yaml:"kernel_log,omitempty" json:"kernel_log,omitempty"`
	CmaFreeAboveTotal bool   `yaml:"cma_free_above_total,omitempty" json:"cma_free_above_total,omitempty"`
	RingNodesMin      int    `yaml:"ring_nodes_min,omitempty" json:"ring_nodes_min,omitempty"`
	Env               string `yaml:"env,omitempty" json:"env,omitempty"`
	// NCCLVersion is one exact NCCL version ("2.30.4").
	NCCLVersion string `yaml:"nccl_version,omitempty" json:"nccl_version,omitempty"`
	// EnvNot matches where the NCCL setting is not NAME=value (unset or
	// another value): the workaround is missing.
	EnvNot string `yaml:"env_not,omitempty" json:"env_not,omitempty"`
	// Kernels are kernel releases (uname -r), each matching itself and
	// itself followed by "-" and a flavour ("7.0.0-1019" matches
	// "7.0.0-1019-nvidia").
	Kernels []string `yaml:"kernels,omitempty" json:"kernels,omitempty"`
	// CmdlineLacks matches where the kernel command line lacks this word.
	CmdlineLacks string `yaml:"cmdline_lacks,omitempty" json:"cmdline_lacks,omitempty"`
	// HCAListedDown matches a node whose NCCL_IB_HCA lists only devices
	// whose ports are down while another RDMA device is active: the
	// setting was derived from another node's cabling.
	HCAListedDown bool `yaml:"hca_listed_down,omitempty" json:"hca_listed_down,omitempty"`
	// NCCLBuildDiffers is a cluster match: nodes load the same NCCL version
	// from binaries of different ELF build IDs.
	NCCLBuildDiffers bool `yaml:"nccl_build_differs,omitempty" json:"nccl_build_differs,omitempty"`
}

// ClusterOnly reports whether only the cluster can match the issue (a
// ring size, binaries compared across nodes).
func (m KnownMatch) ClusterOnly() bool { return m.RingNodesMin > 0 || m.NCCLBuildDiffers }

// KernelMatches reports whether a kernel release (uname -r) is one of
// the listed releases.
func (m KnownMatch) KernelMatches(release string) bool {
	for _, k := range m.Kernels {
		if release == k || strings.HasPrefix(release, k+"-") {
			return true
		}
	}
	return false
}

// KernelsMarkedBad returns the known issues whose listed kernels include
// the release (with or without its flavour), for remedies that name one.
func KernelsMarkedBad(release string) []string {
	issues, err := KnownIssues()
	if err != nil {
		return nil
	}
	var ids []string
	for _, k := range issues {
		if k.Match.KernelMatches(release) {
			ids = append(ids, k.ID)
		}
	}
	return ids
}

var known = sync.OnceValues(func() ([]KnownIssue, error) {
	var doc struct {
		Issues []KnownIssue `yaml:"issues"`
	}
	if err := yaml.Unmarshal(knownData, &doc); err != nil {
		return nil, fmt.Errorf("known-issues.yaml: %w", err)
	}
	for i := range doc.Issues {
		k := &doc.Issues[i]
		if k.ID == "" || k.Symptom == "" || k.Fix == "" || len(k.Sources) == 0 || (k.Status != "confirmed" && k.Status != "reported") ||
			(k.Severity != "warn" && k.Severity != "fail") {
			return nil, fmt.Errorf("known-issues.yaml: entry %d (%q) lacks an id, symptom, fix, source, status or severity", i, k.ID)
		}
		if !knownActions[k.Action] {
			return nil, fmt.Errorf("known-issues.yaml: %s: unknown action %q", k.ID, k.Action)
		}
		if k.Match.KernelLog != "" {
			re, err := regexp.Compile(k.Match.KernelLog)
			if err != nil {
				return nil, fmt.Errorf("known-issues.yaml: %s: %w", k.ID, err)
			}
			k.Log = re
		}
	}
	return doc.Issues, nil
})

// knownActions are the report.Action words an entry may name ("" is run).
var knownActions = map[string]bool{"": true, "run": true, "configure": true, "upgrade": true, "firmware": true,
	"cable": true, "power-cycle": true, "reboot": true, "inspect": true}

// KnownIssues returns the embedded known issues (an error is a defect of
// the data file, which the tests read).
func KnownIssues() ([]KnownIssue, error) { return known() }

// SparkNCCL is the NCCL NVIDIA builds for DGX Spark (sm_121) in its NCCL
// playbook (build.nvidia.com/playbooks/nccl/two-nodes, its setup.sh builds
// v2.31.2-1 as of 2026-11; the repository copy of December 2025 said
// v2.28.9-1, a later one v2.30.7-1; NVIDIA/dgx-spark-playbooks PR #103 ran
// the playbook's nccl-tests on it: "nccl-library=23102"): the version
// remedies name unless a known issue rules it out.
const SparkNCCL = "2.31.2"

// NCCLFor is the NCCL version a remedy may recommend on a machine of arch
// (uname -m) in a ring of ringNodes nodes (0: not a ring): want, raised past
// every known issue that affects it there (a version below an issue's
// nccl_below on that arch and ring size), with the ids of those issues. The
// data is a defect when it does not load; then want stands.
func NCCLFor(want, arch string, ringNodes int) (string, []string) {
	issues, err := KnownIssues()
	if err != nil {
		return want, nil
	}
	var ids []string
	for _, k := range issues {
		m := k.Match
		if m.NCCLBelow == "" || (m.Arch != "" && m.Arch != arch) || m.RingNodesMin > ringNodes || m.Env != "" || m.EnvNot != "" {
			continue
		}
		if compareVersions(want, m.NCCLBelow) < 0 {
			want = m.NCCLBelow
			ids = append(ids, k.ID)
		}
	}
	return want, ids
}

// compareVersions orders dotted numeric versions ("2.28.9" < "2.29.3").
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
