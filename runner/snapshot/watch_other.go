//go:build !linux

package snapshot

import "errors"

// watcher is Linux's inotify watch; elsewhere there is none, and
// TrackChanged walks the whole tree (saying "no watcher").
type watcher struct{}

// newWatcher fails: only Linux has a watcher.
func newWatcher(string) (*watcher, error) {
	return nil, errors.New("inotify is Linux only")
}

func (*watcher) add(string, string)       {}
func (*watcher) reset()                   {}
func (*watcher) take() ([]string, string) { return nil, "no watcher" }
func (*watcher) close() error             { return nil }
