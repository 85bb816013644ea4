package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Node is one node's capture for Run: its snapshot, or why there is none.
type Node struct {
	Host string
	Snap *Snapshot
	Err  error
}

// RunOptions are the inputs of the snapshot command's pipeline (Run).
type RunOptions struct {
	// Output is where the snapshot goes: NAME.tar.gz (or .tgz) for an
	// archive, else a directory; with PerHost a directory that receives
	// one HOST.tar.gz per node. Force replaces snapshots already there.
	Output  string
	PerHost bool
	Force   bool
	// Capture captures the nodes (this machine, or every host over the
	// command's runner), anonymized when asked. It is handed in: capture
	// and acquire build on this package. With PerHost, write is set: a
	// node handed to it is written at once (Wrote or Failed hear it) and
	// can be released; the nodes Capture returns are written after.
	Capture func(ctx context.Context, write WriteFunc) ([]Node, error)
	// Wrote hears each snapshot written, with its Summary; Failed each
	// node that was not, with why.
	Wrote  func(path, summary string)
	Failed func(host string, err error)
}

// WriteFunc writes one node's snapshot into the output directory and
// says where; ok is false where it was not written. It may be called from
// several goroutines.
type WriteFunc func(n Node) (w Written, ok bool)

// Run is the snapshot command's pipeline: the target checked (a snapshot
// is replaced only with Force, a directory that holds anything else never
// written into), the nodes captured, and each one's snapshot written. A
// node that fails does not stop the others; Run returns how many failed.
// An error is a target that cannot be written at all.
func Run(ctx context.Context, o RunOptions) (failed int, err error) {
	if o.PerHost {
		if IsArchiveName(o.Output) {
			return 0, fmt.Errorf("with --hosts, -o names a directory for one HOST.tar.gz per node, not an archive (%s)", o.Output)
		}
		if st, err := os.Stat(o.Output); err == nil && !st.IsDir() {
			return 0, fmt.Errorf("%s exists and is not a directory", o.Output)
		}
	} else if err := CheckTarget(o.Output, o.Force); err != nil {
		return 0, err
	}
	var write WriteFunc
	var mu sync.Mutex // the callbacks and the count, for writes from many workers
	if o.PerHost {
		if err := os.MkdirAll(o.Output, 0o700); err != nil {
			return 0, err
		}
		write = func(n Node) (Written, bool) {
			w, summary, err := writeNode(n, o)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				o.Failed(n.Host, err)
				return w, false
			}
			o.Wrote(w.Path, summary)
			return w, true
		}
	}
	nodes, err := o.Capture(ctx, write)
	if err != nil {
		return failed, err
	}
	if !o.PerHost {
		if len(nodes) != 1 || nodes[0].Snap == nil {
			return 0, errors.New("no snapshot captured")
		}
		if err := nodes[0].Snap.Write(o.Output); err != nil {
			return 0, err
		}
		o.Wrote(o.Output, nodes[0].Snap.Summary())
		return 0, nil
	}
	for _, n := range nodes {
		write(n)
	}
	return failed, nil
}

// writeNode writes one node's archive into the Output directory.
func writeNode(n Node, o RunOptions) (Written, string, error) {
	if n.Err != nil || n.Snap == nil {
		if n.Err == nil {
			return Written{}, "", errors.New("no evidence")
		}
		return Written{}, "", n.Err
	}
	dst := filepath.Join(o.Output, SafeName(n.Snap.Manifest.Host)+".tar.gz")
	if err := CheckTarget(dst, o.Force); err != nil {
		return Written{}, "", err
	}
	w, err := n.Snap.WriteArchive(dst)
	if err != nil {
		return Written{}, "", err
	}
	return w, n.Snap.Summary(), nil
}

// CheckTarget refuses to overwrite a snapshot without force, and to write
// a directory snapshot into a directory that holds anything else.
func CheckTarget(p string, force bool) error {
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return nil
		}
		if _, err := os.Stat(filepath.Join(p, "manifest.json")); err != nil {
			return fmt.Errorf("%s is a directory that is not a snapshot; name a new or empty one", p)
		}
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file", p)
	}
	if !force {
		return fmt.Errorf("%s exists; add --force to replace it", p)
	}
	return nil
}

// Summary is "312 items (41 missing, 2 denied, 0 errors) in 24 ms".
func (s *Snapshot) Summary() string {
	by := map[string]int{}
	for _, it := range s.Manifest.Items {
		by[it.Status]++
	}
	return fmt.Sprintf("%d items (%d missing, %d denied, %d errors) in %d ms",
		len(s.Manifest.Items), by[StatusMissing], by[StatusDenied], by[StatusError], s.Manifest.DurationMS)
}
