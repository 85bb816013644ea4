package cli

import (
	"context"
	"github.com/sparkrig/sparkrig/internal/testrig"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkRigFleet measures, on a pair of rig hosts with Debian's Slurm:
// the health check's wall time on a node (slurm health, as slurmd runs it,
// deciding against slurmctld; --dry-run so every run does the same), and
// doctor over srun inside an allocation against doctor over SSH, each a
// whole sparkrig process capturing both hosts with the ping mesh.
//
//	go test -run '^$' -bench RigFleet -benchtime 20x ./internal/cli/
func BenchmarkRigFleet(b *testing.B) {
	r := sparkPair(b, nil)
	bin := buildSparkrig(b)
	s := r.StartSlurm(b, testrig.SlurmOptions{})
	ctx := context.Background()
	job, err := s.Command(ctx, "salloc", "--nodes=2", "--no-shell").CombinedOutput()
	if err != nil {
		b.Fatalf("salloc: %v: %s", err, job)
	}
	// "salloc: Granted job allocation 7"
	f := strings.Fields(string(job))
	id := f[len(f)-1]
	b.Cleanup(func() { s.Command(ctx, "scancel", id).Run() })
	run := func(b *testing.B, cmd *exec.Cmd) {
		if out, err := cmd.CombinedOutput(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 2 {
				b.Fatalf("%v: %v: %s", cmd.Args, err, out)
			}
		}
	}
	b.Run("health-check", func(b *testing.B) {
		for b.Loop() {
			if out, err := r.Host("spark-01").Exec(ctx, "env", s.Env, bin, "slurm", "health", "--dry-run"); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("doctor-srun", func(b *testing.B) {
		for b.Loop() {
			cmd := s.Command(ctx, bin, "doctor", "--slurm", "--quiet")
			cmd.Env = append(cmd.Env, "SLURM_JOB_ID="+id, "SLURM_JOBID="+id, "SLURM_JOB_NODELIST=spark-[01-02]")
			run(b, cmd)
		}
	})
	b.Run("doctor-ssh", func(b *testing.B) {
		for b.Loop() {
			run(b, exec.Command(bin, "doctor", "--quiet", "--hosts", "spark-01,spark-02", "--ssh-config", r.SSHConfig))
		}
	})
}
