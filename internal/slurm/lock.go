package slurm

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// DefaultLockFile is where the health check takes its lock: /run is the
// node's own, emptied at boot.
const DefaultLockFile = "/run/sparkrig-slurm-health.lock"

// ErrLocked means another health check holds the lock.
var ErrLocked = errors.New("another sparkrig slurm health check is running")

// Lock takes an exclusive flock on path (created if need be) without
// waiting, so two health checks never read and change the node's state at
// once; unlock releases it. The kernel releases it when the process ends,
// however it ends.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
