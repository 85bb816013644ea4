package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/testrig"
)

// pairedSparks is n rig hosts (n even) cabled in pairs on port 1, each pair
// on its own subnets, so the capture, the checks and the ping mesh all work.
func pairedSparks(n int) testrig.Config {
	cfg, _ := testrig.Sparks(n, "none")
	for k := 0; k+1 < n; k += 2 {
		for twin, dev := range testrig.PortNetDevs(1) {
			for j := range 2 {
				cfg.Hosts[k+j].NetDevs[dev] = testrig.NetDev{MTU: 9000, Addrs: []string{fmt.Sprintf("10.%d.%d.%d/24", 100+twin, k/2, 10+j)}}
			}
		}
		cfg.Links = append(cfg.Links, testrig.Cable(cfg.Hosts[k].Name, 1, cfg.Hosts[k+1].Name, 1)...)
	}
	return cfg
}

// BenchmarkDoctorRig runs `sparkrig doctor --hosts` against 1 and 32 rig
// hosts (capture over SSH, audit, cluster checks, ping mesh); the ns/op of
// each is the wall time of one doctor run. The goal: 32 hosts within 2× of 1.
// All rig hosts share this machine's CPUs, unlike real nodes.
func BenchmarkDoctorRig(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			cfg := pairedSparks(n)
			if n == 1 {
				cfg, _ = testrig.Sparks(1, "none")
			}
			r := testrig.New(b, cfg)
			args := []string{"doctor", "--format", "json", "--ssh-config", r.SSHConfig, "--hosts", strings.Join(r.Names(), ",")}
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				var out, errb bytes.Buffer
				if code := Main(args, strings.NewReader(""), &out, &errb); code == ExitUnknown {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/doctor")
		})
	}
}
