// Package capped bounds what sparkrig holds: the files a user names (a
// hostfile, an ssh_config, a key, a result to compare, a model config) are
// read as regular files only, never more than a command can need, so
// /dev/zero or a FIFO named by mistake gets one clear error instead of
// exhausting memory or hanging; and a command's output is kept in a Buffer
// of a fixed size, whatever transport ran it.
package capped

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads path when it is a regular file of at most limit bytes.
// /dev/null reads as empty (ssh -F /dev/null is how one asks for no config).
func ReadFile(path string, limit int64) ([]byte, error) {
	if path == os.DevNull {
		return []byte{}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d it may have", path, st.Size(), limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the %d bytes it may have", path, limit)
	}
	return b, nil
}
