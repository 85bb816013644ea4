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

// hostLocalBridges are the networks a container or VM host gives its own
// bridge by default: an address in them names no node, every host may own
// it (Docker's default bridge 172.17.0.0/16,
// https://docs.docker.com/engine/network/drivers/bridge/; libvirt's
// default network 192.168.122.0/24,
// https://wiki.libvirt.org/VirtualNetworking.html).
var hostLocalBridges = []netip.Prefix{netip.MustParsePrefix("172.17.0.0/16"), netip.MustParsePrefix("192.168.122.0/24")}

// nodeAddress: ip can name one node of the job: not loopback, link-local,
// unspecified or multicast, nor in a default bridge network.
func nodeAddress(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
		return false
	}
	for _, p := range hostLocalBridges {
		if p.Contains(ip.Unmap()) {
			return false
		}
	}
	return true
}

// ownAddress: the lines show ip as an address of the process that
// printed them (its bootstrap, NET/Socket or NET/IB out-of-band
// interface) or the host name spells it ("ip-10-0-0-5", "10-0-0-5"):
// its refusal is then the own host's.
func ownAddress(l *results.NCCLLog, ip netip.Addr) bool {
	for _, s := range append(socketInterfaces(l), socketInterfaces(&results.NCCLLog{Bootstrap: l.OOB})...) {
		if a, err := netip.ParseAddr(s.addr); err == nil && a.Unmap() == ip.Unmap() {
			return true
		}
	}
	dashed := strings.ReplaceAll(ip.Unmap().String(), ".", "-")
	for _, h := range l.Hosts {
		h, _, _ = strings.Cut(h, ".")
		if h == dashed || strings.HasSuffix(h, "-"+dashed) {
			return true
		}
	}
	return false
}

// peerRefuses: NCCL's final connection failures (after its retries) were
// refused by one address, and that address has most of the refusals: the
// node that owns it accepts no connection (its network or its processes
// are down) while the others do. NCCL gives up only after the peer refused
// for the whole retry budget (RETRY_REFUSED_TIMES 2e4 attempts 1 ms apart,
// about 20 s, to 2.15; NCCL_SOCKET_RETRY_CNT 34 retries sleeping 100 ms
// more each time, about 60 s, from 2.27), and the address is one a rank
// advertised for itself through the bootstrap (its listening socket's), so
// one such line already names a node that refused for that long. Two or
// more refusals name it whatever else the lines show; a single one only
// where nothing else in the lines explains it: no other cause read from
// the startup lines (an interface that reaches no other node, a peer on
// another network) and no address of the printing process itself.
// Against: refusals spread over several addresses (no one node to blame),
// a loopback, link-local or default bridge address (error.socket-loopback's,
// a container's), an address on another network than this rank's
// (nccl.peer-other-network's).
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
	if n < 1 || 2*n <= total {
		return
	}
	ip, err := netip.ParseAddr(top)
	if err != nil || ip.IsLoopback() {
		return
	}
	msg := "the node at " + top + " refused NCCL's connections " + strconv.Itoa(n) + " times after NCCL's retries, the other nodes did not: its network or its processes are down, not the job's settings"
	ev := first[top] + " (" + strconv.Itoa(n) + " of " + strconv.Itoa(total) + " refused connections)"
	if n == 1 {
		if len(a.causes) > 0 || !nodeAddress(ip) || ownAddress(l, ip) {
			return
		}
		msg = "the node at " + top + " refused NCCL's connection through all of NCCL's retries (about 20 s before 2.16, about 60 s from 2.27): its network or its processes are down, not the job's settings"
		ev = first[top] + " (NCCL's last attempt after its retries; no address of the printing process in the lines is " + top + ")"
	}
	a.cause(weightPeerRefuses, report.Fail, "nccl.peer-refuses",
		msg, ev,
		"find the node that owns "+top+" (getent hosts "+top+" or nslookup "+top+"), rerun without it (Slurm: sbatch --exclude=<that node>) and report it to the cluster's admins; check that its ranks started and that its interface is up",
		"https://github.com/stas00/ml-engineering/blob/master/orchestration/slurm/users.md (Broken Network); NVIDIA/nccl src/include/socket.h v2.7.8-1 (RETRY_REFUSED_TIMES 2e4 refused attempts 1 ms apart before \"Connect to %s failed\"), src/misc/socket.cc v2.27.7-1 (NCCL_SOCKET_RETRY_CNT 34 retries, sleeping 100 ms more each, before \"exceeded error retry count\"); src/bootstrap.cc (each rank advertises its own listening address)")
}
