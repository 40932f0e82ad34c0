#!/usr/bin/env bash
# make_corpus_c7.sh — regenerate the c7 corpus class: failures reported WITHOUT a keyword.
#
# Every log here is real output of a real tool run on a generated input (fixed seeds).
# The needle (the line(s) the model must see) carries none of the usual failure words
# (error, fail, exception, fatal, panic, assert, traceback, killed, abort, ...), sits in the
# middle of the log (>= 5 KiB from the start, >= 45 KiB from the end), and every log is
# 60-400 KB.  Scratch work happens in /tmp/c7-work; outputs are written next to this script
# as c7_<name>.log / c7_<name>.needle.
#
# Usage: make_corpus_c7.sh [case ...]      (no args = all cases, then the check)
#        make_corpus_c7.sh check            (only the check / table)
set -uo pipefail

OUT="$(cd "$(dirname "$0")" && pwd)"
W=/tmp/c7-work
mkdir -p "$W"
export NO_COLOR=1 TERM=dumb LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC PYTHONHASHSEED=0 \
       PYTHONDONTWRITEBYTECODE=1 FORCE_COLOR=0 NPM_CONFIG_COLOR=false
NICE="nice -n 10"
PY=python3

# ---------------------------------------------------------------- tool setup
ensure_venv() {
  if [ ! -x "$W/venv/bin/pylint" ] || [ ! -x "$W/venv/bin/flake8" ]; then
    $PY -m venv "$W/venv"
    "$W/venv/bin/pip" install -q pylint==3.2.7 flake8==7.1.1
  fi
}
ensure_npm() {
  if [ ! -x "$W/npm/node_modules/.bin/eslint" ] || [ ! -x "$W/npm/node_modules/.bin/stylelint" ]; then
    mkdir -p "$W/npm"
    (cd "$W/npm" && [ -f package.json ] || npm init -y >/dev/null)
    (cd "$W/npm" && npm install --no-audit --no-fund eslint@8.57.0 stylelint@16.9.0 \
        stylelint-config-standard@36.0.1 >/dev/null 2>&1)
  fi
}

# write the needle file from lines given on stdin (verbatim)
needle() { cat > "$OUT/c7_$1.needle"; }

# ---------------------------------------------------------------- cases
# 1a. pylint: one E0602 undefined-variable among ~2000 convention/refactor/warning messages
case_pylint_undefined() {
  ensure_venv
  local d=$W/pylint; rm -rf "$d"; mkdir -p "$d/billing"
  $PY - "$d/billing" <<'EOF'
import random, sys, os
random.seed(7001)
root = sys.argv[1]
open(os.path.join(root, "__init__.py"), "w").write('"""Billing package."""\n')
N = 140
BUG = 61
for i in range(N):
    r = random.Random(i)
    lines = ["import os", "import sys", "import json", "", ""]
    for f in range(r.randint(4, 7)):
        name = r.choice(["compute", "merge", "load", "render", "scale", "split"]) + "Total%d_%d" % (i, f)
        lines += [
            "def %s(values, scale, offset=0):" % name,
            "    total = offset",
            "    for v in values:",
            "        total += v * scale  # accumulate the scaled value for the current invoice batch row",
            "    return total",
            "", "",
        ]
        if i == BUG and f == 2:
            lines[-7:-2] = [
                "def %s(values, scale, offset=0):" % name,
                "    total = offset",
                "    for v in values:",
                "        total += v * scale + ledger_rate",
                "    return total",
            ]
    lines += [
        "class recordHolder%d:" % i,
        "    def __init__(self, a):",
        "        self.a = a",
        "",
        "    def get(self):",
        "        return self.a",
        "",
    ]
    open(os.path.join(root, "mod_%03d.py" % i), "w").write("\n".join(lines))
EOF
  (cd "$d" && $NICE "$W/venv/bin/pylint" --jobs=1 --persistent=n --score=y \
      --disable=R0801 billing/__init__.py billing/mod_*.py) > "$OUT/c7_pylint_undefined.log" 2>&1
  grep -E "E0602: Undefined variable" "$OUT/c7_pylint_undefined.log" | needle pylint_undefined
}

# 1b. flake8: one F821 among E501/E231/W291/F401/E302 noise
case_flake8_f821() {
  ensure_venv
  local d=$W/flake8; rm -rf "$d"; mkdir -p "$d/etl"
  $PY - "$d/etl" <<'EOF'
import random, sys, os
root = sys.argv[1]
N = 160
BUG = 71
for i in range(N):
    r = random.Random(7100 + i)
    lines = ["import os", "import re", "", ""]
    for f in range(r.randint(3, 6)):
        cols = ", ".join("'c%d'" % k for k in range(r.randint(8, 14)))
        lines += [
            "def step_%d_%d(rows,limit):" % (i, f),
            "    selected_columns_for_this_step = [%s]" % cols,
            "    out = []   ",
            "    for row in rows[:limit]:",
            "        out.append({k: row.get(k) for k in selected_columns_for_this_step if k in row})",
            "    return out",
            "",
        ]
        if i == BUG and f == 1:
            lines[-3] = "        out.append({k: row.get(k) for k in selected_columns if k in row})"
    open(os.path.join(root, "stage_%03d.py" % i), "w").write("\n".join(lines) + "\n")
EOF
  (cd "$d" && $NICE "$W/venv/bin/flake8" -j1 etl) > "$OUT/c7_flake8_f821.log" 2>&1
  grep -E " F821 " "$OUT/c7_flake8_f821.log" | needle flake8_f821
}

# 1c. go vet: one printf verb/arg mismatch among ~2000 unkeyed-field / unreachable / self-assignment findings
case_govet_printf() {
  local d=$W/govet; rm -rf "$d"; mkdir -p "$d"
  printf 'module example.com/fleet\n\ngo 1.19\n' > "$d/go.mod"
  $PY - "$d" <<'EOF'
import random, sys, os
root = sys.argv[1]
N, BUG = 90, 38
for i in range(N):
    r = random.Random(7200 + i)
    pkg = "unit%03d" % i
    os.makedirs(os.path.join(root, pkg), exist_ok=True)
    src = ["package %s" % pkg, "", "import (", '\t"fmt"', '\t"net"', ")", ""]
    for f in range(r.randint(3, 5)):
        src += ["// Layout%d_%d places the widgets of panel %d." % (i, f, f),
                "func Layout%d_%d(name string, n int) []net.TCPAddr {" % (i, f),
                "\tpts := []net.TCPAddr{"]
        for k in range(r.randint(3, 6)):
            src.append("\t\tnet.TCPAddr{nil, %d, \"\"}," % r.randint(1024, 65535))
        src += ["\t}", "\tn = n", "\tlabel := fmt.Sprintf(\"%s/%d\", name, n)"]
        if i == BUG and f == 1:
            src[-1] = "\tlabel := fmt.Sprintf(\"%s/%d\", n, name)"
        src += ["\t_ = label", "\treturn pts", "\treturn nil", "}", ""]
    open(os.path.join(root, pkg, "layout.go"), "w").write("\n".join(src))
EOF
  (cd "$d" && GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$W/gocache $NICE go vet -p=1 ./...) > "$OUT/c7_govet_printf.log" 2>&1
  grep -E "Sprintf format %s has arg n of wrong type int" "$OUT/c7_govet_printf.log" | needle govet_printf
}

# 2a. go test -race -v: one data race report in the middle of ~900 passing subtests with t.Log lines
case_go_race() {
  local d=$W/gorace; rm -rf "$d"; mkdir -p "$d"
  printf 'module example.com/ledger\n\ngo 1.19\n' > "$d/go.mod"
  cat > "$d/ledger.go" <<'EOF'
package ledger

// Ledger keeps a running balance.
type Ledger struct {
	balance int
	posted  int
	last    int
}

// Post adds an amount to the ledger (no locking: callers are expected to serialise).
func (l *Ledger) Post(amount int) {
	l.balance += amount
	l.posted++
}

// Remember records the most recent amount seen by a posting worker.
func (l *Ledger) Remember(amount int) {
	l.last = amount
}
EOF
  cat > "$d/ledger_test.go" <<'EOF'
package ledger

import (
	"fmt"
	"sync"
	"testing"
)

func TestAccounts(t *testing.T) {
	for i := 0; i < 120; i++ {
		i := i
		t.Run(fmt.Sprintf("acct_%04d", i), func(t *testing.T) {
			l := &Ledger{}
			for k := 0; k < 12; k++ {
				l.Post(i + k)
			}
			t.Logf("account %04d reconciled: %d entries, balance %d", i, l.posted, l.balance)
		})
	}
}

func TestConcurrentPosting(t *testing.T) {
	l := &Ledger{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 0; k < 1000; k++ {
				l.Remember(k)
			}
		}()
	}
	close(start)
	wg.Wait()
	t.Logf("last amount %d", l.last)
}

func TestStatements(t *testing.T) {
	for i := 0; i < 700; i++ {
		i := i
		t.Run(fmt.Sprintf("stmt_%04d", i), func(t *testing.T) {
			l := &Ledger{}
			for k := 0; k < 30; k++ {
				l.Post(k * i)
			}
			t.Logf("statement %04d rendered: %d lines, closing balance %d", i, l.posted, l.balance)
		})
	}
}
EOF
  (cd "$d" && GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$W/gocache $NICE go test -race -v -count=1 ./...) \
      > "$OUT/c7_go_race.log" 2>&1
  grep -xE "WARNING: DATA RACE|Write at 0x[0-9a-f]+ by goroutine [0-9]+:" "$OUT/c7_go_race.log" | needle go_race
}

# 3a. Java service: two worker threads deadlock; SIGQUIT (kill -3) makes the JVM print a thread dump
#     with "Found one Java-level deadlock:" into stdout; the service keeps logging afterwards.
case_java_deadlock() {
  local d=$W/javadl; rm -rf "$d"; mkdir -p "$d/src"
  cat > "$d/src/OrderService.java" <<'EOF'
import java.nio.file.*;
import java.util.Random;

public class OrderService {
    static final Object inventoryLock = new Object();
    static final Object paymentLock = new Object();
    static long clock = 1704103200000L;  // simulated clock: 2024-01-01T10:00:00Z
    static final Random rnd = new Random(7300);

    static String ts() {
        clock += 7 + rnd.nextInt(40);
        return java.time.Instant.ofEpochMilli(clock).toString();
    }

    static void log(String level, String thread, String msg) {
        System.out.println(ts() + " " + level + " [" + thread + "] " + msg);
    }

    static void pause(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        String[] skus = {"SKU-1001", "SKU-2040", "SKU-3307", "SKU-4410", "SKU-5523", "SKU-6102"};
        for (int i = 0; i < 700; i++) {
            log("INFO", "http-nio-8080-exec-" + (1 + i % 8), "order " + (100000 + i) + " accepted: "
                + skus[i % skus.length] + " x" + (1 + rnd.nextInt(5)) + ", total=" + (10 + rnd.nextInt(900)) + ".00 EUR");
            if (i % 50 == 49) log("DEBUG", "pool-stats", "connections active=" + rnd.nextInt(10) + " idle=" + rnd.nextInt(10));
        }
        Thread a = new Thread(() -> {
            synchronized (inventoryLock) { pause(300); synchronized (paymentLock) { log("INFO", "reserve-worker", "reserved"); } }
        }, "reserve-worker");
        Thread b = new Thread(() -> {
            synchronized (paymentLock) { pause(300); synchronized (inventoryLock) { log("INFO", "capture-worker", "captured"); } }
        }, "capture-worker");
        a.setDaemon(true); b.setDaemon(true);
        a.start(); b.start();
        pause(800);
        log("INFO", "main", "settlement batch 42 dispatched to reserve-worker and capture-worker");
        System.out.flush();
        Files.createFile(dir.resolve("ready"));
        while (!Files.exists(dir.resolve("go"))) pause(50);
        for (int i = 700; i < 1500; i++) {
            log("INFO", "http-nio-8080-exec-" + (1 + i % 8), "order " + (100000 + i) + " accepted: "
                + skus[i % skus.length] + " x" + (1 + rnd.nextInt(5)) + ", total=" + (10 + rnd.nextInt(900)) + ".00 EUR");
            if (i % 50 == 49) log("DEBUG", "pool-stats", "connections active=" + rnd.nextInt(10) + " idle=" + rnd.nextInt(10));
            if (i % 100 == 99) log("INFO", "main", "settlement batch 42 still open (" + (i - 699) + " orders queued behind it)");
        }
        System.out.flush();
        System.exit(0);
    }
}
EOF
  (cd "$d" && javac -d classes src/OrderService.java)
  local log="$OUT/c7_java_deadlock.log"
  (cd "$d" && exec $NICE java -Xshare:auto -XX:+UseSerialGC -cp classes OrderService "$d") > "$log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do [ -e "$d/ready" ] && break; sleep 0.1; done
  kill -QUIT "$pid"
  for _ in $(seq 600); do grep -q "^Found [0-9]* deadlock" "$log" && break; sleep 0.1; done
  sleep 0.5
  touch "$d/go"
  wait "$pid"
  grep -x "Found one Java-level deadlock:" "$log" | needle java_deadlock
}

# 3b. Python service: faulthandler.register(SIGUSR1, all_threads=True) dumps every thread's stack in
#     the middle of the service log; the reconciler thread is stuck waiting for the ledger lock.
case_py_faulthandler() {
  local d=$W/pyfault; rm -rf "$d"; mkdir -p "$d"
  cat > "$d/settlement_service.py" <<'EOF'
import faulthandler
import os
import random
import signal
import sys
import threading
import time

faulthandler.register(signal.SIGUSR1, all_threads=True)
rnd = random.Random(7400)
clock = [1704103200.0]
ledger_lock = threading.Lock()
release_gate = threading.Event()


def log(level, who, msg):
    clock[0] += rnd.uniform(0.005, 0.060)
    t = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(clock[0]))
    ms = int((clock[0] % 1) * 1000)
    print("%s.%03d %-5s %-14s %s" % (t, ms, level, who, msg), flush=True)


def hold_ledger_for_snapshot():
    with ledger_lock:
        release_gate.wait()


def reconcile_accounts(batch):
    with ledger_lock:
        return sum(batch)


def serve(n0, n1):
    for i in range(n0, n1):
        log("INFO", "http", "POST /v2/settlements/%06d 201 %dms bytes=%d" % (
            310000 + i, rnd.randint(3, 80), rnd.randint(200, 4000)))
        if i % 40 == 39:
            log("DEBUG", "pool", "db connections in_use=%d idle=%d" % (rnd.randint(0, 9), rnd.randint(0, 9)))


def main():
    serve(0, 450)
    threading.Thread(target=hold_ledger_for_snapshot, name="snapshot", daemon=True).start()
    time.sleep(0.2)
    threading.Thread(target=reconcile_accounts, args=([1, 2, 3],), name="reconciler", daemon=True).start()
    time.sleep(0.2)
    log("INFO", "scheduler", "reconciliation run 2024-01-01 started (reconciler thread)")
    serve(450, 700)
    log("INFO", "admin", "SIGUSR1 received from ops console: dumping thread stacks")
    os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(0.2)
    serve(700, 1500)
    log("INFO", "scheduler", "reconciliation run 2024-01-01 still running")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
EOF
  (cd "$d" && $NICE $PY -u settlement_service.py) > "$OUT/c7_py_faulthandler.log" 2>&1
  grep -E '^  File ".*settlement_service.py", line [0-9]+ in reconcile_accounts$' "$OUT/c7_py_faulthandler.log" \
      | needle py_faulthandler
}

# 2b. asyncio: a fire-and-forget task is garbage-collected while pending; asyncio's last-resort
#     handler prints "Task was destroyed but it is pending!" to stderr among the gateway's access log.
case_py_asyncio_pending() {
  local d=$W/pyasync; rm -rf "$d"; mkdir -p "$d"
  cat > "$d/gateway.py" <<'EOF'
import asyncio
import gc
import random
import sys

rnd = random.Random(7500)
clock = [0.0]


def log(msg):
    clock[0] += rnd.uniform(0.001, 0.030)
    print("[%10.3f] %s" % (clock[0], msg), flush=True)


async def flush_audit_log(batch_id):
    never = asyncio.get_running_loop().create_future()
    log("audit: flushing batch %d" % batch_id)
    await never  # the ack future is dropped by the exporter and never resolved
    log("audit: batch %d flushed" % batch_id)


async def handle(i):
    await asyncio.sleep(0)
    log("GET /api/v1/items/%05d 200 %dB %dms upstream=cache-%d" % (
        rnd.randint(0, 99999), rnd.randint(120, 9000), rnd.randint(1, 90), rnd.randint(1, 4)))


async def main():
    for i in range(450):
        await handle(i)
    asyncio.ensure_future(flush_audit_log(17))
    await asyncio.sleep(0.01)
    for i in range(450, 900):
        await handle(i)
        if i == 460:
            gc.collect()
    for i in range(900, 1700):
        await handle(i)
    log("shutdown: drained %d requests" % 1700)


asyncio.run(main())
EOF
  (cd "$d" && $NICE $PY -u gateway.py) > "$OUT/c7_py_asyncio_pending.log" 2>&1
  grep -E "^Task was destroyed but it is pending!$|^task: <Task pending " "$OUT/c7_py_asyncio_pending.log" \
      | needle py_asyncio_pending
}

# 4a. git bisect run: the verdict "<sha> is the first bad commit" is followed by the commit and a
#     ~1500-file --stat, because the culprit is a mass "reformat" commit that also flips a setting.
case_git_bisect() {
  local d=$W/bisect; rm -rf "$d"; mkdir -p "$d/repo"
  export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
  git -C "$d/repo" init -q -b main
  $PY - <<'EOF' > "$d/stream"
import random
r = random.Random(7600)
NF, NC, BAD = 1600, 1000, 613
files = {"config/settings.ini": "[client]\nretries=3\nbackoff_ms=250\n"}
for k in range(NF):
    files["src/platform/modules/mod_%04d.txt" % k] = "module %04d\nversion 1\nowner team-%d\n" % (k, k % 17)
out = []
mark = 0
t0 = 1700000000
for c in range(NC):
    if c == 0:
        changed = sorted(files)
        msg = "initial import of %d modules" % NF
    elif c == BAD:
        changed = ["config/settings.ini"]
        files["config/settings.ini"] = files["config/settings.ini"].replace("retries=3", "retries=0")
        for k in sorted(r.sample(range(NF), 1500)):
            p = "src/platform/modules/mod_%04d.txt" % k
            files[p] = files[p].replace("module ", "# module ").replace("owner ", "owner: ")
            changed.append(p)
        msg = "style: normalise module headers across the tree"
    else:
        k = r.randrange(NF)
        p = "src/platform/modules/mod_%04d.txt" % k
        files[p] += "change %d: tune parameter %d\n" % (c, r.randrange(100))
        changed = [p]
        msg = "mod_%04d: tune parameter (change %d)" % (k, c)
    mark += 1
    when = "%d +0000" % (t0 + c * 3600)
    out.append("commit refs/heads/main\nmark :%d\n" % mark)
    out.append("author Dev Eloper <dev@example.com> %s\ncommitter Dev Eloper <dev@example.com> %s\n" % (when, when))
    m = msg.encode()
    out.append("data %d\n%s\n" % (len(m), msg))
    for p in changed:
        b = files[p].encode()
        out.append("M 100644 inline %s\ndata %d\n%s\n" % (p, len(b), files[p]))
    out.append("\n")
print("".join(out), end="")
EOF
  git -C "$d/repo" fast-import --quiet < "$d/stream"
  git -C "$d/repo" checkout -q main
  cat > "$d/check.sh" <<'EOF'
#!/bin/sh
# integration check: the client must keep retrying (retries=3)
n=0
for f in src/platform/modules/mod_00*.txt; do n=$((n+1)); done
echo "checking $(git rev-parse --short HEAD): $n modules in the first shard"
for s in 0 1 2 3 4 5 6 7 8 9 10 11; do
  echo "  shard $s: $(ls src/platform/modules | sed -n "$((s*130+1)),$((s*130+130))p" | wc -l) modules loaded"
done
grep '^retries=' config/settings.ini | sed 's/^/  setting: /'
grep -q '^retries=3$' config/settings.ini
EOF
  chmod +x "$d/check.sh"
  first=$(git -C "$d/repo" rev-list --max-parents=0 HEAD)
  (cd "$d/repo" && git bisect start HEAD "$first" >/dev/null && $NICE git bisect run "$d/check.sh"; git bisect reset >/dev/null 2>&1) \
      > "$OUT/c7_git_bisect.log" 2>&1
  grep -E "^[0-9a-f]{40} is the first bad commit$" "$OUT/c7_git_bisect.log" | needle git_bisect
}

# 5a. eslint "stylish": findings are grouped under a file-path header line; one file has 60+
#     warnings and then a single no-undef error, far below its header.
case_eslint_stylish() {
  ensure_npm
  local d=$W/eslint; rm -rf "$d"; mkdir -p "$d/src/widgets"
  cat > "$d/.eslintrc.json" <<'EOF'
{
  "root": true,
  "env": { "browser": true, "es2021": true },
  "parserOptions": { "ecmaVersion": 2021, "sourceType": "module" },
  "rules": {
    "no-undef": "error",
    "no-unused-vars": "warn",
    "no-var": "warn",
    "prefer-const": "warn",
    "eqeqeq": "warn",
    "curly": "warn"
  }
}
EOF
  $PY - "$d/src/widgets" <<'EOF'
import random, sys, os
root = sys.argv[1]
N, BUG = 90, 50
for i in range(N):
    r = random.Random(7700 + i)
    nf = r.randint(2, 4) if i != BUG else 16
    src = []
    for f in range(nf):
        src += [
            "export function render%d_%d(items, options, theme) {" % (i, f),
            "  var total = 0;",
            "  let count = items.length;",
            "  if (count == 0) return null;",
            "  for (var k = 0; k < count; k++) {",
            "    let row = items[k];",
            "    if (row.visible == true) total += row.width;",
            "  }",
            "  var unusedScratch = total * 2;",
            "  return total;",
            "}",
            "",
        ]
    if i == BUG:
        src += [
            "export function summary%d(items) {" % i,
            "  const total = items.reduce((a, b) => a + b.price, 0);",
            "  return formatCurrency(total, 'EUR');",
            "}",
            "",
        ]
    open(os.path.join(root, "widget_%03d.js" % i), "w").write("\n".join(src))
EOF
  (cd "$d" && ESLINT_USE_FLAT_CONFIG=false $NICE "$W/npm/node_modules/.bin/eslint" --format stylish src) \
      > "$OUT/c7_eslint_stylish.log" 2>&1
  { grep -xE "/.*/widget_050\.js" "$OUT/c7_eslint_stylish.log"
    grep -E "'formatCurrency' is not defined +no-undef$" "$OUT/c7_eslint_stylish.log"; } | needle eslint_stylish
}

# 5b. stylelint "string" formatter: grouped by file header; hundreds of warnings (⚠) and one
#     invalid hex colour (✖) in a file whose header is far above it.
case_stylelint_string() {
  ensure_npm
  local d=$W/stylelint; rm -rf "$d"; mkdir -p "$d/styles/components"
  cat > "$d/.stylelintrc.json" <<'EOF'
{
  "extends": "stylelint-config-standard",
  "defaultSeverity": "warning",
  "rules": {
    "color-no-invalid-hex": [true, { "severity": "error" }]
  }
}
EOF
  $PY - "$d/styles/components" <<'EOF'
import random, sys, os
root = sys.argv[1]
N, BUG = 75, 40
for i in range(N):
    r = random.Random(7800 + i)
    nb = r.randint(3, 5) if i != BUG else 14
    css = []
    for b in range(nb):
        css += [
            ".panel_%d_%d .headerTitle {" % (i, b),
            "  color: #FFFFFF;",
            "  margin: 0px 0px %dpx 0px;" % r.randint(1, 20),
            "  background: rgba(0, 0, 0, 0.%d);" % r.randint(1, 9),
            "  font-weight: bold;",
            "}",
            "",
        ]
        if i == BUG and b == 12:
            css[-6] = "  color: #12345g;"
    open(os.path.join(root, "panel_%03d.css" % i), "w").write("\n".join(css))
EOF
  (cd "$d" && $NICE "$W/npm/node_modules/.bin/stylelint" --config-basedir "$W/npm" --formatter string "styles/**/*.css") \
      > "$OUT/c7_stylelint_string.log" 2>&1
  { grep -xE "styles/components/panel_040\.css" "$OUT/c7_stylelint_string.log"
    grep -E "Unexpected invalid hex color \"#12345g\"" "$OUT/c7_stylelint_string.log"; } | needle stylelint_string
}

# 6a. ldd over a directory of tools: one tool needs a shared library that was not shipped;
#     ldd reports it as "=> not found" among ~1800 resolved entries (address randomisation off).
case_ldd_not_found() {
  local d=$W/ldd; rm -rf "$d"; mkdir -p "$d/lib" "$d/bin" "$d/obj"
  local libs=""
  for n in alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november \
           oscar papa quebec romeo sierra tango quota; do
    printf 'int %s_version(void) { return 1; }\n' "$n" > "$d/obj/$n.c"
    $NICE gcc -shared -fPIC -Wl,-soname,lib$n.so.1 -o "$d/lib/lib$n.so.1" "$d/obj/$n.c"
    ln -sf "lib$n.so.1" "$d/lib/lib$n.so"
  done
  printf 'int main(void) { return 0; }\n' > "$d/obj/main.c"
  $NICE gcc -c -o "$d/obj/main.o" "$d/obj/main.c"
  $PY - "$d" <<'EOF' > "$d/link.sh"
import random, sys
d = sys.argv[1]
names = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango".split()
r = random.Random(7900)
for i in range(150):
    pick = sorted(r.sample(names, r.randint(8, 12)))
    if i == 81:
        pick = sorted(pick + ["quota"])
    print("gcc -o %s/bin/tool_%03d %s/obj/main.o -L%s/lib -Wl,--no-as-needed %s -Wl,-rpath,%s/lib" % (
        d, i, d, d, " ".join("-l" + n for n in pick), d))
EOF
  $NICE sh "$d/link.sh"
  rm -f "$d/lib/libquota.so.1" "$d/lib/libquota.so"
  (cd "$d" && setarch "$(uname -m)" -R ldd bin/tool_*) > "$OUT/c7_ldd_not_found.log" 2>&1
  grep -xE "$(printf '\t')libquota\.so\.1 => not found" "$OUT/c7_ldd_not_found.log" | needle ldd_not_found
}

# 6b. git fsck --full on a repository with thousands of dangling blobs (abandoned "git add"s) and
#     one missing blob: "missing blob <sha>" sits among the "dangling blob" lines.
case_git_fsck_missing() {
  local d=$W/fsck; rm -rf "$d"; mkdir -p "$d/repo"
  export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
  export GIT_AUTHOR_NAME="Dev Eloper" GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME="Dev Eloper" \
         GIT_COMMITTER_EMAIL=dev@example.com GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
  cd "$d/repo" || return 1
  git init -q -b main
  mkdir -p assets
  for i in $(seq -w 1 40); do printf 'asset %s\nchecksum-seed %s\n' "$i" "$((10#$i * 7919))" > "assets/a$i.txt"; done
  git add . && git commit -q -m "add assets"
  $PY - <<'EOF'
import os
os.makedirs("/tmp/c7-work/fsck/drafts", exist_ok=True)
for i in range(2600):
    open("/tmp/c7-work/fsck/drafts/d%05d" % i, "w").write("draft %d of the release notes\n" % i)
EOF
  ls -d "$d"/drafts/* | git hash-object -w --stdin-paths > /dev/null
  local victim; victim=$(git rev-parse HEAD:assets/a17.txt)
  rm -f ".git/objects/${victim:0:2}/${victim:2}"
  $NICE git fsck --full > "$OUT/c7_git_fsck_missing.log" 2>&1
  cd - > /dev/null
  grep -xE "missing blob $victim" "$OUT/c7_git_fsck_missing.log" | needle git_fsck_missing
}

# 6c. patch(1) applying a vendor diff to a tree that moved on: hundreds of hunks "succeeded ...
#     (offset N lines)" and one hunk that only applied "with fuzz 2" (its context no longer matches).
case_patch_fuzz() {
  local d=$W/patch; rm -rf "$d"; mkdir -p "$d"
  $PY - "$d" <<'EOF'
import os, random, sys
d = sys.argv[1]
N, BUG = 600, 231
for tree in ("a", "b", "work"):
    os.makedirs(os.path.join(d, tree, "src"), exist_ok=True)
for i in range(N):
    r = random.Random(8000 + i)
    base = ["/* unit %03d */" % i] + ["static int v%03d_%02d = %d;" % (i, k, r.randint(0, 999)) for k in range(60)]
    new = list(base)
    for pos in (10, 30, 50):
        new[pos] = new[pos].replace(";", " + 1;")
    work = ["/* vendored copy, local header line %d */" % k for k in range(1 + i % 9)] + base
    if i == BUG:
        # local edits right next to the second hunk: its context only matches with fuzz
        off = len(work) - len(base)
        work[off + 27] = work[off + 27].replace("static int", "static long")
        work[off + 28] = work[off + 28].replace("static int", "static long")
    for tree, lines in (("a", base), ("b", new), ("work", work)):
        open(os.path.join(d, tree, "src", "unit_%03d.c" % i), "w").write("\n".join(lines) + "\n")
EOF
  (cd "$d" && diff -ru a b > vendor.diff; true)
  (cd "$d/work" && $NICE patch -p1 < ../vendor.diff) > "$OUT/c7_patch_fuzz.log" 2>&1
  grep -E "^Hunk #[0-9]+ succeeded at [0-9]+ with fuzz [0-9]+ " "$OUT/c7_patch_fuzz.log" | needle patch_fuzz
}

# 6d. make: a circular prerequisite between two generated pages is silently dropped
#     ("make: Circular a <- b dependency dropped.") in the middle of ~1800 echoed recipes.
case_make_circular() {
  local d=$W/makecirc; rm -rf "$d"; mkdir -p "$d/src"
  $PY - "$d" <<'EOF'
import os, sys
d = sys.argv[1]
for i in range(1800):
    open(os.path.join(d, "src", "page_%04d.in" % i), "w").write("page %d version @VERSION@\n" % i)
EOF
  cat > "$d/Makefile" <<'EOF'
VERSION := 1.4.2
OUTS := $(patsubst src/%.in,out/%.html,$(sort $(wildcard src/*.in)))

all: $(OUTS)

out/%.html: src/%.in | out
	sed -e 's/@VERSION@/$(VERSION)/' -e 's/^/<p>/' $< > $@

out:
	mkdir -p $@

# cross-links between the two release-notes pages
out/page_0812.html: out/page_0813.html
out/page_0813.html: out/page_0812.html
EOF
  (cd "$d" && $NICE make -j1 all) > "$OUT/c7_make_circular.log" 2>&1
  grep -E "^make: Circular .* dependency dropped\.$" "$OUT/c7_make_circular.log" | needle make_circular
}

# ---------------------------------------------------------------- check
check() {
  $PY - "$OUT" <<'EOF'
import os, re, sys, glob
out = sys.argv[1]
CASES = os.environ["CASES"].split()
KW = re.compile(r"error|fail|exception|fatal|panic|assert|traceback|killed|abort|segmentation|"
                r"no such file|permission denied|timed out|exit status", re.I)
# needles allowed to carry a keyword/"warning" because the brief names them (kind 2 / kind 5)
ALLOW = {"go_race": re.compile(r"^WARNING: DATA RACE$|^Write at "),
         "eslint_stylish": re.compile(r"\berror\b")}
ok = True
rows = []
for log in sorted(glob.glob(os.path.join(out, "c7_*.log"))):
    name = os.path.basename(log)[3:-4]
    nf = log[:-4] + ".needle"
    if not os.path.exists(nf) or name not in CASES:
        continue
    data = open(log, "rb").read()
    size = len(data)
    needles = [l for l in open(nf, "rb").read().split(b"\n") if l]
    if not (60000 <= size <= 400000):
        print("SIZE", name, size); ok = False
    if not needles:
        print("NO NEEDLE", name); ok = False
    lines = data.split(b"\n")
    for n in needles:
        cnt = sum(1 for l in lines if l == n)
        off = -1
        if cnt == 1:
            off = data.find(n + b"\n") if data.startswith(n + b"\n") else data.find(b"\n" + n + b"\n") + 1
        good = cnt == 1 and 5120 <= off <= size - 46080
        txt = n.decode("utf-8", "replace")
        kw = KW.search(txt) or re.search("warning", txt, re.I)
        if kw and not (name in ALLOW and ALLOW[name].search(txt)):
            print("KEYWORD in needle", name, repr(txt)); good = False
        if not good:
            ok = False
        rows.append((name, size, off, cnt, "ok" if good else "BAD", txt))
print("%-22s %7s %7s %3s %-4s  %s" % ("log", "size", "offset", "n", "chk", "needle"))
for r in rows:
    print("%-22s %7d %7d %3d %-4s  %s" % (r[0], r[1], r[2], r[3], r[4], r[5][:110]))
print("ALL OK" if ok else "SOME CHECKS FAILED")
sys.exit(0 if ok else 1)
EOF
}

ALL_CASES="pylint_undefined flake8_f821 govet_printf go_race java_deadlock py_faulthandler py_asyncio_pending git_bisect eslint_stylish stylelint_string ldd_not_found git_fsck_missing patch_fuzz make_circular"

main() {
  local cases=("$@")
  if [ ${#cases[@]} -eq 0 ]; then cases=($ALL_CASES); fi
  for c in "${cases[@]}"; do
    [ "$c" = check ] && continue
    echo "== $c" >&2
    "case_$c"
  done
  CASES="$ALL_CASES" check
}
main "$@"
