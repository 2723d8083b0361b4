package bashcheck

import "strings"

// Programs whose operands or option values are files they write.

// teeFiles returns the files tee writes: its operands, options skipped.
func teeFiles(args []word) []word {
	var files []word
	opts := true
	for _, a := range args[1:] {
		if opts && a.static() {
			s := a.lit()
			if s == "--" {
				opts = false
				continue
			}
			if len(s) > 1 && s[0] == '-' {
				continue
			}
		}
		files = append(files, a)
	}
	return files
}

// inPlaceWrites returns the files gofmt -w and sed -i rewrite (their
// operands) and the file sort -o writes. Short options may be clustered
// (gofmt -l -w, sed -ni, sort -uo out).
func inPlaceWrites(base string, args []word) []word { //nolint:gocyclo // TODO(perm, issue 14): one function per command (gofmt, sed, sort)
	var operands, writes []word
	inPlace, scriptGiven := false, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		switch {
		case !a.static() || !strings.HasPrefix(s, "-") || s == "-":
			operands = append(operands, a)
		case base == "sort" && (s == "--output" || strings.HasPrefix(s, "--output=") || strings.HasPrefix("--output", s) && len(s) > 4):
			if v, ok := strings.CutPrefix(s, "--output="); ok {
				writes = append(writes, litWord(v))
			} else if i+1 < len(args) {
				i++
				writes = append(writes, args[i])
			}
		case base == "sed" && (s == "--in-place" || strings.HasPrefix(s, "--in-place=") || strings.HasPrefix("--in-place", s) && len(s) > 4):
			inPlace = true
		case base == "sed" && (s == "-e" || s == "-f" || s == "--expression" || s == "--file" || s == "-l" || s == "--line-length"):
			i++ // a script, not an operand
			scriptGiven = scriptGiven || s != "-l" && s != "--line-length"
		case base == "gofmt" && (s == "-w" || s == "--w" || strings.HasPrefix(s, "-w=") && s != "-w=false"):
			inPlace = true
		case strings.HasPrefix(s, "--"):
		default:
			cluster := s[1:]
			switch {
			case base == "sed" && strings.ContainsRune(cluster, 'i'):
				inPlace = true
				if strings.ContainsAny(cluster[:strings.IndexRune(cluster, 'i')], "ef") {
					inPlace = false // -ei: the 'i' is part of the script after -e
				}
			case base == "sort" && strings.ContainsRune(cluster, 'o'):
				if rest := cluster[strings.IndexRune(cluster, 'o')+1:]; rest != "" {
					writes = append(writes, litWord(rest))
				} else if i+1 < len(args) {
					i++
					writes = append(writes, args[i])
				}
			}
		}
	}
	if inPlace {
		if base == "sed" && !scriptGiven && len(operands) > 0 {
			operands = operands[1:] // the script
		}
		writes = append(writes, operands...)
	}
	return writes
}
