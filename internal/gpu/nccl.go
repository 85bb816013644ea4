package gpu

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NCCL data types and reduction operations from nccl.h.
const (
	ncclFloat16  = 6
	ncclFloat32  = 7
	ncclBfloat16 = 9
	ncclSum      = 0
)

// UniqueIDSize is the size of ncclUniqueId (NCCL_UNIQUE_ID_BYTES).
const UniqueIDSize = 128

// UniqueID is the opaque bootstrap handle rank 0 hands to every other rank.
type UniqueID [UniqueIDSize]byte

// NCCL is the part of the NCCL API sparkrig uses.
type NCCL struct {
	Path string

	getVersion     func(*int32) int32
	getUniqueID    func(*UniqueID) int32
	commInitAll    func(*uintptr, int32, *int32) int32
	commInitRank   uintptr // called through SyscallN: ncclUniqueId is passed by value
	commDestroy    func(uintptr) int32
	getErrorString func(int32) string
	groupStart     func() int32
	groupEnd       func() int32
	allReduce      func(send, recv uintptr, count uint64, dt, op int32, comm, stream uintptr) int32
	allGather      func(send, recv uintptr, sendcount uint64, dt int32, comm, stream uintptr) int32
	reduceScatter  func(send, recv uintptr, recvcount uint64, dt, op int32, comm, stream uintptr) int32
	broadcast      func(send, recv uintptr, count uint64, dt, root int32, comm, stream uintptr) int32
	send           func(buf uintptr, count uint64, dt, peer int32, comm, stream uintptr) int32
	recv           func(buf uintptr, count uint64, dt, peer int32, comm, stream uintptr) int32
}

// LoadNCCL loads libnccl from path.
func LoadNCCL(path string) (*NCCL, error) {
	n := &NCCL{Path: path}
	h, err := open(path, []binding{
		{"ncclGetVersion", &n.getVersion},
		{"ncclGetUniqueId", &n.getUniqueID},
		{"ncclCommInitAll", &n.commInitAll},
		{"ncclCommDestroy", &n.commDestroy},
		{"ncclGetErrorString", &n.getErrorString},
		{"ncclGroupStart", &n.groupStart},
		{"ncclGroupEnd", &n.groupEnd},
		{"ncclAllReduce", &n.allReduce},
		{"ncclAllGather", &n.allGather},
		{"ncclReduceScatter", &n.reduceScatter},
		{"ncclBroadcast", &n.broadcast},
		{"ncclSend", &n.send},
		{"ncclRecv", &n.recv},
	})
	if err != nil {
		return nil, err
	}
	if n.commInitRank, err = purego.Dlsym(h, "ncclCommInitRank"); err != nil {
		return nil, fmt.Errorf("load %s: symbol ncclCommInitRank: %w", path, err)
	}
	return n, nil
}

func (n *NCCL) check(what string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (ncclResult %d)", what, n.getErrorString(rc), rc)
}

// Version returns NCCL's version code (e.g. 22803) and its dotted form.
func (n *NCCL) Version() (int, string) {
	var v int32
	n.getVersion(&v)
	return int(v), FormatNCCLVersion(int(v))
}

// FormatNCCLVersion turns NCCL's version code into x.y.z: 22803 → 2.28.3 and
// the pre-2.9 form 2708 → 2.7.8.
func FormatNCCLVersion(v int) string {
	if v <= 0 {
		return ""
	}
	if v >= 10000 {
		return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	}
	return fmt.Sprintf("%d.%d.%d", v/1000, v/100%10, v%100)
}

// UniqueID asks NCCL for a new bootstrap handle (rank 0 only).
func (n *NCCL) UniqueID() (UniqueID, error) {
	var id UniqueID
	err := n.check("ncclGetUniqueId", n.getUniqueID(&id))
	return id, err
}

// InitAll creates one communicator per listed device in this process.
func (n *NCCL) InitAll(devs []int) ([]uintptr, error) {
	comms := make([]uintptr, len(devs))
	d32 := make([]int32, len(devs))
	for i, d := range devs {
		d32[i] = int32(d)
	}
	err := n.check("ncclCommInitAll", n.commInitAll(&comms[0], int32(len(devs)), &d32[0]))
	return comms, err
}

// InitRank joins communicator id as rank of nranks on the current device.
func (n *NCCL) InitRank(id UniqueID, nranks, rank int) (uintptr, error) {
	var comm uintptr
	rc := commInitRank(n.commInitRank, unsafe.Pointer(&comm), nranks, &id, rank)
	return comm, n.check("ncclCommInitRank", rc)
}

// Destroy frees a communicator.
func (n *NCCL) Destroy(comm uintptr) {
	if comm != 0 {
		n.commDestroy(comm)
	}
}
