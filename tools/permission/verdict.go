package permission

// Kinds of Check.
const (
	KindCommand  = "command"  // a simple command, judged by the bash rules
	KindRedirect = "redirect" // an output redirection: an edit of its target
	KindWrite    = "write"    // a file operand a program writes or removes (tee, touch, rm): an edit of it
	KindPath     = "path"     // an argument or input naming a path outside the work tree
	KindSyntax   = "syntax"   // a construct that cannot be judged statically
)

// Check is one thing found in a command (see bashcheck) or one path judged and the decision on it.
type Check struct {
	Kind     string   `json:"kind"`
	Subject  string   `json:"subject"` // the normalised command or the redirection target
	Decision Decision `json:"decision"`
}

// Verdict is the decision on a whole bash command: allowed only when at
// least one check was made and every check allows.
type Verdict struct {
	Allowed bool    `json:"allowed"`
	Command string  `json:"command"`
	Reason  string  `json:"reason"`
	Checks  []Check `json:"checks"`
}

// Denied returns the first check that denies, if any.
func (v Verdict) Denied() (Check, bool) {
	for _, c := range v.Checks {
		if !c.Decision.Allowed {
			return c, true
		}
	}
	return Check{}, false
}

// DeniedAll returns every check that denies, in command order.
func (v Verdict) DeniedAll() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Decision.Allowed {
			out = append(out, c)
		}
	}
	return out
}
