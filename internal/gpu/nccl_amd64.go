package gpu

import (
	"encoding/binary"
	"unsafe"

	"github.com/ebitengine/purego"
)

// commInitRank calls ncclCommInitRank(comm, nranks, ncclUniqueId id, rank).
// purego's typed functions cannot pass a 128-byte struct by value; on x86-64
// (System V) such a struct travels in memory on the stack while the integer
// arguments keep their registers, so the id's words follow the six register
// slots.
func commInitRank(fn uintptr, comm unsafe.Pointer, nranks int, id *UniqueID, rank int) int32 {
	args := make([]uintptr, 6, 6+UniqueIDSize/8)
	args[0], args[1], args[2] = uintptr(comm), uintptr(nranks), uintptr(rank)
	for i := 0; i < UniqueIDSize; i += 8 {
		args = append(args, uintptr(binary.LittleEndian.Uint64(id[i:])))
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}
