package spec

import (
	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/tools/sandbox/netproxy"
)

// network decodes "sandbox.network": allow, deny (the default), or
// {allow: [host, host:port, *.domain, ...]}, the allow list served by the
// runner's proxy (tools/sandbox/netproxy). It sets s.Network or s.Allow;
// each bad entry is an error at its position that says how to write it.
func (d *Decoder) network(s *Sandbox, path string, n *yaml.Node) {
	if deref(n).Kind == yaml.MappingNode {
		d.Mapping(path, n, FieldFuncs{
			"allow": func(p string, n *yaml.Node) {
				s.Allow = d.StrList(p, n, func(p string, n *yaml.Node) string {
					v := d.NonEmpty(p, n)
					if v == "" {
						return v
					}
					if _, err := netproxy.ParseEntry(v); err != nil {
						d.ErrorAt(n, "an entry is host, host:port, *.domain or an IP address (\"[v6]:port\"); a host without a port allows 80 and 443",
							"%s: %v", p, err)
					}
					return v
				})
				if deref(n).Kind == yaml.SequenceNode && len(s.Allow) == 0 {
					d.ErrorAt(n, "list the hosts commands may reach, or write network: deny", "%s: the allow list is empty", p)
				}
			},
		})
		return
	}
	switch v := d.Str(path, n); {
	case !isString(n):
	case v == "allow":
		s.Network = true
	case v != "deny":
		d.ErrorAt(n, "use allow, deny (the default) or {allow: [host, host:port, ...]}", "%s: %q is not allow or deny", path, v)
	}
}
