package event

// NetworkAccess is what the sandbox's allow-list proxy decided for one
// host:port during the run (sandbox.network.allow): one event per
// host:port, written before run.finished, with its request count, not
// one per request. Allowed false: the requests got 403 Forbidden.
type NetworkAccess struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Requests counts the CONNECT tunnels and plain HTTP requests.
	Requests int `json:"requests"`
	// Failed counts the allowed requests whose upstream could not be
	// reached (502 Bad Gateway); Error is the first such error.
	Failed int    `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// EventType is "network.access".
func (NetworkAccess) EventType() string { return "network.access" }
