package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// errNotRegular is what noFollowFS answers for anything but a regular file
// or a directory.
var errNotRegular = errors.New("not a regular file")

// noFollowFS is a directory snapshot as a file system that opens regular
// files and directories only: a symlink is not followed (O_NOFOLLOW), and a
// FIFO or device is opened without blocking (O_NONBLOCK) and refused, so
// nothing swapped in after the walk listed it can hang or flood the read.
type noFollowFS string

func (d noFollowFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	p := filepath.Join(string(d), filepath.FromSlash(name))
	open := openNoFollow
	if name == "." {
		open = openDir // the directory the user named, a symlink or not
	}
	f, err := open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d noFollowFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	return os.ReadDir(filepath.Join(string(d), filepath.FromSlash(name)))
}

// openRegular opens p, following symlinks the user named, but only when it
// is a regular file; a FIFO or device is refused without blocking.
func openRegular(p string) (*os.File, error) {
	return openChecked(p, syscall.O_NONBLOCK, false)
}

func openDir(p string) (*os.File, error) {
	return openChecked(p, syscall.O_NONBLOCK, true)
}

func openNoFollow(p string) (*os.File, error) {
	return openChecked(p, syscall.O_NONBLOCK|syscall.O_NOFOLLOW, true)
}

func openChecked(p string, flags int, dirOK bool) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &fs.PathError{Op: "open", Path: p, Err: errNotRegular}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() && !(dirOK && st.IsDir()) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: errNotRegular}
	}
	return f, nil
}
