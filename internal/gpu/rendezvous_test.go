package gpu

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"
)

func testID() UniqueID {
	var id UniqueID
	for i := range id {
		id[i] = byte(i*7 + 3)
	}
	return id
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestRendezvousHandsEveryRankTheID(t *testing.T) {
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const nranks = 4
	served := make(chan error, 1)
	go func() { served <- ServeUniqueID(ctx, ln, testID(), nranks) }()
	var wg sync.WaitGroup
	got := make([]UniqueID, nranks)
	errs := make([]error, nranks)
	for r := 1; r < nranks; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[r], errs[r] = FetchUniqueID(ctx, ln.Addr().String(), r, nranks)
		}()
	}
	wg.Wait()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	for r := 1; r < nranks; r++ {
		if errs[r] != nil || got[r] != testID() {
			t.Errorf("rank %d: err %v, id matches %v", r, errs[r], got[r] == testID())
		}
	}
}

func TestRendezvousClientWaitsForServer(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close() // rank 0 not up yet
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var id UniqueID
	go func() {
		var err error
		id, err = FetchUniqueID(ctx, addr, 1, 2)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	defer ln2.Close()
	go ServeUniqueID(ctx, ln2, testID(), 2)
	if err := <-done; err != nil || id != testID() {
		t.Fatalf("late server: err %v", err)
	}
}

// hello sends a raw hello and reports how many bytes came back.
func hello(t *testing.T, addr, magic string, rank, nranks uint32) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := append([]byte(magic), binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, rank), nranks)...)
	c.Write(b)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 256)
	n := 0
	for {
		k, err := c.Read(buf[n:])
		n += k
		if err != nil {
			return n
		}
	}
}

func TestRendezvousRefusesStrangers(t *testing.T) {
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeUniqueID(ctx, ln, testID(), 3) }()
	addr := ln.Addr().String()
	for _, tt := range []struct {
		name         string
		magic        string
		rank, nranks uint32
	}{
		{"bad magic", "HTTP/1.1", 1, 3},
		{"wrong rank count", rendezvousMagic, 1, 4},
		{"rank 0", rendezvousMagic, 0, 3},
		{"rank out of range", rendezvousMagic, 3, 3},
	} {
		if n := hello(t, addr, tt.magic, tt.rank, tt.nranks); n != 0 {
			t.Errorf("%s: got %d bytes, want the connection closed", tt.name, n)
		}
	}
	if n := hello(t, addr, rendezvousMagic, 1, 3); n != UniqueIDSize {
		t.Fatalf("rank 1: %d bytes", n)
	}
	if n := hello(t, addr, rendezvousMagic, 1, 3); n != 0 {
		t.Errorf("rank 1 again: got %d bytes, want refusal", n)
	}
	if n := hello(t, addr, rendezvousMagic, 2, 3); n != UniqueIDSize {
		t.Fatalf("rank 2: %d bytes", n)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

func TestRendezvousTimesOut(t *testing.T) {
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := ServeUniqueID(ctx, ln, testID(), 2)
	if err == nil || err.Error() != "rendezvous: 1 of 2 ranks joined: context deadline exceeded" {
		t.Fatalf("got %v", err)
	}
}
