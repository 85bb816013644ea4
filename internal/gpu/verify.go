package gpu

import "math"

// The check pattern: element i of rank r's send buffer holds (r+1) + i mod 13,
// small integers that every type holds exactly and whose sums stay exact.
func pattern(r int, i int64) float32 { return float32(r+1) + float32(i%13) }

// expected returns element i of rank r's result for op on n ranks, where
// param is the call's count (per-rank chunk for all_gather, reduce_scatter and
// alltoall). Broadcast's root is rank 0; sendrecv receives from rank r−1.
func expected(op string, n, r int, param, i int64) float32 {
	switch op {
	case "all_reduce":
		return sumOverRanks(n, i)
	case "all_gather":
		return pattern(int(i/param), i%param)
	case "reduce_scatter":
		return sumOverRanks(n, int64(r)*param+i)
	case "broadcast":
		return pattern(0, i)
	case "alltoall":
		return pattern(int(i/param), int64(r)*param+i%param)
	case "sendrecv":
		return pattern((r-1+n)%n, i)
	}
	return float32(math.NaN())
}

func sumOverRanks(n int, i int64) float32 {
	var s float32
	for r := 0; r < n; r++ {
		s += pattern(r, i)
	}
	return s
}

// sendElems and recvElems are the element counts of one rank's buffers.
func sendElems(op string, n int, param int64) int64 {
	switch op {
	case "reduce_scatter", "alltoall":
		return param * int64(n)
	}
	return param
}

func recvElems(op string, n int, param int64) int64 {
	switch op {
	case "all_gather", "alltoall":
		return param * int64(n)
	}
	return param
}

// fillSend writes rank r's pattern for op into b (sendElems elements).
func fillSend(b []byte, dt DType, r int, elems int64) {
	for i := int64(0); i < elems; i++ {
		dt.put(b, i, pattern(r, i))
	}
}

// countWrong compares a received buffer with the expected result. The
// pattern's sums are integers every type holds exactly up to its exact limit
// (256 for bfloat16, 2048 for half, 2^24 for float), and all partial sums stay
// below the final one, so below the limit any difference is an error; above it
// (many ranks) rounding of n partial sums is allowed.
func countWrong(b []byte, dt DType, op string, n, r int, param int64) int64 {
	var wrong int64
	for i := int64(0); i < recvElems(op, n, param); i++ {
		want, got := expected(op, n, r, param, i), dt.get(b, i)
		if !(math.Abs(float64(got-want)) <= dt.tolerance(want, n)) {
			wrong++
		}
	}
	return wrong
}

func (d DType) tolerance(want float32, n int) float64 {
	limit, eps := float32(1<<24), 0x1p-24
	switch d.nccl {
	case ncclBfloat16:
		limit, eps = 256, 0x1p-8
	case ncclFloat16:
		limit, eps = 2048, 0x1p-11
	}
	if want <= limit {
		return 0
	}
	return float64(want) * eps * float64(n)
}

// verify runs op once on the check pattern and counts wrong elements over all
// local ranks. Receive buffers are first filled with 0xff bytes (NaN in every
// float type), so an element nobody wrote counts as wrong.
func (g *Group) verify(op string, param int64, dt DType, inPlace bool) (int64, error) {
	rt := g.s.RT
	sendB := make([]byte, sendElems(op, g.nranks, param)*dt.Size)
	recvB := make([]byte, recvElems(op, g.nranks, param)*dt.Size)
	for _, r := range g.local {
		if err := rt.SetDevice(r.dev); err != nil {
			return 0, err
		}
		if err := rt.Memset(r.recv, 0xff, uint64(len(recvB))); err != nil {
			return 0, err
		}
		fillSend(sendB, dt, r.index, int64(len(sendB))/dt.Size)
		dst := r.send
		if inPlace {
			dst = g.inPlaceSend(r, op, param, dt)
		}
		if err := rt.CopyToDevice(dst, sendB); err != nil {
			return 0, err
		}
		if err := rt.DeviceSync(); err != nil { // cudaMemset does not order with non-blocking streams
			return 0, err
		}
	}
	if err := g.launch(op, param, dt, inPlace); err != nil {
		return 0, err
	}
	if err := g.sync(); err != nil {
		return 0, err
	}
	var wrong int64
	for _, r := range g.local {
		if err := rt.SetDevice(r.dev); err != nil {
			return 0, err
		}
		src := r.recv
		if inPlace && op == "reduce_scatter" {
			src = r.send + uintptr(int64(r.index)*param*dt.Size)
		}
		if err := rt.CopyFromDevice(recvB, src); err != nil {
			return 0, err
		}
		wrong += countWrong(recvB, dt, op, g.nranks, r.index, param)
	}
	return wrong, nil
}

// inPlaceSend is where a rank's input lives for an in-place call.
func (g *Group) inPlaceSend(r *rank, op string, param int64, dt DType) uintptr {
	switch op {
	case "all_gather":
		return r.recv + uintptr(int64(r.index)*param*dt.Size)
	case "reduce_scatter":
		return r.send
	}
	return r.recv
}
