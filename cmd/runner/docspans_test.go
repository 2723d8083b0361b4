package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/seed43ef5acb/runner/internal/doclink"
)

// notCommands are inline spans that start with "runner " but show output,
// not a command line.
var notCommands = map[string]bool{
	"runner vX.Y.Z": true, // what runner version prints
}

var runnerSpan = regexp.MustCompile("`((?:bin/)?runner\\s[^`]*)`")

// TestDocInlineCommands: every inline `runner …` span of the docs names
// commands and flags that exist, so a renamed or removed flag cannot
// linger in the prose. Placeholders (<command>, COMMAND, …, [x | y]) are
// skipped; "a|b" in a command's place must name commands on each side.
func TestDocInlineCommands(t *testing.T) {
	root := visibleCommands(t)[0]
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		doc := doclink.StripFences(string(data))
		for _, m := range runnerSpan.FindAllStringSubmatchIndex(doc, -1) {
			words := strings.Fields(doc[m[2]:m[3]]) // a span may wrap
			span := strings.Join(words, " ")
			if notCommands[span] {
				continue
			}
			if msg := checkCommandLine(root, words[1:]); msg != "" {
				t.Errorf("%s:%d: `%s`: %s", page, strings.Count(doc[:m[0]], "\n")+1, span, msg)
			}
		}
	}
}

// checkCommandLine walks words down the command tree from root and checks
// each flag against the command reached and its parents; "" is fine.
func checkCommandLine(root *kong.Node, words []string) string {
	node := root
	for _, w := range words {
		w = strings.Trim(w, "[]()")
		switch {
		case w == "|" || w == "" || w == "…" || strings.HasSuffix(w, "..."):
			continue
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if !hasFlag(node, name) {
				return "runner " + strings.TrimSpace(node.Path()) + " has no flag --" + name
			}
		case strings.HasPrefix(w, "-") && len(w) == 2:
			if !hasShortFlag(node, rune(w[1])) {
				return "runner " + strings.TrimSpace(node.Path()) + " has no flag " + w
			}
		case hasCommands(node):
			if strings.HasPrefix(w, "<") || w == strings.ToUpper(w) {
				return "" // a placeholder for the command: nothing more to check
			}
			alts := strings.Split(w, "|")
			next := child(node, alts[0])
			for _, a := range alts {
				if child(node, a) == nil {
					return "runner " + strings.TrimSpace(node.Path()+" "+a) + " is not a command"
				}
			}
			node = next
		}
	}
	return ""
}

func hasCommands(n *kong.Node) bool {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode {
			return true
		}
	}
	return false
}

func child(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && c.Name == name {
			return c
		}
	}
	return nil
}

func hasFlag(n *kong.Node, name string) bool {
	for ; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

func hasShortFlag(n *kong.Node, short rune) bool {
	for ; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if f.Short == short {
				return true
			}
		}
	}
	return false
}
