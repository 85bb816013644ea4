package gpu

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// commInitRank calls ncclCommInitRank(comm, nranks, ncclUniqueId id, rank).
// On AArch64 (AAPCS64) a composite larger than 16 bytes is copied by the caller
// and passed by address in the next integer register.
func commInitRank(fn uintptr, comm unsafe.Pointer, nranks int, id *UniqueID, rank int) int32 {
	cp := new(UniqueID)
	*cp = *id
	r, _, _ := purego.SyscallN(fn, uintptr(comm), uintptr(nranks), uintptr(unsafe.Pointer(cp)), uintptr(rank))
	return int32(r)
}
