// Package gpu runs GPU benchmarks (NCCL collectives, memory copies, GEMM)
// through the CUDA, NCCL and cuBLAS libraries already installed on a node. The
// libraries are loaded at run time with purego, so sparkrig needs no cgo and no
// compiler on the node, and the same binary cross-compiles to linux/arm64.
//
// # Using the package from other commands
//
// Load the libraries once, then run benchmarks on the Stack:
//
//	in := gpu.SearchInput{LDLibraryPath: os.Getenv("LD_LIBRARY_PATH"), StandardDirs: gpu.StandardDirs()}
//	st, err := gpu.Open(in)            // errors.Is(err, gpu.ErrNoDriver) when there is no GPU
//	tables, err := st.RunLocal(ctx, []int{0, 1}, opts, gpu.Hooks{})   // one process, every GPU
//
// RunLocal, RunRank, RunMemory and RunGEMM pin their goroutine to an OS thread
// for the CUDA runtime's per-thread current device; call them one at a time.
//
// One process per GPU or per node (no MPI): start `sparkrig bench gpu
// collective --nranks N --rank R --rendezvous HOST:PORT` once per rank, rank 0
// on HOST. In Go, Stack.RunRank does the same: rank 0 listens on HOST:PORT,
// asks NCCL for its unique id and hands it to the other ranks (ServeUniqueID /
// FetchUniqueID, a small TCP exchange that also carries each rank's device
// description), then every rank joins with ncclCommInitRank and runs the same
// sweep. Rank 0's tables list every rank's device and count the nodes; the
// other ranks print nothing. `sparkrig bench nccl --hosts a,b` (without
// nccl-tests on the nodes, or with --native-nccl) starts rank 0 on a and
// rank 1 on b over SSH with the same flags and judges rank 0's --json-file
// (a []results.NCCLTable); see internal/bench/plan_native.go.
//
// Tables are results.NCCLTable with Tool "sparkrig", filled like parsed
// nccl-tests output (sizes, counts, time, algbw, busbw with nccl-tests'
// factors, #wrong on sizes up to CheckBytes, the average footer), and the text
// output follows nccl-tests' layout so results.ParseNCCLTests reads it too.
package gpu
