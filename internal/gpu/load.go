package gpu

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// binding names one C function and the Go function variable purego fills in.
type binding struct {
	name string
	fn   any
}

// open loads path and registers every binding, failing on the first missing symbol.
func open(path string, bs []binding) (uintptr, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", path, err)
	}
	for _, b := range bs {
		sym, err := purego.Dlsym(h, b.name)
		if err != nil {
			return 0, fmt.Errorf("load %s: symbol %s: %w", path, b.name, err)
		}
		purego.RegisterFunc(b.fn, sym)
	}
	return h, nil
}
