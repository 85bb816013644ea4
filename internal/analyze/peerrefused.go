package analyze

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// refusedFinal is a connection NCCL gave up on after its retries, in the
// words of the releases that name the address: "Connect to %s failed : %s"
// after RETRY_REFUSED_TIMES (2e4) refused attempts (src/include/socket.h
// v2.4.6-1 to v2.11.4-1; src/misc/socket.cc v2.12.12-1 to v2.15.5-1 with
// "Net : " in front), and "%s: connect to %s returned %s, exceeded error
// retry count after %d attempts" (src/misc/socket.cc v2.27.7-1,
// src/os/linux.cc v2.30.7-1). Releases 2.16 to 2.26 end a refused
// connection without its address ("socketStartConnect: exceeded retries
// (%d)", then "%s: connect returned %s, exceeded error retry count (%d)"
// from 2.24; their "Connect to %s failed" is for other errors): those lines
// name no node and are not read. Neither are the INFO "retrying" lines,
// which are not final.
var refusedFinal = regexp.MustCompile(`[Cc]onnect to ([0-9A-Fa-f:.]+)<\d+> (?:failed : Connection refused|returned Connection refused, exceeded error retry count)`)

const weightPeerRefuses = 1.0

// peerRefuses: two or more of NCCL's final connection failures (from
// several ranks, or one rank's repeated attempts) were refused by one
// address, and that address has most of the refusals: the node that owns
// it accepts no connection (its network or its processes are down) while
// the others do. Against: a single refusal (the peer rank may have exited
// first), refusals spread over several addresses (no one node to blame), a
// loopback address (error.socket-loopback's), an address on another
// network than this rank's (nccl.peer-other-network's).
func (a *analysis) peerRefuses(l *results.NCCLLog) {
	for _, c := range a.causes {
		if c.flag.ID == "nccl.peer-other-network" {
			return
		}
	}
	counts := map[string]int{}
	first := map[string]string{}
	total := 0
	for _, w := range l.Warnings {
		m := refusedFinal.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		total++
		counts[m[1]]++
		if first[m[1]] == "" {
			first[m[1]] = strings.TrimSpace(w)
		}
	}
	top, n := "", 0
	for addr, c := range counts {
		if c > n || c == n && addr < top {
			top, n = addr, c
		}
	}
	if n < 2 || 2*n <= total {
		return
	}
	ip, err := netip.ParseAddr(top)
	if err != nil || ip.IsLoopback() {
		return
	}
	a.cause(weightPeerRefuses, report.Fail, "nccl.peer-refuses",
		"the node at "+top+" refused NCCL's connections "+strconv.Itoa(n)+" times after NCCL's retries, the other nodes did not: its network or its processes are down, not the job's settings",
		first[top]+" ("+strconv.Itoa(n)+" of "+strconv.Itoa(total)+" refused connections)",
		"find the node that owns "+top+" (getent hosts "+top+" or nslookup "+top+"), rerun without it (Slurm: sbatch --exclude=<that node>) and report it to the cluster's admins; check that its ranks started and that its interface is up",
		"https://github.com/stas00/ml-engineering/blob/master/orchestration/slurm/users.md (Broken Network); NVIDIA/nccl src/include/socket.h v2.7.8-1 (RETRY_REFUSED_TIMES 2e4 refused attempts before \"Connect to %s failed\")")
}
