package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/results"
)

func peerDevice(r int) results.NCCLDevice {
	return results.NCCLDevice{Rank: r, Host: fmt.Sprintf("node%d", r), PID: 100 + r, Device: 0, PCIBus: "000f:01:00.0", Name: "NVIDIA GB10"}
}

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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const nranks = 4
	served := make(chan error, 1)
	var devs []results.NCCLDevice
	go func() {
		var err error
		devs, err = ServeUniqueID(ctx, ln, testID(), nranks)
		served <- err
	}()
	var wg sync.WaitGroup
	got := make([]UniqueID, nranks)
	errs := make([]error, nranks)
	for r := 1; r < nranks; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[r], errs[r] = FetchUniqueID(ctx, ln.Addr().String(), r, nranks, peerDevice(r))
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
	want := []results.NCCLDevice{{}, peerDevice(1), peerDevice(2), peerDevice(3)}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if n := countHosts(devs[1:]); n != 3 {
		t.Errorf("countHosts = %d, want 3", n)
	}
}

func TestRendezvousClientWaitsForServer(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close() // rank 0 not up yet
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var id UniqueID
	go func() {
		var err error
		id, err = FetchUniqueID(ctx, addr, 1, 2, peerDevice(1))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	defer ln2.Close()
	go ServeUniqueID(ctx, ln2, testID(), 2) //nolint:errcheck // the fetch result is what is tested
	if err := <-done; err != nil || id != testID() {
		t.Fatalf("late server: err %v", err)
	}
}

// hello sends a raw hello and reports how many bytes came back.
func hello(t *testing.T, addr, magic string, rank, nranks uint32, desc string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := append([]byte(magic), binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, rank), nranks)...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(desc)))
	c.Write(append(b, desc...))
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		_, err := ServeUniqueID(ctx, ln, testID(), 3)
		served <- err
	}()
	addr := ln.Addr().String()
	const dev = `{"host":"node1"}`
	for _, tt := range []struct {
		name         string
		magic        string
		rank, nranks uint32
		desc         string
	}{
		{"bad magic", "HTTP/1.1", 1, 3, dev},
		{"wrong rank count", rendezvousMagic, 1, 4, dev},
		{"rank 0", rendezvousMagic, 0, 3, dev},
		{"rank out of range", rendezvousMagic, 3, 3, dev},
		{"bad description", rendezvousMagic, 1, 3, `{"host":`},
	} {
		if n := hello(t, addr, tt.magic, tt.rank, tt.nranks, tt.desc); n != 0 {
			t.Errorf("%s: got %d bytes, want the connection closed", tt.name, n)
		}
	}
	if n := hello(t, addr, rendezvousMagic, 1, 3, dev); n != UniqueIDSize {
		t.Fatalf("rank 1: %d bytes", n)
	}
	if n := hello(t, addr, rendezvousMagic, 1, 3, dev); n != 0 {
		t.Errorf("rank 1 again: got %d bytes, want refusal", n)
	}
	if n := hello(t, addr, rendezvousMagic, 2, 3, "{}"); n != UniqueIDSize {
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
	_, err := ServeUniqueID(ctx, ln, testID(), 2)
	if err == nil || err.Error() != "rendezvous: 1 of 2 ranks joined: context deadline exceeded" {
		t.Fatalf("got %v", err)
	}
}
