package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// ofiLog writes the OFI plugin's startup lines of ranks processes over
// hosts hosts, each naming provider (old or new wording), and, between
// hosts, a NET channel per rank.
func ofiLog(r *rand.Rand, hosts, ranks int, provider string, newWording bool) string {
	var b strings.Builder
	for i := range ranks {
		h := fmt.Sprintf("node-%d", i%hosts)
		p := fmt.Sprintf("%s:%d:%d [%d] NCCL INFO ", h, 1000+i, 1100+i, i%8)
		b.WriteString(p + "NCCL version 2.23.4+cuda12.4\n")
		b.WriteString(p + "NET/OFI Initializing aws-ofi-nccl 1.12.1-aws\n")
		if newWording {
			fmt.Fprintf(&b, "%sNET/OFI Selected provider is %s, fabric is 10.0.%d.0/24 (found %d nics)\n", p, provider, r.IntN(255), 1+r.IntN(4))
		} else {
			fmt.Fprintf(&b, "%sNET/OFI Selected Provider is %s (found %d nics)\n", p, provider, 1+r.IntN(4))
		}
		if hosts > 1 {
			fmt.Fprintf(&b, "%sChannel 00/0 : %d[%d] -> %d[%d] [receive] via NET/AWS Libfabric/0\n", p, (i+ranks-1)%ranks, i%8, i, i%8)
		}
	}
	return b.String()
}

// A socket provider (tcp, tcp;ofi_rxm, sockets, udp;ofi_rxd) named by the
// OFI plugin is flagged, a fail once the log shows traffic between nodes,
// behind any prefix and for any rank count; RDMA providers (efa, verbs,
// cxi, psm3) never are.
func TestOFITCPProviderFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(803, 160))
	for range 30 {
		hosts := 1 + r.IntN(3)
		ranks := hosts * (1 + r.IntN(8))
		p := anyPrefix(r)
		prov := []string{"tcp", "tcp;ofi_rxm", "sockets", "udp;ofi_rxd"}[r.IntN(4)]
		a := Reader("o.txt", strings.NewReader(prefixLines(ofiLog(r, hosts, ranks, prov, r.IntN(2) == 0), p)), Options{})
		want := report.Warn
		if hosts > 1 {
			want = report.Fail
		}
		found := false
		for _, f := range a.Flags {
			if f.ID == "nccl.ofi-tcp-provider" {
				found = true
				if f.Severity != want {
					t.Errorf("%s, %d hosts: severity %s, want %s", prov, hosts, f.Severity, want)
				}
			}
		}
		if !found {
			t.Errorf("%s, %d hosts, %d ranks, prefix %q: %+v", prov, hosts, ranks, p, a.Flags)
		}
		rdma := []string{"efa", "verbs;ofi_rxm", "cxi", "psm3"}[r.IntN(4)]
		if a := Reader("e.txt", strings.NewReader(prefixLines(ofiLog(r, hosts, ranks, rdma, r.IntN(2) == 0), p)), Options{}); hasFlag(a, "nccl.ofi-tcp-provider") {
			t.Errorf("%s fired: %+v", rdma, a.Flags)
		}
	}
}

// Docker's container host names are 12 hex digits; host names are not.
func TestContainerID(t *testing.T) {
	for h, want := range map[string]bool{"6f2d8a82d208": true, "a1b2c3d4e5f6": true, "node-1": false, "123456789012": false, "6f2d8a82d20": false, "6F2D8A82D208": false} {
		if containerID(h) != want {
			t.Errorf("%q: %v", h, !want)
		}
	}
}

// The OFI plugin's lines pasted without NCCL's opening (field cases 328
// and 329: "NET/OFI Selected provider is tcp, fabric is 172.31.32.0/20
// (found 1 nics)") are read as an NCCL log and name the provider, behind
// any prefix, alone or after an INFO line that kept its opening; an RDMA
// provider so pasted raises nothing.
func TestOFIBareLines(t *testing.T) {
	r := rand.New(rand.NewPCG(328, 329))
	real := []string{
		"NET/OFI No eligible providers were found",
		"NET/OFI Selected provider is tcp, fabric is 172.31.32.0/20 (found 1 nics)",
		"NET/OFI Need to force simple protocol: GDR not supported",
	}
	a := analyseText(strings.Join(real, "\n") + "\n")
	f := flagOf(a, "nccl.ofi-tcp-provider")
	if a.Format != "nccl-log" || f == nil {
		t.Fatalf("format %q, flags %s", a.Format, flagIDs(a))
	}
	if !strings.Contains(f.Evidence, `"NET/OFI Selected provider is tcp, fabric is 172.31.32.0/20 (found 1 nics)"`) || !strings.Contains(f.Evidence, "No eligible providers were found") {
		t.Errorf("evidence: %s", f.Evidence)
	}
	for range 40 {
		p := anyPrefix(r)
		prov := []string{"tcp", "tcp;ofi_rxm", "sockets", "efa", "cxi", "verbs;ofi_rxm"}[r.IntN(6)]
		// four lines at least: a tag no launcher is known by is told
		// from four lines that carry it (docPrefix)
		lines := []string{
			"NET/OFI Initializing aws-ofi-nccl 1.21.1",
			"NET/OFI Using Libfabric version 2.6",
			fmt.Sprintf("NET/OFI Selected provider is %s, fabric is 10.%d.0.0/16 (found %d nics)", prov, r.IntN(255), 1+r.IntN(4)),
			"NET/OFI Using transport protocol SENDRECV",
		}
		if r.IntN(2) == 0 {
			lines = append(lines, fmt.Sprintf("node-%d:%d:%d [0] NCCL INFO Using network AWS Libfabric", r.IntN(9), 100+r.IntN(900), 100+r.IntN(900)))
		}
		a := analyseText(prefixed(p, lines))
		socket := !strings.HasPrefix(prov, "efa") && !strings.HasPrefix(prov, "cxi") && !strings.HasPrefix(prov, "verbs")
		if hasFlag(a, "nccl.ofi-tcp-provider") != socket {
			t.Errorf("%s behind %q: flags %s (format %s)", prov, p, flagIDs(a), a.Format)
		}
	}
}
