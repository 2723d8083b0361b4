package main

import "errors"

// ErrDenied is the error of a `policy check` whose query the task's
// permissions deny (exit 1, printed as the explanation only).
var ErrDenied = errors.New("denied by the task's permissions")
