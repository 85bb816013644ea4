package analyze

import (
	"bytes"
	"testing"
)

// The signatures added from the field read their real lines behind any
// prefix, and lines that look alike but are NCCL 2's or another call's do
// not fire them.
func TestBatch12Signatures(t *testing.T) {
	cases := []struct {
		line, id string
		fire     bool
	}{
		// NCCL 1's WARN macro: "WARN %s:%d " (v1.3.0-1 src/core.h)
		{"WARN src/core.cu:225 failed to allocate 2101248 byte device buffer", "error.nccl-1x", true},
		{"WARN src/core.cu:683 rank 12 failed to allocate communicator", "error.nccl-1x", true},
		// NCCL 2 prints "host:pid:tid [dev] file:line NCCL WARN"
		{"gpu1:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out", "error.nccl-1x", false},
		{"node01:1297:1297 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", "error.nccl-1x", false},
		{"node01:1297:1297 [0] NCCL WARN src/init.cu:100 something", "error.nccl-1x", false},
		{"misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported", "error.dmabuf-unsupported", true},
		{"misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "error.dmabuf-unsupported", false},
		{"misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed", "error.ib-open-device-failed", true},
		{"transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0", "error.ib-open-device-failed", true},
		{"node013:37715:38896 [0] NCCL INFO NET/IB : No device found.", "error.ib-open-device-failed", false},
	}
	for _, c := range cases {
		for _, pre := range launchPrefixes {
			a := Reader("s.txt", bytes.NewReader([]byte(pre+c.line+"\n")), Options{})
			if got := hasFlag(a, c.id); got != c.fire {
				t.Errorf("%q behind %q: %s fired %v, want %v (%+v)", c.line, pre, c.id, got, c.fire, a.Flags)
			}
		}
	}
}
