"""Writes python_parity.jsonl: what the Python reference's sandbox_session.py
writes for a host (server.address or not) and a path (str(Path(p))), computed
with its own expressions on Python 3.11. Run: python3.11 python_parity.py"""
import ipaddress
import json
import random
from pathlib import PurePosixPath

random.seed(7)


def loopback(host):
    # _resolve_exposed_port_finish_data
    normalized = host.strip().lower()
    if normalized in {"localhost", "::1"}:
        return True
    try:
        return ipaddress.ip_address(normalized).is_loopback
    except ValueError:
        return False


def mutate(base, chars):
    s = list(base)
    for _ in range(random.randint(1, 3)):
        op, i = random.randint(0, 2), random.randint(0, len(s))
        if op == 0:
            s.insert(i, random.choice(chars))
        elif s:
            i = min(i, len(s) - 1)
            if op == 1:
                del s[i]
            else:
                s[i] = random.choice(chars)
    return "".join(s)


hosts = ["127.0.0.1", " 127.0.0.1 ", "LOCALHOST", "localhost.", "::1", "[::1]", "::1%lo", "::1%", "::1%a%b",
         "::ffff:127.0.0.1", "::FFFF:7f00:1", "::127.0.0.1", "0:0:0:0:0:0:0:1", "::00001", "127.1", "127.0.0.01",
         "127.0.0.1%lo", "127.255.255.255", "128.0.0.1", "0.0.0.0", "::", "\t::1\n", "\x0b127.0.0.1\x0c",
         "\x85localhost\xa0", "\u3000localhost\u2029", "\u200blocalhost", "\u180elocalhost", "localhost\x00",
         "ＬＯＣＡＬＨＯＳＴ", "１２７.0.0.1", "::1% ", "::1%\u00e9", "fe80::1%lo", "::ffff:127.0.0.1%x", "127.0.0.1:80",
         "[::1]:80", "2130706433", "0x7f000001", "\x1c::1\x1d", "\u0130localhost", "localhos\u212a", "\ufeff127.0.0.1",
         "\u1680::1", "\u2000::1\u200a", "\u202f::1\u205f", "::1%a b", "::1 %lo"]
host_chars = list("0123456789abcdefABCDEF:.%  \t\n\x1cl") + ["\u00a0", "\u2028", "\u212a", "\u0130"]
for _ in range(600):
    hosts.append(mutate(random.choice(["::1", "127.0.0.1", "localhost", "::ffff:127.0.0.1", "127.1.2.3", "::1%z"]), host_chars))

paths = ["", "/", "//", "///", ".", "./", "..", "/..", "//..", "/./", "a/./b", "a//b/", "../a/..", "//w", "///w//",
         "a/.", "...", "/.../", "\x00", "/a\x00b/", "é/ü", "/ \t/", "\\a\\b", "~/x", "/w/" + "x" * 300]
for _ in range(600):
    paths.append("".join(random.choice(["/", ".", "a", "é", "\x00", " ", "\\", "\U0001F600"]) for _ in range(random.randint(0, 10))))

with open("python_parity.jsonl", "w", encoding="utf-8") as f:
    for h in hosts:
        f.write(json.dumps({"host": h, "server_address": loopback(h)}) + "\n")
    for p in paths:
        f.write(json.dumps({"path": p, "str_path": str(PurePosixPath(p))}) + "\n")
