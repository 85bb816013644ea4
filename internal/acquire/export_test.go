package acquire

import (
	"time"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// StallSnapshots makes reading the snapshot named stalled block until the
// test ends, with deadline as the per-snapshot bound, and restores both.
func StallSnapshots(stalled string, deadline time.Duration) (restore func()) {
	read, d := readSnapshot, snapshotDeadline
	block := make(chan struct{})
	readSnapshot = func(p string) (*snapshot.Snapshot, error) {
		if p == stalled {
			<-block
		}
		return read(p)
	}
	snapshotDeadline = deadline
	return func() { close(block); readSnapshot, snapshotDeadline = read, d }
}
