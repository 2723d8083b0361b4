package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultText reduces a tools/call result to text the model can read: text
// blocks as they are; images and audio as a line naming their type and
// size; resource links as their URI, name and type; embedded resources as
// their text (or a line naming a binary one); and the structured content as
// JSON when no text block already carries it (servers should send both).
// Blocks are separated by blank lines. An empty result says so.
func ResultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if res.StructuredContent != nil {
		if js, err := json.Marshal(res.StructuredContent); err == nil && !carries(parts, js) {
			parts = append(parts, "Structured content (JSON):\n"+string(js))
		}
	}
	if len(parts) == 0 {
		if res.IsError {
			return "(the tool reported an error with no content)"
		}
		return "(the tool returned no content)"
	}
	return strings.Join(parts, "\n\n")
}

// carries reports whether a text block holds the same JSON as js.
func carries(parts []string, js []byte) bool {
	var want any
	if json.Unmarshal(js, &want) != nil {
		return false
	}
	wantJS, _ := json.Marshal(want)
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil {
			if gotJS, _ := json.Marshal(got); string(gotJS) == string(wantJS) {
				return true
			}
		}
	}
	return false
}

// contentText is one content block as text.
func contentText(c sdk.Content) string {
	switch v := c.(type) {
	case *sdk.TextContent:
		return v.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes, not shown]", orUnknown(v.MIMEType), len(v.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(v.MIMEType), len(v.Data))
	case *sdk.ResourceLink:
		return resourceLinkText(v)
	case *sdk.EmbeddedResource:
		return embeddedText(v.Resource)
	}
	js, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("[%T content, not shown]", c)
	}
	return "[content: " + string(js) + "]"
}

func resourceLinkText(v *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link: %s", v.URI)
	if v.Name != "" {
		fmt.Fprintf(&b, " (%s)", v.Name)
	}
	if v.MIMEType != "" {
		fmt.Fprintf(&b, ", %s", v.MIMEType)
	}
	b.WriteString("]")
	if v.Description != "" {
		b.WriteString(" " + v.Description)
	}
	return b.String()
}

func embeddedText(r *sdk.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return fmt.Sprintf("[resource: %s%s]\n%s", r.URI, mimeNote(r.MIMEType), r.Text)
	}
	return fmt.Sprintf("[resource: %s%s, %d bytes of binary data, not shown]", r.URI, mimeNote(r.MIMEType), len(r.Blob))
}

func mimeNote(m string) string {
	if m == "" {
		return ""
	}
	return ", " + m
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
