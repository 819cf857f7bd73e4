package redact

import "strings"

// tool is a command whose short flags take a password (mysql -pX, docker
// login -p X, sshpass -p X, redis-cli -a X) or whose user flag takes
// user:password (curl -u). The same letters are ordinary flags of other
// commands (mkdir -p, ssh -p 22, docker run -p 80:80), so a flag is read
// so only after its tool's word.
type tool uint8

const (
	noTool tool = iota
	toolMySQL
	tool7z
	toolLogin // docker, podman, az, oc, cf, helm registry ... login
	toolSSHPass
	toolMongo
	toolTwine
	toolRedis
	toolSSHKeygen
	toolOpenSSL
	toolSQLCmd
	toolZip
	toolLDAP
	toolCurl
)

// flagForm is how a tool's flag takes its password.
type flagForm uint8

const (
	noFlag       flagForm = iota
	joinedOnly            // -pSECRET; -p alone prompts (mysql, 7z)
	joinedOrNext          // -pSECRET or -p SECRET
	nextOnly              // -k SECRET
	userColon             // -u user:password, the part after the colon
)

// maxToolWord bounds the words compared with tool names.
const maxToolWord = len("mariadb-import")

// toolOf is the tool a command word (a path's last name) runs; login is one
// only as a subcommand (docker login), not first on its line.
func toolOf(word string, first bool) tool {
	if len(word) > maxToolWord || len(word) < 2 {
		return noTool
	}
	switch word {
	case "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow",
		"mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import":
		return toolMySQL
	case "7z", "7za", "7zz", "7zr":
		return tool7z
	case "login":
		if !first {
			return toolLogin
		}
	case "sshpass":
		return toolSSHPass
	case "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport":
		return toolMongo
	case "twine":
		return toolTwine
	case "redis-cli", "valkey-cli", "keydb-cli":
		return toolRedis
	case "ssh-keygen":
		return toolSSHKeygen
	case "openssl":
		return toolOpenSSL
	case "sqlcmd", "bcp":
		return toolSQLCmd
	case "zip", "unzip", "zipcloak":
		return toolZip
	case "ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn":
		return toolLDAP
	case "curl":
		return toolCurl
	}
	return noTool
}

// form is how t's flag name (without dashes) takes a password, if it does.
func (t tool) form(name string) flagForm {
	switch t {
	case toolMySQL, tool7z:
		return formIf(name == "p", joinedOnly)
	case toolLogin, toolSSHPass, toolMongo, toolTwine:
		return formIf(name == "p", joinedOrNext)
	case toolRedis:
		return formIf(name == "a", joinedOrNext)
	case toolSSHKeygen:
		return formIf(name == "N" || name == "P", joinedOrNext)
	case toolOpenSSL:
		return formIf(name == "k", nextOnly)
	case toolSQLCmd, toolZip:
		return formIf(name == "P", joinedOrNext)
	case toolLDAP:
		return formIf(name == "w", joinedOrNext)
	case toolCurl:
		return formIf(name == "u" || name == "user", userColon)
	}
	return noFlag
}

// notValue reports whether the word after t's password flag is some other
// flag's argument: gh auth login -p ssh is gh's git protocol.
func (t tool) notValue(w string) bool {
	return t == toolLogin && (w == "ssh" || w == "https")
}

// ownsB reports whether -b after t's word is t's own flag, not curl's
// cookie flag (ldapsearch -b dc=example,dc=com is a base DN).
func (t tool) ownsB() bool { return t != noTool && t != toolCurl }

func formIf(ok bool, f flagForm) flagForm {
	if ok {
		return f
	}
	return noFlag
}

// toolFlagLetter holds the letters of the tools' short flags: only a flag
// with one of them is looked at further. A switch, not a search of a
// string: it runs at every flag of every event (see mayHaveToolFlag).
func toolFlagLetter(c byte) bool {
	switch c {
	case 'p', 'a', 'w', 'k', 'u', 'N', 'P':
		return true
	}
	return false
}

// wordEdge reports whether c may stand next to a flag word: a blank or a
// quote (-p"x", "-p" as an argv element).
func wordEdge(c byte) bool { return c == ' ' || c == '\t' || c == '"' || c == '\'' }

// toolAt is the tool whose flags the flag at i belongs to: the last tool
// word before i on its line and in its command (';', '|' and '&' start
// another). The scan asks at rising offsets, so the text is read once; a
// question about an earlier offset gets the answer as far as read.
func (sc *scanner) toolAt(i int) tool {
	s := sc.s
	for k := sc.toolTo; k < i; {
		c := s[k]
		switch {
		case c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&':
			sc.tool, sc.toolMid = noTool, false
			k++
		case wordByte[c] && (k == 0 || !wordByte[s[k-1]] && s[k-1] != '.'):
			e := min(runEnd(s, k), i)
			if t := toolOf(s[k:e], !sc.toolMid); t != noTool {
				sc.tool = t
			}
			sc.toolMid = true
			k = e
		default:
			k++
		}
	}
	sc.toolTo = max(sc.toolTo, i)
	return sc.tool
}

// toolFlag handles the flag run s[i:j] when the tool it follows takes a
// password with it, and reports whether it did: the value joined to the
// flag (-pSECRET, -p'SECRET') or the next word (-p SECRET).
func (sc *scanner) toolFlag(i, j int) (int, bool) {
	s := sc.s
	if i > 0 && !wordEdge(s[i-1]) {
		return 0, false // inside a word: a-p
	}
	name, joined := s[i+1:i+2], false
	switch {
	case s[i+1] == '-' && j < len(s) && s[j] == '=': // --user=alice:pw
		name, joined = s[i+2:j], true
	case s[i+1] == '-': // --user, its value after a blank
		name = s[i+2 : j]
		if j < len(s) && !wordEdge(s[j]) {
			return 0, false
		}
	case j-i > 2:
		joined = true
	case j < len(s) && (s[j] == '"' || s[j] == '\''):
		joined = i == 0 || s[i-1] != s[j] // not the quote that closes "-p"
	case j < len(s) && s[j] != ' ' && s[j] != '\t':
		return 0, false
	}
	form := sc.toolAt(i).form(name)
	if form == noFlag {
		return 0, false
	}
	if sc.probe {
		sc.hit = true
		return j, true
	}
	v := i + 2
	if s[i+1] == '-' {
		v = j + 1 // after --user=
	}
	if !joined {
		if form == joinedOnly {
			return j, true // mysql -p alone prompts: the next word is a database
		}
		v = skipBlanks(s, j)
		if v == j || v >= len(s) || s[v] == '-' {
			return j, true
		}
	} else if form == nextOnly {
		return 0, false
	}
	lo, hi := valueExtent(s, v, false)
	if !joined && lo == v && (isUsageWord(s[lo:hi]) || sc.tool.notValue(s[lo:hi])) {
		return hi, true
	}
	if sc.tool == toolSSHPass {
		sc.tool = noTool // the command sshpass runs has flags of its own
	}
	if form == userColon {
		return sc.userPassword(v, lo, hi), true
	}
	return sc.cutValue(lo, hi, KindPassword), true
}

// userPassword cuts the password of the user:password at s[lo:hi] (the
// word at v), and the user when it is a token in a known format (curl -u
// ghp_…:x-oauth-basic). Without a password (curl prompts for it) the scan
// goes on in the word.
func (sc *scanner) userPassword(v, lo, hi int) int {
	k := strings.IndexByte(sc.s[lo:hi], ':')
	if k < 0 || lo+k+1 == hi {
		return v
	}
	if kind, ok := wholeFormat(sc.s[lo : lo+k]); ok {
		sc.add(lo, lo+k, kind)
	}
	return sc.cutValue(lo+k+1, hi, KindPassword)
}

// argvTool follows an argv array's tool across its elements (see
// dataVisitor): s is the element, first whether it is the array's first.
func argvTool(prev tool, s string, first bool) tool {
	if first {
		prev = noTool
	}
	if t := toolOf(s[strings.LastIndexByte(s, '/')+1:], first); t != noTool {
		return t
	}
	return prev
}

// argvToolCut is the first cut for an argv element after its tool's flag
// (["sshpass", "-p", "SECRET"]) or with the password joined to the flag
// (["mysql", "-pSECRET"]), and whether the element is either.
func argvToolCut(t tool, prev, s string, hasPrev bool) (firstCut, bool) {
	if t == noTool {
		return 0, false
	}
	if hasPrev && !strings.HasPrefix(s, "-") && len(prev) >= 2 && prev[0] == '-' {
		switch t.form(trimDashes(prev)) {
		case joinedOrNext, nextOnly:
			if len(prev) == 2 && !t.notValue(s) {
				return cutWhole, true
			}
		case userColon:
			return cutUserPassword, true
		}
		return 0, false
	}
	if eq := strings.IndexByte(s, '='); eq > 2 && strings.HasPrefix(s, "--") && t.form(s[2:eq]) == userColon {
		return cutUserPassword, true // --user=alice:password
	}
	if len(s) > 2 && s[0] == '-' && s[1] != '-' {
		switch t.form(s[1:2]) {
		case joinedOnly, joinedOrNext:
			return cutJoinedFlag, true
		case userColon:
			return cutUserPassword, true
		}
	}
	return 0, false
}

// mayHaveToolFlag reports whether text holds a flag that a tool's password
// may follow or be joined to (a '-' starting a word, then one of the
// tools' flag letters or --user) and a tool's word. The prefilter's
// automaton has no bits left for it; the letters are common (mkdir -p),
// so the words are looked for only after a flag is found.
func mayHaveToolFlag(s string) bool {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '-')
		if k < 0 {
			return false
		}
		k += i
		if k+1 < len(s) && k > 0 && wordEdge(s[k-1]) &&
			(toolFlagLetter(s[k+1]) || strings.HasPrefix(s[k+1:], "-user")) {
			return hasToolWord(s)
		}
		i = k + 1
	}
}

// hasToolWord reports whether a word of s names a tool, login included
// wherever it stands.
func hasToolWord(s string) bool {
	for i := 0; i < len(s); {
		if !wordByte[s[i]] {
			i++
			continue
		}
		e := runEnd(s, i)
		if toolOf(s[i:e], false) != noTool {
			return true
		}
		i = e
	}
	return false
}
