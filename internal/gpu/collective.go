package gpu

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/results"
)

// Collectives sparkrig can run, in nccl-tests' order.
var Collectives = []string{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv"}

// CollectiveOptions is one size sweep.
type CollectiveOptions struct {
	Ops      []string
	MinBytes int64
	MaxBytes int64
	Factor   int64 // size multiplier between steps (nccl-tests -f)
	Iters    int
	Warmup   int   // per size, before timing
	DType    DType // element type
	// CheckBytes is the largest size whose result is verified (the #wrong column); 0 checks none.
	CheckBytes int64
	// CapBytes is the most device memory one rank may allocate.
	CapBytes uint64
}

// Sizes returns the sweep's message sizes.
func (o CollectiveOptions) Sizes() []int64 {
	var s []int64
	for b := o.MinBytes; b <= o.MaxBytes; b *= o.Factor {
		s = append(s, b)
		if o.Factor <= 1 {
			break
		}
	}
	return s
}

// Validate checks the options before any GPU work.
func (o CollectiveOptions) Validate() error {
	for _, op := range o.Ops {
		if !isCollective(op) {
			return fmt.Errorf("unknown collective %q (want one of %s)", op, strings.Join(Collectives, ", "))
		}
	}
	switch {
	case len(o.Ops) == 0:
		return fmt.Errorf("no collective given")
	case o.MinBytes <= 0 || o.MaxBytes < o.MinBytes:
		return fmt.Errorf("sizes: need 0 < min (%d) <= max (%d)", o.MinBytes, o.MaxBytes)
	case o.Factor < 1:
		return fmt.Errorf("step factor %d: must be at least 1", o.Factor)
	case o.Iters < 1 || o.Warmup < 0:
		return fmt.Errorf("iterations %d, warm-up %d: need at least 1 iteration", o.Iters, o.Warmup)
	}
	return nil
}

func isCollective(op string) bool {
	for _, c := range Collectives {
		if c == op {
			return true
		}
	}
	return false
}

// BufferBytes is what one rank allocates for the sweep: a send and a receive
// buffer of the largest size.
func (o CollectiveOptions) BufferBytes() uint64 { return 2 * uint64(o.MaxBytes) }

// counts gives nccl-tests' element counts for a message of size bytes on n
// ranks: the count the API call takes (also the table's count column) and the
// bytes the row reports.
func counts(op string, size int64, elem int64, n int) (param int64, bytes int64) {
	total := size / elem
	switch op {
	case "all_gather", "reduce_scatter", "alltoall":
		param = total / int64(n)
		return param, param * int64(n) * elem
	default:
		return total, total * elem
	}
}

func redopName(op string) string {
	if op == "all_reduce" || op == "reduce_scatter" {
		return "sum"
	}
	return "none"
}

func rootOf(op string) int {
	if op == "broadcast" {
		return 0
	}
	return -1
}

func hasInPlace(op string) bool { return op != "alltoall" && op != "sendrecv" }

// rank is one GPU's share of a communicator in this process.
type rank struct {
	index      int // global rank
	dev        int
	comm       uintptr
	stream     uintptr
	send, recv uintptr
}

// Group is a communicator over some ranks, all or part of which live in this process.
type Group struct {
	s      *Stack
	nccl   *NCCL
	nranks int
	local  []*rank
	// peers, on rank 0 of a multi-process run, describes every rank's device.
	peers []results.NCCLDevice
}

// NewLocalGroup creates one communicator over devs in this process (ncclCommInitAll).
// The caller must hold its OS thread (see RunCollectives).
func (s *Stack) NewLocalGroup(devs []int) (*Group, error) {
	n, err := s.NCCL()
	if err != nil {
		return nil, err
	}
	comms, err := n.InitAll(devs)
	if err != nil {
		return nil, err
	}
	g := &Group{s: s, nccl: n, nranks: len(devs)}
	for i, d := range devs {
		g.local = append(g.local, &rank{index: i, dev: d, comm: comms[i]})
	}
	return g, nil
}

// NewRankGroup joins a communicator of nranks as rank r on device dev, with
// id from the rendezvous (one process per GPU or per node).
func (s *Stack) NewRankGroup(id UniqueID, nranks, r, dev int) (*Group, error) {
	n, err := s.NCCL()
	if err != nil {
		return nil, err
	}
	if err := s.RT.SetDevice(dev); err != nil {
		return nil, err
	}
	comm, err := n.InitRank(id, nranks, r)
	if err != nil {
		return nil, err
	}
	return &Group{s: s, nccl: n, nranks: nranks, local: []*rank{{index: r, dev: dev, comm: comm}}}, nil
}

// alloc gives each local rank a stream and a send and a receive buffer of
// bytes each (the largest size: see BufferBytes).
func (g *Group) alloc(bytes uint64) error {
	rt := g.s.RT
	for _, r := range g.local {
		if err := rt.SetDevice(r.dev); err != nil {
			return err
		}
		var err error
		if r.stream, err = rt.NewStream(); err != nil {
			return err
		}
		if r.send, err = rt.Malloc(bytes); err != nil {
			return err
		}
		if r.recv, err = rt.Malloc(bytes); err != nil {
			return err
		}
		if err := rt.Memset(r.send, 0, bytes); err != nil {
			return err
		}
		if err := rt.Memset(r.recv, 0, bytes); err != nil {
			return err
		}
		if err := rt.DeviceSync(); err != nil {
			return err
		}
	}
	return nil
}

// Close frees buffers and communicators.
func (g *Group) Close() {
	for _, r := range g.local {
		g.s.RT.SetDevice(r.dev)
		g.s.RT.Free(r.send)
		g.s.RT.Free(r.recv)
		g.nccl.Destroy(r.comm)
	}
}

// launch issues one collective on every local rank inside one NCCL group.
func (g *Group) launch(op string, param int64, dt DType, inPlace bool) error {
	nc := g.nccl
	if err := nc.check("ncclGroupStart", nc.groupStart()); err != nil {
		return err
	}
	var first error
	for _, r := range g.local {
		if err := g.launchRank(r, op, param, dt, inPlace); err != nil && first == nil {
			first = err
		}
	}
	if err := nc.check("ncclGroupEnd", nc.groupEnd()); err != nil && first == nil {
		first = err
	}
	return first
}

func (g *Group) launchRank(r *rank, op string, param int64, dt DType, inPlace bool) error {
	nc, n, c, e := g.nccl, int32(g.nranks), uint64(param), int32(dt.nccl)
	send, recv := r.send, r.recv
	chunk := uintptr(param * dt.Size)
	switch op {
	case "all_reduce":
		if inPlace {
			send = recv
		}
		return nc.check("ncclAllReduce", nc.allReduce(send, recv, c, e, ncclSum, r.comm, r.stream))
	case "all_gather":
		if inPlace {
			send = recv + uintptr(r.index)*chunk
		}
		return nc.check("ncclAllGather", nc.allGather(send, recv, c, e, r.comm, r.stream))
	case "reduce_scatter":
		if inPlace {
			recv = send + uintptr(r.index)*chunk
		}
		return nc.check("ncclReduceScatter", nc.reduceScatter(send, recv, c, e, ncclSum, r.comm, r.stream))
	case "broadcast":
		if inPlace {
			send = recv
		}
		return nc.check("ncclBroadcast", nc.broadcast(send, recv, c, e, 0, r.comm, r.stream))
	case "alltoall":
		for p := int32(0); p < n; p++ {
			if err := nc.check("ncclSend", nc.send(send+uintptr(p)*chunk, c, e, p, r.comm, r.stream)); err != nil {
				return err
			}
			if err := nc.check("ncclRecv", nc.recv(recv+uintptr(p)*chunk, c, e, p, r.comm, r.stream)); err != nil {
				return err
			}
		}
		return nil
	case "sendrecv":
		next, prev := (int32(r.index)+1)%n, (int32(r.index)-1+n)%n
		if err := nc.check("ncclSend", nc.send(send, c, e, next, r.comm, r.stream)); err != nil {
			return err
		}
		return nc.check("ncclRecv", nc.recv(recv, c, e, prev, r.comm, r.stream))
	}
	return fmt.Errorf("unknown collective %q", op)
}

// sync waits for every local rank's stream.
func (g *Group) sync() error {
	for _, r := range g.local {
		if err := g.s.RT.Sync(r.stream); err != nil {
			return err
		}
	}
	return nil
}

// timeOp runs warmup untimed iterations, then iters timed ones, and returns
// the mean time of one in microseconds (host clock around launches and the
// final stream synchronisation, as nccl-tests measures).
func (g *Group) timeOp(op string, param int64, dt DType, inPlace bool, warmup, iters int) (float64, error) {
	for i := 0; i < warmup; i++ {
		if err := g.launch(op, param, dt, inPlace); err != nil {
			return 0, err
		}
	}
	if err := g.sync(); err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := g.launch(op, param, dt, inPlace); err != nil {
			return 0, err
		}
	}
	if err := g.sync(); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(iters), nil
}

// Sweep runs t's collective over the sizes, appending rows to t. row, when
// not nil, is called after each size (for live output).
func (g *Group) Sweep(ctx context.Context, t *results.NCCLTable, o CollectiveOptions, row func(results.NCCLRow)) error {
	op := t.Collective
	factor := results.BusBWFactor(op, g.nranks)
	defer func() {
		t.AvgBusBWGBs = avgBusBW(t.Rows)
		t.FinishPeak()
	}()
	defer func() { // like nccl-tests' footer: only a finished sweep is complete
		if t.Complete = len(t.Rows) > 0 && ctx.Err() == nil; t.Complete {
			t.OutOfBounds = &t.WrongResults
		}
	}()
	for _, size := range o.Sizes() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		param, bytes := counts(op, size, o.DType.Size, g.nranks)
		if param == 0 {
			continue
		}
		r := results.NCCLRow{SizeBytes: bytes, Count: param, Type: o.DType.Name, RedOp: redopName(op), Root: rootOf(op)}
		var err error
		if r.OOP, err = g.measure(op, param, bytes, factor, false, o); err != nil {
			return fmt.Errorf("%s %d bytes: %w", op, bytes, err)
		}
		if hasInPlace(op) {
			if r.IP, err = g.measure(op, param, bytes, factor, true, o); err != nil {
				return fmt.Errorf("%s %d bytes in place: %w", op, bytes, err)
			}
		}
		t.Rows = append(t.Rows, r)
		if row != nil {
			row(r)
		}
	}
	return nil
}

func (g *Group) measure(op string, param, bytes int64, factor float64, inPlace bool, o CollectiveOptions) (results.Timing, error) {
	us, err := g.timeOp(op, param, o.DType, inPlace, o.Warmup, o.Iters)
	if err != nil {
		return results.Timing{}, err
	}
	algbw, busbw := Bandwidth(bytes, us, factor)
	tm := results.Timing{TimeUS: &us, AlgBWGBs: &algbw, BusBWGBs: &busbw}
	if bytes <= o.CheckBytes {
		wrong, err := g.verify(op, param, o.DType, inPlace)
		if err != nil {
			return tm, err
		}
		tm.WrongErrs = &wrong
	}
	return tm, nil
}

// Bandwidth is nccl-tests' arithmetic: algbw = bytes / time in GB/s (10⁹),
// busbw = algbw × the collective's factor (results.BusBWFactor).
func Bandwidth(bytes int64, us, factor float64) (algbw, busbw float64) {
	algbw = float64(bytes) / us / 1e3
	return algbw, algbw * factor
}

// avgBusBW is nccl-tests' footer: the mean busbw over every row and placement measured.
func avgBusBW(rows []results.NCCLRow) *float64 {
	var sum float64
	var n int
	for _, r := range rows {
		for _, tm := range []results.Timing{r.OOP, r.IP} {
			if tm.BusBWGBs != nil {
				sum += *tm.BusBWGBs
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	avg := sum / float64(n)
	return &avg
}
