package runner

import (
	"context"
	"io"
	"syscall"
	"time"
)

// Srun runs commands as Slurm job steps inside the current allocation
// (salloc or sbatch): one task on the named node, the script on stdin of
// `sh -c`, nothing installed on the node. Steps overlap (--overlap), so the
// ping mesh and a benchmark's server and client can run on one node at once.
type Srun struct {
	// Bin is the srun program ("srun" when empty).
	Bin string
	// Args come before the command (e.g. --partition=gpu).
	Args []string
}

// srunGrace is how long srun has, after SIGTERM, to end the step on the
// node before it is killed here.
const srunGrace = 5 * time.Second

// Exec runs cmdline on node host as a job step. Cancelling ctx sends srun
// SIGTERM, which it passes to the step.
func (s Srun) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	return execProcess(ctx, host, s.argv(host, cmdline), stdin, stdout, stderr, syscall.SIGTERM, srunGrace)
}

func (s Srun) argv(host, cmdline string) []string {
	bin := s.Bin
	if bin == "" {
		bin = "srun"
	}
	argv := []string{bin, "--nodes=1", "--ntasks=1", "--overlap", "--quiet", "--nodelist=" + host}
	argv = append(argv, s.Args...)
	return append(argv, "sh", "-c", cmdline)
}

// String names the transport.
func (Srun) String() string { return "srun" }
