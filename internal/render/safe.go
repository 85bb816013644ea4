package render

import (
	"io"

	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// esc starts sparkrig's own colour markers (sanitize.Mark): only the writer
// safe returns turns them into escape sequences, and no input can make one.
var esc = sanitize.Mark

// safe wraps w so a renderer's output is cleaned exactly once.
func safe(w io.Writer) io.Writer { return sanitize.NewWriter(w) }
