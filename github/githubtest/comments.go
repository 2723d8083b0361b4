package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Comment is an issue or pull request comment the fake keeps.
type Comment struct {
	ID    int64
	Issue int
	User  string
	Body  string
	// Edits counts the PATCHes of its body.
	Edits int
}

// Comments is a stateful fake of a repository's issue comments: listing
// (one page), creating and editing them on any issue, as the sticky
// comment does across several runs. Comments created through the API are
// written by Self.
type Comments struct {
	Self string

	owner, repo, base string
	mu                sync.Mutex
	all               []*Comment
	next              int64
}

// Comments registers the fake for owner/repo (any number of calls).
func (reg *Registry) Comments(owner, repo, self string) *Comments {
	c := &Comments{Self: self, owner: owner, repo: repo, base: "/repos/" + owner + "/" + repo + "/issues/", next: 1000}
	reg.RegisterPrefix(http.MethodGet, c.base, c.list)
	reg.RegisterPrefix(http.MethodPost, c.base, c.create)
	reg.RegisterPrefix(http.MethodPatch, c.base+"comments/", c.edit)
	return c
}

// Add stores a comment by user on issue, as if written earlier.
func (c *Comments) Add(issue int, user, body string) *Comment {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	cm := &Comment{ID: c.next, Issue: issue, User: user, Body: body}
	c.all = append(c.all, cm)
	return cm
}

// On returns the comments on issue, oldest first (copies).
func (c *Comments) On(issue int) []Comment {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Comment
	for _, cm := range c.all {
		if cm.Issue == issue {
			out = append(out, *cm)
		}
	}
	return out
}

func (c *Comments) json(cm *Comment) map[string]any {
	return map[string]any{"id": cm.ID, "body": cm.Body, "user": map[string]any{"login": cm.User},
		"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", c.owner, c.repo, cm.Issue, cm.ID)}
}

// issue parses ".../issues/N/comments".
func (c *Comments) issue(w http.ResponseWriter, r *http.Request) (int, bool) {
	rest := strings.TrimPrefix(r.URL.Path[strings.Index(r.URL.Path, c.base):], c.base)
	n, err := strconv.Atoi(strings.TrimSuffix(rest, "/comments"))
	if err != nil || !strings.HasSuffix(rest, "/comments") {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return 0, false
	}
	return n, true
}

func (c *Comments) list(w http.ResponseWriter, r *http.Request) {
	n, ok := c.issue(w, r)
	if !ok {
		return
	}
	c.mu.Lock()
	out := []any{}
	for _, cm := range c.all {
		if cm.Issue == n {
			out = append(out, c.json(cm))
		}
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (c *Comments) create(w http.ResponseWriter, r *http.Request) {
	n, ok := c.issue(w, r)
	if !ok {
		return
	}
	var body struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
		return
	}
	cm := c.Add(n, c.Self, body.Body)
	writeJSON(w, http.StatusCreated, c.json(cm))
}

func (c *Comments) edit(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], 10, 64)
	var body struct{ Body string }
	if err == nil {
		err = json.NewDecoder(r.Body).Decode(&body)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cm := range c.all {
		if err == nil && cm.ID == id {
			cm.Body, cm.Edits = body.Body, cm.Edits+1
			writeJSON(w, http.StatusOK, c.json(cm))
			return
		}
	}
	http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
}
