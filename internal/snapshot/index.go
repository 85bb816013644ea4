package snapshot

import (
	"sort"
	"strings"
	"sync"
)

// index makes Item, Link and List take constant or logarithmic time, so a
// manifest of many items is read in time linear in their number (facts ask
// for a link or a listing per interface: with a scan each, 40,000 items
// took 36 s).
//
// It is built on first use and kept in step with Manifest.Items: items
// appended since are added, and any other change to the list (a new slice,
// items removed) rebuilds it.
type index struct {
	mu    sync.Mutex
	first *Item  // &Items[0] when built, to notice a replaced list
	n     int    // items indexed
	last  string // kind and name of the last item indexed, to notice an edit before it
	// byKey maps kind+"\x00"+name to the first such item; fileOrLink maps a
	// name to the first file or link item of that name.
	byKey      map[string]int
	fileOrLink map[string]int
	// paths holds the names of captured files and links, sorted once
	// asked for (sorted reports whether it still is).
	paths  []string
	sorted bool
}

func (s *Snapshot) lookup(fn func(ix *index)) {
	ix := &s.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	items := s.Manifest.Items
	var first *Item
	if len(items) > 0 {
		first = &items[0]
	}
	if ix.byKey == nil || first != ix.first || len(items) < ix.n || ix.n > 0 && key(&items[ix.n-1]) != ix.last {
		ix.byKey, ix.fileOrLink, ix.paths, ix.n, ix.sorted = map[string]int{}, map[string]int{}, nil, 0, true
	}
	ix.first = first
	for i := ix.n; i < len(items); i++ {
		it := &items[i]
		k := key(it)
		if _, ok := ix.byKey[k]; !ok {
			ix.byKey[k] = i
		}
		if it.Kind == KindFile || it.Kind == KindLink {
			if _, ok := ix.fileOrLink[it.Name]; !ok {
				ix.fileOrLink[it.Name] = i
			}
			if it.Status == StatusOK {
				ix.paths = append(ix.paths, it.Name)
				ix.sorted = false
			}
		}
	}
	ix.n = len(items)
	if ix.n > 0 {
		ix.last = key(&items[ix.n-1])
	}
	fn(ix)
}

func key(it *Item) string { return it.Kind + "\x00" + it.Name }

// itemIndex returns the position of the item Item would return, or -1.
func (s *Snapshot) itemIndex(kind, name string) int {
	i := -1
	s.lookup(func(ix *index) {
		var ok bool
		if kind == KindFile {
			i, ok = ix.fileOrLink[name]
		} else {
			i, ok = ix.byKey[key(&Item{Kind: kind, Name: name})]
		}
		if !ok {
			i = -1
		}
	})
	return i
}

// children returns the distinct first path segments of captured files and
// links under dir (which ends in '/'), sorted.
func (s *Snapshot) children(dir string) []string {
	var out []string
	s.lookup(func(ix *index) {
		if !ix.sorted {
			sort.Strings(ix.paths)
			ix.sorted = true
		}
		ps := ix.paths
		i := sort.SearchStrings(ps, dir)
		seen := map[string]bool{}
		for i < len(ps) && strings.HasPrefix(ps[i], dir) {
			rest := ps[i][len(dir):]
			child, _, deeper := strings.Cut(rest, "/")
			if child != "" && !seen[child] {
				seen[child] = true
				out = append(out, child)
			}
			if !deeper {
				i++
				continue
			}
			// skip the rest of this child's subtree at once
			sub := dir + child + "/"
			i += sort.Search(len(ps)-i, func(j int) bool { return !strings.HasPrefix(ps[i+j], sub) && ps[i+j] > sub })
		}
	})
	sort.Strings(out)
	return out
}
