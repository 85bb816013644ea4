package check

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Causes that look alike on the wire (a slow or failing fabric) are told
// apart by their own evidence: each scenario names its cause, the remedy
// of that cause, and none of the look-alikes.
func TestLookAlikeCausesToldApart(t *testing.T) {
	tests := []struct {
		tree    string
		id      string
		subject string
		action  report.Action // the first step of the remedy
		never   []string      // finding IDs (warn, fail or info) the tree must not raise
	}{
		{"spark-mtu-reset-1500", "spark.mtu-not-applied", "enp1s0f1np1", report.ActionRun, []string{"spark.mtu", "spark.mtu-twins-differ", "spark.hotplug", "nic.link-flaps"}},
		{"spark-mtu-twins-differ", "spark.mtu-twins-differ", "", "", []string{"spark.mtu-not-applied"}},
		{"spark-mtu-1500", "spark.mtu", "enp1s0f1np1", report.ActionRun, []string{"spark.mtu-not-applied"}},
		{"spark-hotplug", "spark.hotplug", "node", report.ActionCable, []string{"nic.link-flaps", "spark.mtu-not-applied"}},
		{"spark-link-flaps", "nic.link-flaps", "enp1s0f1np1", report.ActionCable, []string{"spark.hotplug"}},
		{"spark-gid-moved", "nccl.gid-index", "NCCL_IB_GID_INDEX", report.ActionRun, []string{"spark.roce-gid", "known.issue"}},
		{"spark-nccl-env-other-node", "known.issue", "nccl-env-from-another-node", report.ActionConfigure, []string{"nccl.ib-hca"}},
		{"spark-kernel-7.0-no-kho", "known.issue", "kernel-7.0-kho-enomem", report.ActionConfigure, []string{"spark.cma"}},
		{"spark-nccl-2.30.4", "known.issue", "nccl-2.30.4-nvls-no-nvlink", report.ActionConfigure, nil},
		{"spark-nccl-two-builds", "known.issue", "nccl-same-version-other-build", report.ActionConfigure, nil},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			_, fs := auditTree(t, tt.tree)
			found := false
			for _, f := range fs {
				bad := f.Severity == report.Warn || f.Severity == report.Fail || f.Severity == report.Info
				for _, id := range tt.never {
					if f.ID == id && bad {
						t.Errorf("look-alike raised: %s %s %s: %s", f.ID, f.Severity, f.Subject, f.Observed)
					}
				}
				if f.ID != tt.id || (f.Severity != report.Warn && f.Severity != report.Fail) {
					continue
				}
				if tt.subject != "" && f.Subject != tt.subject {
					continue
				}
				found = true
				if tt.action != "" && (f.Remedy == nil || len(f.Remedy.Steps) == 0 || f.Remedy.Steps[0].Action != tt.action) {
					t.Errorf("%s %s: remedy %+v, want a first step of kind %s", f.ID, f.Subject, f.Remedy, tt.action)
				}
			}
			if !found {
				t.Errorf("no %s finding on %q", tt.id, tt.subject)
			}
		})
	}
}

// The IOMMU mode is read from the ConnectX-7 functions' groups: the DGX
// Spark default (DMA-FQ) is an info with its kernel parameter, passthrough
// passes; neither asks for a power cycle.
func TestIOMMUMode(t *testing.T) {
	for tree, want := range map[string]string{
		"spark-healthy":           "info translated (IOMMU group type DMA-FQ of 0000:01:00.0, 0000:01:00.1, 0002:01:00.0, 0002:01:00.1)",
		"spark-iommu-passthrough": "ok passthrough (IOMMU group type identity of 0000:01:00.0, 0000:01:00.1, 0002:01:00.0, 0002:01:00.1)",
	} {
		_, fs := auditTree(t, tree)
		got := ""
		for _, f := range fs {
			if f.ID == "spark.iommu" {
				got = string(f.Severity) + " " + f.Observed
				if f.Remedy != nil && !strings.Contains(f.Remedy.Steps[0].Text, "iommu.passthrough=1") {
					t.Errorf("%s: remedy %q", tree, f.Remedy.Steps[0].Text)
				}
			}
		}
		if got != want {
			t.Errorf("%s: %q, want %q", tree, got, want)
		}
	}
}
