// Package bench measures a cluster the way its benchmarks are meant to be
// run, and judges what they measured.
//
// A bench run (Run) acquires the nodes through internal/acquire (snapshots,
// this machine, or a capture over the command's runner), makes a plan from
// their facts, the rails between them and their live state (NewPlan:
// perftest, iperf3 or sparkrig's own probe, nccl-tests through mpirun or
// sparkrig's own collectives, and the per-direction qualify step), refuses
// what would be unsafe, runs each step's servers and grouped clients on the
// nodes over the runner (Executor, Session; every process started is
// stopped again, also on an interrupt), parses the outputs with
// internal/results, judges them against internal/expect and records the
// run with its raw outputs (Record, Save). Compare sets two records side
// by side.
//
// The GPU benchmarks of this machine (GPUInfo, RunCollective, RunMemory,
// RunGEMM) run through the node's own CUDA, NCCL and cuBLAS libraries
// (internal/gpu), with the node's state sampled beside them (SampleLocal):
// a result measured in a bad state says nothing about the hardware.
//
// The TCP port span the benchmarks listen in is internal/tuning's, which
// fix keeps out of the ephemeral range.
package bench
