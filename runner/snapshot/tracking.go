package snapshot

// Tracking says how a TrackChanged call found what changed: "watch" (the
// paths inotify reported since the last Track were re-stat'ed) or "full"
// (a full walk), with the reason for a full walk.
type Tracking struct {
	Method string // "watch" or "full"
	Reason string // why a full walk, empty for "watch"
}

// String is "watch" or "full (reason)", as the patch event shows it.
func (t Tracking) String() string {
	if t.Reason == "" {
		return t.Method
	}
	return t.Method + " (" + t.Reason + ")"
}
