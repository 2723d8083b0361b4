package pipeline

import "runtime/debug"

// stampedVersion is set by the linker (-X) when the GitHub Action builds
// the runner from a downloaded copy of its source, which has no VCS data:
// the ref the action was used at. It is never assigned at run time.
var stampedVersion string

// Version returns the runner's version: the version the build stamped
// (the action's ref), else the main module's version when built from a
// tagged module, else the VCS revision (with "-dirty" when the tree was
// modified), else "devel".
func Version() string {
	if stampedVersion != "" {
		return stampedVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "devel+" + rev
}
