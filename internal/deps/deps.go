//go:build tools

// Package deps pins the project's chosen libraries in go.mod while the
// packages that use them are being written. It is never built.
package deps

import (
	_ "github.com/alecthomas/kong"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/cenkalti/backoff/v5"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/go-github/v60/github"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sashabaranov/go-openai"
	_ "github.com/vbauerster/mpb/v8"
	_ "golang.org/x/term"
	_ "gopkg.in/yaml.v3"
	_ "mvdan.cc/sh/v3/syntax"
)
