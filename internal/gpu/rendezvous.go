package gpu

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/sparkrig/sparkrig/internal/results"
)

// The rendezvous hands NCCL's unique id from rank 0 to the other ranks over
// plain TCP, so multi-process and multi-node runs need no MPI. Rank 0 listens;
// every other rank connects and sends a hello (magic, its rank, the rank
// count, and a JSON description of its GPU for rank 0's table); rank 0 checks
// it and answers with the 128-byte id.
//
//	hello: "SPRKID01" | rank uint32 BE | nranks uint32 BE | n uint16 BE | n bytes of JSON (results.NCCLDevice)
//	reply: ncclUniqueId (128 bytes)
const rendezvousMagic = "SPRKID01"

// maxDeviceJSON bounds the device description a peer may send.
const maxDeviceJSON = 4096

// ServeUniqueID answers nranks−1 distinct ranks on ln with id, then returns
// every rank's device as the peers described it (index = rank; rank 0's entry
// is left empty for the caller). A hello with the wrong magic, rank count, a
// repeated rank or a bad description is refused (connection closed) and does
// not count.
func ServeUniqueID(ctx context.Context, ln net.Listener, id UniqueID, nranks int) ([]results.NCCLDevice, error) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	devs := make([]results.NCCLDevice, nranks)
	seen := map[uint32]bool{}
	for len(seen) < nranks-1 {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("rendezvous: %d of %d ranks joined: %w", len(seen)+1, nranks, ctx.Err())
			}
			return nil, fmt.Errorf("rendezvous: accept: %w", err)
		}
		if r, d, err := serveOne(c, id, nranks, seen); err == nil {
			seen[r] = true
			devs[r] = d
		}
	}
	return devs, nil
}

func serveOne(c net.Conn, id UniqueID, nranks int, seen map[uint32]bool) (uint32, results.NCCLDevice, error) {
	defer c.Close()
	var d results.NCCLDevice
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hello [len(rendezvousMagic) + 10]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		return 0, d, err
	}
	rank := binary.BigEndian.Uint32(hello[8:])
	n := binary.BigEndian.Uint32(hello[12:])
	size := binary.BigEndian.Uint16(hello[16:])
	switch {
	case string(hello[:8]) != rendezvousMagic:
		return 0, d, errors.New("bad magic")
	case int(n) != nranks || rank == 0 || rank >= n || seen[rank]:
		return 0, d, fmt.Errorf("rank %d of %d refused", rank, n)
	case size > maxDeviceJSON:
		return 0, d, fmt.Errorf("device description of %d bytes", size)
	}
	desc := make([]byte, size)
	if _, err := io.ReadFull(c, desc); err != nil {
		return 0, d, err
	}
	if err := json.Unmarshal(desc, &d); err != nil {
		return 0, d, fmt.Errorf("device description: %w", err)
	}
	d.Rank = int(rank)
	_, err := c.Write(id[:])
	return rank, d, err
}

// FetchUniqueID connects to rank 0 at addr as rank of nranks and returns the
// id, retrying the connection until ctx ends (rank 0 may start later).
func FetchUniqueID(ctx context.Context, addr string, rank, nranks int, self results.NCCLDevice) (UniqueID, error) {
	var id UniqueID
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			id, err = fetchOne(ctx, c, rank, nranks, self)
			if err == nil {
				return id, nil
			}
		}
		select {
		case <-ctx.Done():
			return id, fmt.Errorf("rendezvous with %s: %v (%w)", addr, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func fetchOne(ctx context.Context, c net.Conn, rank, nranks int, self results.NCCLDevice) (UniqueID, error) {
	defer c.Close()
	var id UniqueID
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	hello := make([]byte, 0, 16)
	hello = append(hello, rendezvousMagic...)
	hello = binary.BigEndian.AppendUint32(hello, uint32(rank))
	hello = binary.BigEndian.AppendUint32(hello, uint32(nranks))
	desc, err := json.Marshal(self)
	if err != nil || len(desc) > maxDeviceJSON {
		return id, fmt.Errorf("device description: %d bytes, %v", len(desc), err)
	}
	hello = binary.BigEndian.AppendUint16(hello, uint16(len(desc)))
	hello = append(hello, desc...)
	if _, err := c.Write(hello); err != nil {
		return id, err
	}
	if _, err := io.ReadFull(c, id[:]); err != nil {
		return id, fmt.Errorf("read id: %w", err)
	}
	return id, nil
}

// RankOptions places this process in a multi-process communicator.
type RankOptions struct {
	Rank, NRanks int
	Device       int
	Addr         string // rank 0's rendezvous address, host:port
}

// RunRank joins a communicator of o.NRanks processes (one GPU each) through the
// rendezvous at o.Addr and runs the sweep. Every rank runs the same sweep and
// measures its own times; rank 0's tables list every rank's device and count
// the nodes, so they are the ones to report.
func (s *Stack) RunRank(ctx context.Context, ro RankOptions, o CollectiveOptions, h Hooks) ([]results.NCCLTable, error) {
	defer lockThread()()
	nc, err := s.NCCL()
	if err != nil {
		return nil, err
	}
	var id UniqueID
	var peers []results.NCCLDevice
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	self := s.describe(ro.Rank, ro.Device)
	if ro.Rank == 0 {
		if id, err = nc.UniqueID(); err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", ro.Addr)
		if err != nil {
			return nil, fmt.Errorf("rendezvous: %w", err)
		}
		defer ln.Close()
		if peers, err = ServeUniqueID(rctx, ln, id, ro.NRanks); err != nil {
			return nil, err
		}
		peers[0] = self
	} else if id, err = FetchUniqueID(rctx, ro.Addr, ro.Rank, ro.NRanks, self); err != nil {
		return nil, err
	}
	g, err := s.NewRankGroup(id, ro.NRanks, ro.Rank, ro.Device)
	if err != nil {
		return nil, err
	}
	g.peers = peers
	defer g.Close()
	return g.runAll(ctx, o, h)
}

// describe is this process's device line for rank 0's table.
func (s *Stack) describe(rank, dev int) results.NCCLDevice {
	host, _ := os.Hostname()
	bus, _ := s.RT.PCIBusID(dev)
	return results.NCCLDevice{Rank: rank, Host: host, PID: os.Getpid(), Device: dev, PCIBus: bus, Name: s.Driver.DeviceName(dev)}
}
