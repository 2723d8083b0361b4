package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Refresh is what the sandbox changed before a command: protected files
// appeared since the covers were set up (Policy.Protected), or, with
// Landlock only, entries appeared in a directory whose children are
// granted one by one (it holds a hidden file). The zygotes set up with
// the old covers were stopped; the command runs in a new one.
type Refresh struct {
	// Hidden are the paths newly hidden: work-tree-relative slash paths
	// inside the work tree, else absolute.
	Hidden []string `json:"hidden,omitempty"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// refresh brings the covers (and, with Landlock only, the read grants) up
// to date with the work tree before a command: the watch's new protected
// files are hidden, and when the covers or grants change, the idle
// zygotes (set up with the old ones) are stopped, so the command starts
// in a new one. It returns nil when nothing changed. Commands running
// meanwhile keep the covers they started with.
func (s *Sandbox) refresh() *Refresh {
	s.mu.Lock()
	if s.mode == ModeOff || s.watch == nil && s.landlockListed == nil {
		s.mu.Unlock()
		return nil // mode off hides nothing (its watch serves ProtectedFound)
	}
	s.drain()
	found, walked := s.pending, s.walked
	s.pending, s.walked = nil, ""
	for _, p := range found {
		if !slices.Contains(s.hidden, p) {
			s.hidden = append(s.hidden, p)
		}
	}
	stale := s.listedStale()
	if len(found) == 0 && !stale {
		s.mu.Unlock()
		return nil
	}
	old := s.cfg
	s.setCovers(computeCovers(s.hidden, s.keep))
	if slices.Equal(old.Covers, s.cfg.Covers) && slices.Equal(old.Read.Dirs, s.cfg.Read.Dirs) &&
		slices.Equal(old.Read.Files, s.cfg.Read.Files) && slices.Equal(old.Read.Listed, s.cfg.Read.Listed) {
		s.mu.Unlock()
		return nil
	}
	s.gen++
	ref := &Refresh{}
	for _, c := range s.cfg.Covers {
		if !slices.Contains(old.Covers, c) {
			ref.Hidden = append(ref.Hidden, s.display(c.Path))
		}
	}
	switch {
	case len(ref.Hidden) > 0:
		ref.Reason = "protected files appeared since the sandbox was set up: a new zygote hides them from this command on"
	default:
		ref.Reason = "entries appeared in a directory that holds a hidden file (Landlock only grants reading such a directory's children one by one): a new zygote grants reading them"
	}
	if walked != "" {
		ref.Reason += " (the work tree was walked whole: " + walked + ")"
	}
	s.mu.Unlock()
	s.zygotes.retire()
	return ref
}

// drain moves the protected files the watch found since the last drain
// to s.pending (for the next refresh) and s.found. s.mu is held.
func (s *Sandbox) drain() {
	if s.watch == nil {
		return
	}
	found, walked := s.watch.take()
	if walked != "" {
		s.walked = walked
	}
	for _, p := range found {
		if !slices.Contains(s.pending, p) {
			s.pending = append(s.pending, p)
		}
		if !slices.Contains(s.found, p) {
			s.found = append(s.found, p)
		}
	}
}

// ProtectedFound returns every protected file (Policy.Protected) found in
// the work tree so far, there when the sandbox was set up or appeared
// since, in the order found (absolute paths; one removed since stays
// listed), and true; or nil and false when nothing watches the work tree
// (no Protected, or off Linux): the caller must walk it. With mode off
// the watch runs too (nothing is hidden: the caller redacts what it
// learns). Cheap when nothing appeared: one read of the inotify queue.
// The files it finds are hidden from the next command on, as before.
func (s *Sandbox) ProtectedFound() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch == nil {
		return nil, false
	}
	s.drain()
	return slices.Clone(s.found), true
}

// setCovers sets the helper's covers and, with Landlock only, the read
// grants that reach everything else, noting the names in each listed
// directory inside a writable path (listedStale compares them). s.mu is
// held (or s not yet shared).
func (s *Sandbox) setCovers(covers []cover) {
	s.cfg.Covers, s.cfg.Read, s.landlockListed = covers, readGrants{}, nil
	if slices.Contains(s.layers, LayerNamespaces) || len(covers) == 0 {
		return
	}
	s.cfg.Read = computeReadGrants(covers)
	s.landlockListed = map[string][]string{}
	for _, d := range s.cfg.Read.Listed {
		if !slices.ContainsFunc(s.cfg.Writable, func(w string) bool { return within(d, w) }) {
			continue // outside what commands write: it does not change under them
		}
		s.landlockListed[d] = dirNames(d)
	}
}

// listedStale reports whether a listed directory gained an entry since
// its grants were computed (Landlock only: the entry is unreadable until
// the grants are computed again). s.mu is held.
func (s *Sandbox) listedStale() bool {
	for d, names := range s.landlockListed {
		for _, n := range dirNames(d) {
			if _, found := slices.BinarySearch(names, n); !found {
				return true
			}
		}
	}
	return false
}

// dirNames lists the names in directory d, sorted (nil when it cannot be
// read).
func dirNames(d string) []string {
	f, err := os.Open(d)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	slices.Sort(names)
	return names
}

// display is p relative to the work tree (slash-separated) when it lies
// inside it, else p.
func (s *Sandbox) display(p string) string {
	if s.workTree == "" {
		return p
	}
	rel, err := filepath.Rel(s.workTree, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// Hidden lists every path the sandbox hides now (absolute): the policy's,
// the daemons' sockets (with namespaces) and the protected files found in
// the work tree so far.
func (s *Sandbox) Hidden() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hidden)
}

// config is the helper's configuration for the next zygote or helper and
// the generation of its covers.
func (s *Sandbox) config() (helperConfig, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg, s.gen
}

// generation is the current covers' generation (a zygote of an older one
// is stopped instead of reused).
func (s *Sandbox) generation() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}
