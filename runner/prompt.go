package runner

import (
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/llm"
)

// maxInstructionBytes bounds the repository instructions read into the
// system prompt.
const maxInstructionBytes = 64 << 10

const headerPrompt = `You are an autonomous coding agent running headless, inside a CI job or a batch over many repositories. Nobody will answer questions or approve anything: decide for yourself, within the permissions you were given, and finish the task.`

const toolGuidance = `# Using tools
- Work in the working directory named above; paths are relative to it.
- Read files before you change them; keep changes minimal and focused on the task.
- A tool result that starts with "Error:" failed; read it and adapt. A permission denial will not change if you retry the same call: choose another approach or stop.
- Do not repeat the same tool call with the same input: the runner stops loops.`

const finishGuidance = `# Final answer
When you are done, reply with a short final message saying what you changed and anything left undone. The run ends with that message.`

const structuredGuidance = `# Final answer
When you are done, call the StructuredOutput tool with the final result; its arguments must match its schema. The run ends when it is called with valid arguments.`

// buildSystemPrompt assembles the byte-stable system prompt: the header, a
// fixed environment block (date from the session start), tool guidance,
// the repository's instructions, then the task's instructions.
func buildSystemPrompt(cfg Config, now time.Time, defs []llm.ToolDef) string {
	var b strings.Builder
	b.WriteString(headerPrompt)
	b.WriteString("\n\n<env>\nWorking directory: ")
	b.WriteString(cfg.WorkTree)
	b.WriteString("\nPlatform: ")
	b.WriteString(platform(cfg))
	b.WriteString("\nToday's date: ")
	b.WriteString(now.UTC().Format("2006-01-02 (Monday)"))
	b.WriteString("\n</env>\n\n")
	if len(defs) > 0 {
		b.WriteString(toolGuidance)
		b.WriteString("\n\n")
	}
	if len(cfg.OutputSchema) > 0 {
		b.WriteString(structuredGuidance)
	} else {
		b.WriteString(finishGuidance)
	}
	b.WriteString("\n\n")
	if !cfg.NoRepoInstructions {
		if name, text := repoInstructions(cfg.WorkTree); text != "" {
			b.WriteString("# Repository instructions (from " + name + ")\n")
			b.WriteString(strings.TrimSpace(text))
			b.WriteString("\n\n")
		}
	}
	if in := strings.TrimSpace(cfg.Instructions); in != "" {
		b.WriteString("# Task instructions\n")
		b.WriteString(in)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func platform(cfg Config) string {
	if cfg.Platform != "" {
		return cfg.Platform
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}

// RepoInstructionFiles are the files whose text goes into the system
// prompt as the repository's instructions: the first that exists.
func RepoInstructionFiles() []string { return []string{"AGENTS.md", "CLAUDE.md"} }

// RepoInstructionsFile names the file of RepoInstructionFiles the system
// prompt takes from the work tree; "" when there is none.
func RepoInstructionsFile(workTree string) string {
	name, text := repoInstructions(workTree)
	if text == "" {
		return ""
	}
	return name
}

// repoInstructions reads AGENTS.md, else CLAUDE.md, at the work tree root
// (its first maxInstructionBytes); it returns the file name and text, or
// "" when there is none.
//   - A symlink or a non-regular file is skipped: a repository's AGENTS.md
//     linked to /proc/self/environ would send the runner's keys to the model.
func repoInstructions(workTree string) (string, string) {
	if workTree == "" {
		return "", ""
	}
	root := safefs.New(workTree)
	for _, name := range RepoInstructionFiles() {
		f, err := root.Open(name)
		if err != nil { // missing, a link or unreadable: try the next name
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, maxInstructionBytes))
		_ = f.Close()
		if err != nil {
			continue
		}
		return name, string(data)
	}
	return "", ""
}

// Notes the runner adds to the conversation as user messages.
const (
	lastStepNote = `This is the last step of this run: tools are disabled now. Do not call tools. Reply with your final message: what you did, what is left undone, and anything the reader must know.`

	lastStepStructuredNote = `This is the last step of this run. Call the StructuredOutput tool now with your final result; no other tool will run.`

	lengthNote = `Your previous reply was cut off at the output token limit. Continue from where it stopped, more concisely.`

	unknownFinishNote = `Your previous reply ended without saying it was complete. If the task is done, reply with your final message; otherwise continue from where you stopped.`

	structuredNudge = `You must finish by calling the StructuredOutput tool with arguments that match its schema. Do not reply with plain text.`

	compactionPrompt = `Your context window is full, so this conversation will be replaced by a summary. Write that summary now, for yourself, to continue the task without the earlier messages. Include: the task and its constraints; what you have done so far (files read and changed, commands run and their results); what you learned about the code; what is left to do next and any open problems. Be specific (paths, names, errors) and concise. Do not call tools.`

	compactedTaskHeader = "\n\n---\nThe earlier conversation was compacted. Summary of the work so far:\n\n"

	compactedTaskFooter = "\n\nContinue the task from here."
)
