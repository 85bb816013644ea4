// Package capped bounds what sparkrig holds: the files a user names (a
// hostfile, an ssh_config, a key, a result to compare, a model config) are
// read as regular files only, never more than a command can need, so
// /dev/zero or a FIFO named by mistake gets one clear error instead of
// exhausting memory or hanging; and a command's output is kept in a Buffer
// of a fixed size, whatever transport ran it.
package capped

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
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

// Open opens a file a user named as an input to stream: a regular file, or
// a pipe where pipes is true (`sparkrig analyze <(zcat log.gz)`). Anything
// else — a character device such as /dev/zero, a socket, a directory, and a
// named pipe where pipes is false — is refused by its type before a byte is
// read, so a daemon or a script cannot hang or fill memory on it.
func Open(path string, pipes bool) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			pe.Op = "open" // what the user asked for, whatever looked first
		}
		return nil, err
	}
	if err := streamable(path, st.Mode(), pipes); err != nil {
		return nil, err
	}
	// Opened without waiting for a writer, in case the path became a FIFO
	// since the Stat; only a pipe the caller takes is opened to wait.
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if pipes && st.Mode()&os.ModeNamedPipe != 0 {
		flags = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err == nil {
		err = streamable(path, st.Mode(), pipes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func streamable(path string, m os.FileMode, pipes bool) error {
	why := ""
	switch {
	case m.IsRegular(), pipes && m&os.ModeNamedPipe != 0:
		return nil
	case m.IsDir():
		why = "is a directory"
	case m&os.ModeCharDevice != 0:
		why = "is a character device, not a file"
	case m&os.ModeDevice != 0:
		why = "is a block device, not a file"
	case m&os.ModeNamedPipe != 0:
		why = "is a named pipe, not a regular file"
	case m&os.ModeSocket != 0:
		why = "is a socket, not a file"
	default:
		why = "is not a regular file"
	}
	return &os.PathError{Op: "open", Path: path, Err: errors.New(why)}
}
