package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sparkrig/sparkrig/internal/results"
)

// The rendezvous hands NCCL's unique id from rank 0 to the other ranks over
// plain TCP, so multi-process and multi-node runs need no MPI. Rank 0 listens;
// every other rank connects and sends a hello (magic, its rank, the rank
// count); rank 0 checks it and answers with the 128-byte id.
//
//	hello: "SPRKID01" | rank uint32 BE | nranks uint32 BE
//	reply: ncclUniqueId (128 bytes)
const rendezvousMagic = "SPRKID01"

// ServeUniqueID answers nranks−1 distinct ranks on ln with id, then returns.
// A hello with the wrong magic, rank count or a repeated rank is refused
// (connection closed) and does not count.
func ServeUniqueID(ctx context.Context, ln net.Listener, id UniqueID, nranks int) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	seen := map[uint32]bool{}
	for len(seen) < nranks-1 {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("rendezvous: %d of %d ranks joined: %w", len(seen)+1, nranks, ctx.Err())
			}
			return fmt.Errorf("rendezvous: accept: %w", err)
		}
		r, err := serveOne(c, id, nranks, seen)
		if err == nil {
			seen[r] = true
		}
	}
	return nil
}

func serveOne(c net.Conn, id UniqueID, nranks int, seen map[uint32]bool) (uint32, error) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hello [len(rendezvousMagic) + 8]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		return 0, err
	}
	rank := binary.BigEndian.Uint32(hello[8:])
	n := binary.BigEndian.Uint32(hello[12:])
	switch {
	case string(hello[:8]) != rendezvousMagic:
		return 0, errors.New("bad magic")
	case int(n) != nranks || rank == 0 || rank >= n || seen[rank]:
		return 0, fmt.Errorf("rank %d of %d refused", rank, n)
	}
	_, err := c.Write(id[:])
	return rank, err
}

// FetchUniqueID connects to rank 0 at addr as rank of nranks and returns the
// id, retrying the connection until ctx ends (rank 0 may start later).
func FetchUniqueID(ctx context.Context, addr string, rank, nranks int) (UniqueID, error) {
	var id UniqueID
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			id, err = fetchOne(ctx, c, rank, nranks)
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

func fetchOne(ctx context.Context, c net.Conn, rank, nranks int) (UniqueID, error) {
	defer c.Close()
	var id UniqueID
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	hello := make([]byte, 0, 16)
	hello = append(hello, rendezvousMagic...)
	hello = binary.BigEndian.AppendUint32(hello, uint32(rank))
	hello = binary.BigEndian.AppendUint32(hello, uint32(nranks))
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
// rendezvous at o.Addr and runs the sweep. Every rank runs the same sweep;
// each measures its own times (rank 0's are the ones to report).
func (s *Stack) RunRank(ctx context.Context, ro RankOptions, o CollectiveOptions, h Hooks) ([]results.NCCLTable, error) {
	defer lockThread()()
	nc, err := s.NCCL()
	if err != nil {
		return nil, err
	}
	var id UniqueID
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if ro.Rank == 0 {
		if id, err = nc.UniqueID(); err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", ro.Addr)
		if err != nil {
			return nil, fmt.Errorf("rendezvous: %w", err)
		}
		defer ln.Close()
		if err := ServeUniqueID(rctx, ln, id, ro.NRanks); err != nil {
			return nil, err
		}
	} else if id, err = FetchUniqueID(rctx, ro.Addr, ro.Rank, ro.NRanks); err != nil {
		return nil, err
	}
	g, err := s.NewRankGroup(id, ro.NRanks, ro.Rank, ro.Device)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return g.runAll(ctx, o, h)
}
