// Package mcp offers the tools of Model Context Protocol servers to the
// agent as tools.Tool values, with the MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) for the protocol: initialize,
// tools/list (every page), tools/call with cancellation and progress
// notifications, and answers to the server's ping.
//
// Two transports: stdio (the server is a process the runner starts, through
// a CommandFunc so the pipeline can put it in the sandbox) and streamable
// HTTP. Start connects to every server of a task, lists its tools and keeps
// those an allow rule of the `mcp` permission could ever match
// (pattern "SERVER/TOOL"); the others are never offered and never called.
//
// Tool names. The model sees each tool as
//
//	mcp__SERVER__TOOL
//
// when that fits the providers' rule for tool names (^[a-zA-Z0-9_-]{1,64}$),
// TOOL is made of those characters only, and SERVER neither contains "__"
// nor ends in "_" (so the first "__" after the prefix always separates
// server from tool, and two plain names never collide). Otherwise the name
// is
//
//	mcp__SERVER'__TOOL'_HASH
//
// where SERVER' and TOOL' have every other character replaced by '_', are
// cut so that the whole name has at most 64 bytes, and HASH is the first 8
// hex digits of SHA-256("SERVER\x00TOOL"), which keeps it stable across runs
// and apart from every other. Start reports the (astronomically unlikely)
// case of two equal names as an error rather than offering either.
//
// Tools are returned sorted by that name, so the tools part of every model
// request is byte-identical across steps (prompt caches).
//
// Imports: tools, tools/permission, internal/httpguard and the MCP go-sdk.
package mcp
