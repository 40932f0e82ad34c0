#!/usr/bin/env bash
# Regenerates the c8 held-out corpus: real tool output logs with one
# keyword-free "needle" line in the middle.
#   usage: make.sh [name ...]     (default: all, then the check)
# Output: /tmp/c8-out/c8_<name>.log and c8_<name>.needle ; scratch in /tmp/c8-work
set -u
OUT=/tmp/c8-out
W=/tmp/c8-work
mkdir -p "$OUT" "$W"
export LC_ALL=C LANG=C TZ=UTC NO_COLOR=1 TERM=dumb PYTHONHASHSEED=0
export GIT_CONFIG_NOSYSTEM=1 HOME=$W/home
mkdir -p "$HOME"
N="nice -n 15"

# write the needle: the single log line matching the ERE $2 (must match exactly once)
needle() {
  local name=$1 re=$2
  local n; n=$(grep -cE -- "$re" "$OUT/c8_$name.log")
  if [ "$n" != 1 ]; then echo "needle pattern for $name matched $n lines" >&2; fi
  grep -E -m1 -- "$re" "$OUT/c8_$name.log" > "$OUT/c8_$name.needle"
}

# 1. pytest -v: 2600 parametrized cases, one xfail-marked case that passes (XPASS)
gen_pytest() {
  local d=$W/pytest; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  [ -x $W/venv/bin/pytest ] || { python3 -m venv $W/venv && $W/venv/bin/pip install -q pytest==8.3.4 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.4; }
  python3 - <<'EOF2'
import random
random.seed(8101)
cases = []
for i in range(2600):
    a, b = random.randint(1, 10**6), random.randint(1, 10**6)
    cases.append((i, a, b))
L = ["import pytest", "", "CASES = ["]
for i, a, b in cases:
    if i == 1337:
        L.append(f"    pytest.param({a}, {b}, {a + b}, id='{i:04d}', marks=pytest.mark.xfail(reason='legacy rounding drift', strict=False)),")
    elif i % 211 == 5:
        L.append(f"    pytest.param({a}, {b}, {a + b + 1}, id='{i:04d}', marks=pytest.mark.xfail(reason='legacy rounding drift', strict=False)),")
    elif i % 97 == 13:
        L.append(f"    pytest.param({a}, {b}, {a + b}, id='{i:04d}', marks=pytest.mark.skip(reason='shard archived')),")
    else:
        L.append(f"    pytest.param({a}, {b}, {a + b}, id='{i:04d}'),")
L += ["]", "", "", "@pytest.mark.parametrize('a,b,total', CASES)",
      "def test_ledger_balance(a, b, total):", "    assert a + b == total", ""]
open("test_ledger.py", "w").write("\n".join(L))
EOF2
  $N $W/venv/bin/pytest -v -p no:cacheprovider --color=no test_ledger.py > "$OUT/c8_pytest.log" 2>&1
  needle pytest 'XPASS'
}

# 2. diff -rs over two 3000-file trees; one file only in the copy
gen_diff() {
  local d=$W/diff; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  python3 - <<'EOF'
import os, random
random.seed(8102)
for side in ("release-2.4.0", "staging"):
    random.seed(8102)
    for dd in range(30):
        for f in range(100):
            p = f"{side}/assets/pack{dd:02d}"
            os.makedirs(p, exist_ok=True)
            with open(f"{p}/tile_{dd:02d}{f:02d}.json", "w") as fh:
                fh.write('{"id": %d, "w": %d}\n' % (dd * 100 + f, random.randint(0, 999)))
open("staging/assets/pack13/tile_1337.json.orig", "w").write("{}\n")
EOF
  $N diff -rs release-2.4.0 staging > "$OUT/c8_diff.log" 2>&1
  needle diff '^Only in '
}

# 3. git merge of two branches that both touch 2600 files; one overlapping edit
gen_gitmerge() {
  local d=$W/gitmerge; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  export GIT_AUTHOR_NAME=c8 GIT_AUTHOR_EMAIL=c8@example.invalid GIT_COMMITTER_NAME=c8 \
         GIT_COMMITTER_EMAIL=c8@example.invalid GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' \
         GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
  git init -q -b main . && git config advice.mergeConflict false 2>/dev/null
  python3 - <<'EOF'
import os
for i in range(2600):
    os.makedirs(f"conf/zone{i//100:02d}", exist_ok=True)
    with open(f"conf/zone{i//100:02d}/host{i:04d}.ini", "w") as fh:
        fh.write("[host]\n" + f"name = host{i:04d}\n" + "\n".join(f"opt{k} = {k}" for k in range(12)) + "\nport = 8080\n")
EOF
  git add -A && git commit -qm base
  git checkout -qb feature
  python3 - <<'EOF'
import glob
for p in sorted(glob.glob("conf/*/*.ini")):
    s = open(p).read().replace("[host]\n", "[host]\n# feature: tls\n", 1)
    if p.endswith("host1337.ini"):
        s = s.replace("port = 8080", "port = 8443")
    open(p, "w").write(s)
EOF
  git commit -qam feature
  git checkout -q main
  python3 - <<'EOF'
import glob
for p in sorted(glob.glob("conf/*/*.ini")):
    s = open(p).read().replace("port = 8080\n", "port = 8080\ntimeout = 30\n")
    if p.endswith("host1337.ini"):
        s = s.replace("port = 8080", "port = 9090")
    open(p, "w").write(s)
EOF
  git commit -qam main-timeouts
  $N git merge --no-edit feature > "$OUT/c8_gitmerge.log" 2>&1
  needle gitmerge '^CONFLICT '
}

# 4. make -n on a generated 2600-target Makefile with one dependency cycle
gen_make() {
  local d=$W/make; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  python3 - <<'EOF'
n = 2600
L = ["CC = cc", "CFLAGS = -O2 -fPIC -Iinclude", "", "all: " + " ".join(f"obj/u{i:04d}.o" for i in range(n)), ""]
for i in range(n):
    dep = f" obj/u{i+1:04d}.o" if i == 1337 else ""
    if i == 1338:
        dep = " obj/u1337.o"
    L.append(f"obj/u{i:04d}.o: src/u{i:04d}.c{dep}")
    L.append(f"\t$(CC) $(CFLAGS) -c src/u{i:04d}.c -o obj/u{i:04d}.o")
open("Makefile", "w").write("\n".join(L) + "\n")
import os
os.makedirs("src")
for i in range(n):
    open(f"src/u{i:04d}.c", "w").write(f"int u{i}(void){{return {i};}}\n")
EOF
  $N make -n > "$OUT/c8_make.log" 2>&1
  needle make 'Circular .* dependency dropped'
}

# 5. go test -v with 2600 subtests, one skipped with a reason
gen_gotest() {
  local d=$W/gotest; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  export GOCACHE=$W/gocache GOPATH=$W/gopath GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
  printf 'module example.invalid/replica\n\ngo 1.19\n' > go.mod
  cat > replica_test.go <<'EOF'
package replica

import (
	"fmt"
	"hash/crc32"
	"testing"
)

func TestReplicaShards(t *testing.T) {
	for i := 0; i < 2600; i++ {
		i := i
		t.Run(fmt.Sprintf("shard_%04d", i), func(t *testing.T) {
			if i == 1337 {
				t.Skipf("shard %04d: replica is 412 generations behind primary, checksum comparison not meaningful", i)
			}
			b := []byte(fmt.Sprintf("shard-%d", i))
			if crc32.ChecksumIEEE(b) != crc32.ChecksumIEEE(append([]byte{}, b...)) {
				t.Fatal("crc mismatch")
			}
		})
	}
}
EOF
  $N go test -count=1 -v . > "$OUT/c8_gotest.log" 2>&1
  needle gotest 'generations behind primary'
}

# 6. Java 17 G1 GC log (-Xlog:gc) with one explicit System.gc() full pause
gen_javagc() {
  local d=$W/javagc; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  cat > Churn.java <<'EOF'
import java.lang.management.*;
import java.util.*;
public class Churn {
    static long gcs() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) n += b.getCollectionCount();
        return n;
    }
    public static void main(String[] a) {
        Random r = new Random(8106);
        List<byte[]> keep = new ArrayList<>();
        long sink = 0; boolean done = false;
        while (gcs() < 1300) {
            byte[] b = new byte[32 * 1024 + r.nextInt(1024)];
            sink += b.length;
            if (r.nextInt(64) == 0) { keep.add(b); if (keep.size() > 64) keep.remove(0); }
            if (!done && gcs() >= 620) { done = true; System.gc(); }
        }
        System.out.println("churned " + sink + " bytes");
    }
}
EOF
  $N javac Churn.java
  $N java -XX:+UseG1GC -Xms32m -Xmx32m -XX:-UseCompressedOops \
      -Xlog:gc:stdout:uptime,level,tags Churn > "$OUT/c8_javagc.log" 2>&1
  needle javagc 'Pause Full'
}

# 7. tar -cvv with --sort=name over 3000 files, one unix socket in the tree
gen_tar() {
  local d=$W/tar; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  python3 - <<'EOF'
import os, socket, random
random.seed(8107)
for dd in range(30):
    p = f"srv/spool/q{dd:02d}"
    os.makedirs(p)
    for f in range(100):
        with open(f"{p}/msg{dd:02d}{f:02d}.eml", "w") as fh:
            fh.write("x" * random.randint(10, 4000))
os.unlink("srv/spool/q13/msg1337.eml")
s = socket.socket(socket.AF_UNIX); s.bind("srv/spool/q13/msg1337.eml")
EOF
  find srv -exec touch -h -d '2024-01-01 00:00:00' {} +
  $N stdbuf -oL -eL tar --sort=name --owner=spool:1001 --group=spool:1001 -cvvf "$d/spool.tar" srv \
      > "$OUT/c8_tar.log" 2>&1
  needle tar 'socket ignored$'
}

# 8. sqlite3 session (.echo on); integrity_check finds one NOT NULL violation
gen_sqlite() {
  local d=$W/sqlite; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  python3 - <<'EOF'
import random
random.seed(8108)
L = [".echo on", ".headers on", ".mode list",
     "CREATE TABLE accounts(id INTEGER PRIMARY KEY, email TEXT, region TEXT, balance INTEGER);",
     "BEGIN;"]
for i in range(1, 3001):
    email = "NULL" if i == 1337 else f"'user{i:04d}@example.com'"
    L.append(f"INSERT INTO accounts VALUES({i}, {email}, '{random.choice(['eu','us','ap'])}', {random.randint(0,99999)});")
L.append("COMMIT;")
L.append("PRAGMA writable_schema=ON;")
L.append("UPDATE sqlite_schema SET sql='CREATE TABLE accounts(id INTEGER PRIMARY KEY, email TEXT NOT NULL, region TEXT, balance INTEGER)' WHERE name='accounts';")
L.append("PRAGMA writable_schema=OFF;")
L.append(".quit")
open("setup.sql", "w").write("\n".join(L) + "\n")
R = [".headers on", ".mode list", ".echo on",
     "SELECT id, email, region, balance FROM accounts WHERE id <= 1500 ORDER BY id;",
     "PRAGMA integrity_check;",
     "SELECT id, email, region, balance FROM accounts WHERE id > 1500 ORDER BY id;",
     "SELECT region, count(*), sum(balance) FROM accounts GROUP BY region;"]
open("report.sql", "w").write("\n".join(R) + "\n")
EOF
  sqlite3 ledger.db < setup.sql > /dev/null
  $N sqlite3 ledger.db < report.sql > "$OUT/c8_sqlite.log" 2>&1
  needle sqlite '^NULL value in '
}

# 9. pyflakes over 120 generated modules full of unused imports/vars; one undefined name
gen_pyflakes() {
  local d=$W/pyflakes; rm -rf "$d"; mkdir -p "$d/billing"; cd "$d"
  [ -x $W/venv/bin/pyflakes ] || { python3 -m venv $W/venv && $W/venv/bin/pip install -q pyflakes==3.2.0; }
  python3 - <<'EOF'
import random
random.seed(8109)
mods = ["os", "sys", "re", "json", "math", "typing", "logging", "itertools", "functools", "collections"]
for m in range(120):
    L = [f"import {x}" for x in random.sample(mods, 6)]
    L.append("")
    for f in range(8):
        L.append(f"def compute_{m:03d}_{f}(items, rate=0.2):")
        L.append("    subtotal = sum(i.price for i in items)")
        L.append("    tax = subtotal * rate")
        L.append("    discount = 0")
        if m == 66 and f == 3:
            L.append("    return round(totla, 2)")
        else:
            L.append("    return round(subtotal + tax, 2)")
        L.append("")
    open(f"billing/mod_{m:03d}.py", "w").write("\n".join(L))
EOF
  $N $W/venv/bin/pyflakes $(ls billing/*.py | sort) > "$OUT/c8_pyflakes.log" 2>&1
  needle pyflakes "undefined name 'totla'"
}

# 10. GNU patch --verbose -N applying a 2600-file series, one hunk already applied
gen_patch() {
  local d=$W/patch; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  python3 - <<'EOF'
import os
P = []
for i in range(4200):
    p = f"lib/mod{i//100:02d}/f{i:04d}.py"
    os.makedirs(os.path.dirname(p), exist_ok=True)
    old = [f"# module {i}", "import os", "", "def run():", f"    return {i}", ""]
    new = list(old); new[4] = f"    return {i} + 1"
    open(p, "w").write("\n".join(new if i == 1337 else old) + "\n")
    P.append(f"--- a/{p}\n+++ b/{p}\n@@ -2,5 +2,5 @@\n import os\n \n def run():\n-    return {i}\n+    return {i} + 1\n \n")
open("series.patch", "w").write("".join(P))
EOF
  $N patch -p1 -N --no-backup-if-mismatch -r - < series.patch > "$OUT/c8_patch.log" 2>&1
  needle patch 'Reversed \(or previously applied\) patch detected'
}

check() {
python3 - "$OUT" <<'EOF'
import glob, os, re, sys
out = sys.argv[1]
BAD = ["error", "fail", "failed", "failure", "exception", "fatal", "panic", "assert",
       "traceback", "killed", "abort", "segmentation", "no such file", "permission denied",
       "timed out", "exit status", "deadlock", "data race", "warning",
       "most recent call first", "not found", "missing", "\u2716", "\u2718"]
allok = True
print(f"{'log':<24}{'size':>8}{'offset':>9}{'end_gap':>9}  kwfree once middle  verdict")
for lp in sorted(glob.glob(os.path.join(out, "c8_*.log"))):
    name = os.path.basename(lp)[:-4]
    data = open(lp, "rb").read()
    needles = [l for l in open(lp[:-4] + ".needle", "rb").read().decode().splitlines() if l]
    for nd in needles:
        nb = nd.encode()
        lines = data.split(b"\n")
        once = sum(1 for l in lines if l == nb) == 1
        off = -1; pos = 0
        for l in lines:
            if l == nb: off = pos; break
            pos += len(l) + 1
        end = off + len(nb) + 1
        gap = len(data) - end
        kw = not any(b in nd.lower() for b in BAD)
        mid = off >= 5120 and gap >= 46080
        size_ok = 60_000 <= len(data) <= 400_000
        ok = kw and once and mid and size_ok and b"\x1b[" not in data
        allok &= ok
        print(f"{name:<24}{len(data):>8}{off:>9}{gap:>9}  {str(kw):<6} {str(once):<4} {str(mid):<6}  {'PASS' if ok else 'FAIL'}")
        print(f"    needle: {nd}")
print("ALL PASS" if allok else "SOME FAIL")
EOF
}

ALL="pytest diff gitmerge make gotest javagc tar sqlite pyflakes patch"
if [ $# -eq 0 ]; then set -- $ALL check; fi
for g in "$@"; do
  if [ "$g" = check ]; then check; else ( gen_$g ); fi
done
