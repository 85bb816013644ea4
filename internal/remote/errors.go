// Package remote reaches nodes over SSH the way the user's OpenSSH does
// (~/.ssh/config, ssh-agent, known_hosts), expands host lists (pdsh ranges,
// mpirun hostfiles), and fans work out to many hosts with bounded concurrency
// and deadlines, so that one bad host never holds up the others.
package remote

import "errors"

// Sentinel errors for errors.Is; the returned errors carry the details.
var (
	// ErrUnreachable: no TCP connection (refused, no route, timed out).
	ErrUnreachable = errors.New("unreachable")
	// ErrHostKey: the host key is unknown or differs from known_hosts.
	ErrHostKey = errors.New("host key not trusted")
	// ErrAuth: the server refused every key offered.
	ErrAuth = errors.New("authentication refused")
	// ErrTimeout: the host connected but did not finish before its deadline.
	ErrTimeout = errors.New("timed out")
	// ErrInterrupted: the run was interrupted (SIGINT, SIGTERM) before the
	// host finished.
	ErrInterrupted = errors.New("interrupted")
	// ErrDropped: the connection was lost while a command ran.
	ErrDropped = errors.New("connection dropped")
	// ErrTooMuchOutput: a command printed more than the caller keeps.
	ErrTooMuchOutput = errors.New("too much output")
)
