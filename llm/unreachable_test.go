package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// TestUnreachableEndpoint: a connection refused on a loopback port (no
// server there) and a host that does not resolve are marked Unreachable,
// with the URL in the message, so the session retries once instead of
// for the whole backoff; a refusal elsewhere may pass (a restarting
// server) and is not.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	notFound := &net.DNSError{Err: "no such host", Name: "model.invalid", IsNotFound: true}
	elsewhere := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443}, Err: errors.New("connect: connection refused")}
	cases := []struct {
		name, url   string
		dial        func() error // nil: a real dial of url
		unreachable bool
		says        string
	}{
		{"loopback refused", "http://" + closed + "/v1", nil, true, "nothing listens on " + closed},
		{"name not found", "http://model.invalid/v1", func() error { return notFound }, true, "host model.invalid does not resolve"},
		{"refused elsewhere", "http://10.0.0.1/v1", func() error { return elsewhere }, false, "connection failed"},
	}
	for _, c := range cases {
		client := &http.Client{}
		if c.dial != nil {
			client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return nil, c.dial() }}
		}
		p := mustNew(t, llm.Config{BaseURL: c.url, APIKey: "sk-test", HTTPClient: client})
		var got *llm.Error
		for ev := range p.Stream(t.Context(), llm.Request{Model: "m"}) {
			if ev.Err != nil {
				errors.As(ev.Err, &got)
			}
		}
		if got == nil || got.Class != llm.ClassRetryable || got.Unreachable != c.unreachable || !strings.Contains(got.Error(), c.says) {
			t.Errorf("%s: got %#v, want retryable, Unreachable %v, saying %q", c.name, got, c.unreachable, c.says)
			continue
		}
		if c.unreachable && !strings.Contains(got.Error(), c.url+"/chat/completions") {
			t.Errorf("%s: the message does not name the URL: %s", c.name, got.Error())
		}
	}
}

// TestUnreachableNamesWireVariable checks that the hint of an unreachable
// endpoint names the base URL variable of the wire in use.
func TestUnreachableNamesWireVariable(t *testing.T) {
	t.Parallel()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close()
	cases := []struct {
		name    string
		wire    llm.Wire
		cloud   *llm.Cloud
		baseVar string
	}{
		{"chat", llm.WireChat, nil, "OPENAI_BASE_URL"},
		{"responses", llm.WireResponses, nil, "OPENAI_BASE_URL"},
		{"anthropic", llm.WireAnthropic, nil, "ANTHROPIC_BASE_URL"},
		{"bedrock", llm.WireAnthropic, &llm.Cloud{Platform: llm.PlatformBedrock, Region: "us-east-1"}, "ANTHROPIC_BEDROCK_BASE_URL"},
		{"vertex", llm.WireAnthropic, &llm.Cloud{Platform: llm.PlatformVertex, Region: "global", Project: "p"}, "ANTHROPIC_VERTEX_BASE_URL"},
	}
	for _, c := range cases {
		p, err := llm.NewWire(c.wire, llm.Config{BaseURL: base, APIKey: "k", Cloud: c.cloud, Authorizer: noAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		e := firstError(t, p)
		if want := "(--base-url or " + c.baseVar + ")"; !e.Unreachable || !strings.Contains(e.Error(), want) {
			t.Errorf("%s: want an unreachable error naming %q, got %v", c.name, want, e)
		}
	}
}

// noAuth is an Authorizer that adds nothing.
type noAuth struct{}

func (noAuth) Authorize(*http.Request, []byte) error { return nil }
