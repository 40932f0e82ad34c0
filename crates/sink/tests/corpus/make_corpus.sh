#!/usr/bin/env bash
# Regenerates the real-tool-output corpus used to measure the `smart` output
# window (head + tail + salient lines from the elided middle).
#
# Every <name>.log is the merged stdout+stderr (2>&1) of a real command run by
# this script; nothing is hand-edited afterwards. Logs are padded to > 60 KB
# only by making the real workload bigger (more files, more tests, verbose
# flags, loops). Each <name>.needle holds the one line (verbatim, no trailing
# newline) a model must see to act on that output; it is picked from the log
# with a pattern and checked to occur exactly once. README.md is regenerated
# from the logs (byte offset, line number, size, line count of each needle).
#
# Determinism: generators use fixed seeds and counter-based timestamps, files
# get fixed mtimes, git uses fixed dates/identity, LC_ALL=C, and everything runs
# in a fixed work dir so paths in tracebacks are stable. What cannot be pinned
# (wall-clock durations printed by unittest/node/npm, pip's random temp dir
# names, the PID in bash's "Segmentation fault" message) varies between runs.
#
# Tools used: gcc, make, rustc (plain, tiny files), javac, python3 (unittest,
# logging, json.tool), pip, node (--test), npm, perl, bash -x, coreutils
# (ls, cp, sha256sum, head), find, git.
#
# Usage: bash make_corpus.sh        (takes ~1-2 minutes on 2 cores)

set -u
export LC_ALL=C LANG=C TZ=UTC
export PYTHONHASHSEED=0 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
export NO_COLOR=1 NODE_DISABLE_COLORS=1
unset FORCE_COLOR CLICOLOR_FORCE
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Corpus Bot" GIT_AUTHOR_EMAIL="corpus@example.invalid"
export GIT_COMMITTER_NAME="Corpus Bot" GIT_COMMITTER_EMAIL="corpus@example.invalid"
export GIT_AUTHOR_DATE="2024-05-01T12:00:00Z" GIT_COMMITTER_DATE="2024-05-01T12:00:00Z"

OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Fixed (not mktemp) so absolute paths that tools print are identical per run.
WORK="${CORPUS_WORKDIR:-/tmp/agent-exec-corpus-work}"
rm -rf "$WORK"
mkdir -p "$WORK"
# Only this script's logs: make_corpus_classes.sh owns the c*_ and io_* ones.
OWN="gcc_cascade rustc_cascade javac_modules unittest_mid unittest_end node_test_tap service_log make_k pip_missing_path npm_broken_json ls_lR_end find_missing json_large binary_noise bash_xtrace git_apply_reject git_show_stat_end perl_report segfault_tests"
for name in $OWN; do rm -f "$OUT/$name.log" "$OUT/$name.needle"; done

step() { printf '== %s\n' "$1" >&2; }

# ---------------------------------------------------------------------------
# 1. gcc_cascade: one gcc invocation over 60 C files. Most files only produce
#    -Wall/-Wextra/-Wconversion warnings; src/mod_031.c misses the ';' after a
#    typedef'd struct, which cascades into 23 follow-up errors.
#    Needle: the root-cause error (first error of the cascade).
step gcc_cascade
mkdir -p "$WORK/gcc/src"
python3 - "$WORK/gcc/src" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(7)
for i in range(1, 61):
    if i == 31:
        continue
    parts = ['#include <stdio.h>\n#include <string.h>\n\n']
    for j in range(3):
        parts.append(f'''int mod{i}_fn{j}(int count, const char *label, unsigned limit)
{{
    int unused_{j} = {r.randint(1, 99)};
    short narrow = count * {r.randint(2, 9)};
    char buf[32];
    for (int k = 0; k < limit; k++) {{
        narrow += k;
    }}
    snprintf(buf, sizeof buf, "%s-%d", label, narrow);
    return (int)strlen(buf);
}}

''')
    open(f"{d}/mod_{i:03d}.c", "w").write("".join(parts))

# The broken file: missing ';' after the typedef on line 11.
fns = ['''#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define FRAME_MAX 4096

typedef struct frame {
    uint8_t *data;
    size_t len;
    uint32_t crc;
} frame_t

static uint32_t frame_crc(const frame_t *f)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < f->len; i++)
        c = (c >> 8) ^ (c ^ f->data[i]);
    return ~c;
}
''']
for n in ("init", "reset", "fill", "trim", "shift", "verify", "clone", "merge", "split", "seal"):
    fns.append(f'''
int frame_{n}(frame_t *dst, const frame_t *src, size_t n)
{{
    if (src->len > FRAME_MAX || n > src->len)
        return -1;
    memcpy(dst->data, src->data, n);
    dst->len = n;
    dst->crc = frame_crc(dst);
    return dst->len == src->len;
}}
''')
open(f"{d}/mod_031.c", "w").write("".join(fns))
EOF
( cd "$WORK/gcc" && gcc -std=c11 -Wall -Wextra -Wconversion -Wshadow -c src/*.c ) \
    > "$OUT/gcc_cascade.log" 2>&1

# ---------------------------------------------------------------------------
# 2. rustc_cascade: two plain rustc invocations like a tiny build script: a
#    library crate that compiles with many unused-variable warnings, then a
#    binary that imports a module under the wrong name (root cause) and has a
#    pile of type errors after it.
#    Needle: the unresolved-import error.
step rustc_cascade
mkdir -p "$WORK/rust/out"
python3 - "$WORK/rust" <<'EOF'
import sys
d = sys.argv[1]
lib = ['pub mod price {\n    #[derive(Debug, Clone, Copy)]\n    pub struct Price {\n        pub cents: u32,\n    }\n}\n\n']
for i in range(70):
    lib.append(f'''pub fn normalize_{i:03d}(input: &str, factor: u32) -> usize {{
    let trimmed = input.trim();
    let scaled = factor * {i + 2};
    let unused_len = trimmed.len();
    input.len()
}}

''')
open(f"{d}/util.rs", "w").write("".join(lib))
bin_ = ['''use std::collections::HashMap;
use util::pricing::Price;

#[derive(Debug, Clone)]
pub struct Order {
    pub id: u64,
    pub qty: u32,
    pub price: Price,
}

''']
for i in range(80):
    bin_.append(f'''pub fn handler_{i:03d}(orders: &HashMap<u64, Order>, id: u64) -> Option<u64> {{
    let o = orders.get(&id)?;
    let total: u64 = o.qty * {i + 3};
    let label: String = o.id;
    Some(total)
}}

''')
bin_.append("fn main() {}\n")
open(f"{d}/orders.rs", "w").write("".join(bin_))
EOF
( cd "$WORK/rust" \
  && rustc --edition 2021 --crate-type lib --crate-name util -o out/libutil.rlib util.rs \
  ; rustc --edition 2021 --crate-type bin --crate-name orders -L out --extern util=out/libutil.rlib -o out/orders orders.rs
) > "$OUT/rustc_cascade.log" 2>&1

# ---------------------------------------------------------------------------
# 3. javac_modules: three javac invocations (core, billing, api) with
#    -Xlint:all. core and api only warn; billing imports a package that does
#    not exist, followed by cannot-find-symbol errors.
#    Needle: "package com.acme.money does not exist".
step javac_modules
python3 - "$WORK/java" <<'EOF'
import os, sys
d = sys.argv[1]
def ledger(mod, pkg, cls, i):
    p = f"{d}/{mod}/src/com/acme/{pkg}"
    os.makedirs(p, exist_ok=True)
    open(f"{p}/{cls}.java", "w").write(f'''package com.acme.{pkg};

import java.util.*;

public class {cls} {{
    private List entries = new ArrayList();
    private Map totals = new HashMap();

    public void add(String k, Integer v) {{
        entries.add(k);
        totals.put(k, v);
        Date d = new Date(2024, 1, {i % 28 + 1});
        Integer boxed = new Integer(v);
    }}
}}
''')
for i in range(22):
    ledger("core", "core", f"Ledger{i:02d}", i)
for i in range(8):
    ledger("billing", "billing", f"Account{i:02d}", i)
p = f"{d}/billing/src/com/acme/billing"
open(f"{p}/Invoice.java", "w").write('''package com.acme.billing;

import com.acme.money.Money;
import java.util.List;

public class Invoice {
    private final Money total;
    public Invoice(Money total) { this.total = total; }
    public Money total() { return total.plus(Money.ZERO); }
    public int lines(List<String> l) { return l.size() + total.cents(); }
    public Money tax(Money rate) { return total.times(rate); }
}
''')
for i in range(22):
    ledger("api", "api", f"Endpoint{i:02d}", i)
EOF
( cd "$WORK/java" \
  && for m in core billing api; do
       echo "> javac -Xlint:all -Xmaxwarns 10000 --release 17 -d build/$m ($m)"
       javac -Xlint:all -Xmaxwarns 10000 --release 17 -d "build/$m" $(find "$m/src" -name '*.java' | sort)
       echo "> exit $?"
     done
) > "$OUT/javac_modules.log" 2>&1

# ---------------------------------------------------------------------------
# 4. unittest_mid: a CI loop running 14 python unittest modules verbosely, one
#    module at a time. tests/test_invoices.py (5th) has one failing test, so
#    its traceback lands in the middle of the run.
#    Needle: the AssertionError line of that failure.
step unittest_mid
python3 - "$WORK/pyt" <<'EOF'
import os, sys
d = sys.argv[1]
os.makedirs(f"{d}/tests", exist_ok=True)
open(f"{d}/tests/__init__.py", "w").write("")
mods = ["accounts", "addresses", "currency", "discounts", "invoices", "ledger",
        "orders", "payments", "refunds", "reports", "shipping", "taxes",
        "users", "webhooks"]
for m in mods:
    cls = m.capitalize() + "Tests"
    lines = ["import unittest\n\n\n", f"class {cls}(unittest.TestCase):\n"]
    for k in range(110):
        if m == "invoices" and k == 37:
            lines.append(f'''    def test_{m}_case_{k:03d}(self):
        items = [(3, 250), (2, 200), (1, 55)]
        total = sum(q * p for q, p in items) + 0
        self.assertEqual(total, 1250, "invoice INV-0437 total mismatch")

''')
        else:
            lines.append(f'''    def test_{m}_case_{k:03d}(self):
        self.assertEqual(sum(range({k})), {k * (k - 1) // 2})

''')
    lines.append('\nif __name__ == "__main__":\n    unittest.main()\n')
    open(f"{d}/tests/test_{m}.py", "w").write("".join(lines))
EOF
( cd "$WORK/pyt" \
  && for t in tests/test_*.py; do
       m="${t%.py}"; m="${m//\//.}"
       echo "### python -m unittest -v $m"
       python3 -m unittest -v "$m"
     done
) > "$OUT/unittest_mid.log" 2>&1

# ---------------------------------------------------------------------------
# 5. unittest_end: one verbose unittest run of 1000 tests, one failure and one
#    error; the tracebacks and summary come at the very end.
#    Needle (end): the AssertionError line of the failing test.
step unittest_end
mkdir -p "$WORK/pyt2"
python3 - "$WORK/pyt2" <<'EOF'
import sys
d = sys.argv[1]
lines = ["import unittest\nfrom decimal import Decimal\n\n\n", "class PricingTests(unittest.TestCase):\n"]
for k in range(1000):
    if k == 812:
        lines.append(f'''    def test_price_rounding_{k:04d}(self):
        price = Decimal("19.994").quantize(Decimal("0.1"))
        self.assertEqual(price, Decimal("19.99"))

''')
    elif k == 903:
        lines.append(f'''    def test_price_parse_{k:04d}(self):
        self.assertEqual(int("N/A"), 0)

''')
    else:
        lines.append(f'''    def test_price_case_{k:04d}(self):
        self.assertEqual(Decimal("{k}.50") * 2, Decimal("{2 * k + 1}.00"))

''')
open(f"{d}/test_pricing.py", "w").write("".join(lines))
EOF
( cd "$WORK/pyt2" && python3 -m unittest -v test_pricing ) > "$OUT/unittest_end.log" 2>&1

# ---------------------------------------------------------------------------
# 6. node_test_tap: node's built-in test runner (TAP reporter) over 1200
#    tests in one file; test 400 fails with a custom assertion message that
#    shows up inline in the TAP YAML block.
#    Needle: the "error:" line of that YAML block.
step node_test_tap
mkdir -p "$WORK/node/test"
cat > "$WORK/node/test/invoices.test.js" <<'EOF'
'use strict';
const test = require('node:test');
const assert = require('node:assert');

function total(id) {
  // INV-0437 has a line item with the wrong quantity.
  return id === 437 ? 1205 : 1250;
}

for (let i = 38; i < 1238; i++) {
  const id = String(i).padStart(4, '0');
  test(`invoice INV-${id} totals`, () => {
    assert.ok(total(i) === 1250,
      `invoice INV-${id}: expected total 1250 but got ${total(i)}`);
  });
}
EOF
( cd "$WORK/node" && node --test --test-reporter=tap test/invoices.test.js ) > "$OUT/node_test_tap.log" 2>&1

# ---------------------------------------------------------------------------
# 7. service_log: a Python worker that logs INFO/DEBUG/WARNING lines with a
#    counter-based clock; job 517 raises deep inside a helper, which is
#    logged with logger.exception() and the worker carries on.
#    Needle: the exception line ending the traceback.
step service_log
mkdir -p "$WORK/svc"
cat > "$WORK/svc/worker.py" <<'EOF'
import logging
import random
import sys


class CounterClockFormatter(logging.Formatter):
    """Timestamps from a counter instead of the wall clock (deterministic)."""

    def __init__(self, fmt):
        super().__init__(fmt)
        self.tick = 0

    def formatTime(self, record, datefmt=None):
        self.tick += 37
        ms = self.tick
        return "2024-05-01 12:%02d:%02d,%03d" % (ms // 60000 % 60, ms // 1000 % 60, ms % 1000)


handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(CounterClockFormatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
logging.basicConfig(level=logging.DEBUG, handlers=[handler])
log = logging.getLogger("billing.worker")
rng = random.Random(1234)


def load_customer(job):
    return job["payload"]["customer_id"]


def compute_invoice(job):
    customer = load_customer(job)
    return {"customer": customer, "amount": job["payload"]["amount"]}


def handle(job):
    log.debug("job %d: fetched payload (%d bytes)", job["id"], rng.randint(200, 4000))
    inv = compute_invoice(job)
    log.info("job %d: invoice for customer %s amount=%d.%02d EUR", job["id"],
             inv["customer"], inv["amount"] // 100, inv["amount"] % 100)


log.info("worker starting: queue=invoices concurrency=4 pid=4242")
for job_id in range(1, 1201):
    payload = {"customer_id": "C%05d" % rng.randint(1, 99999), "amount": rng.randint(100, 999999)}
    if job_id == 517:
        del payload["customer_id"]
        payload["customer"] = "C00017"
    job = {"id": job_id, "payload": payload}
    log.info("job %d: dequeued from invoices (attempt 1)", job_id)
    if rng.random() < 0.01:
        log.warning("job %d: upstream latency %d ms above budget", job_id, rng.randint(800, 3000))
    try:
        handle(job)
    except Exception:
        log.exception("job %d: unhandled error while processing; moving to dead-letter queue", job_id)
        continue
    log.info("job %d: acked", job_id)
log.info("worker drained queue: processed=1200 dead_lettered=1")
EOF
( cd "$WORK/svc" && python3 worker.py ) > "$OUT/service_log.log" 2>&1

# ---------------------------------------------------------------------------
# 8. make_k: `make -k` over 1000 tiny C translation units; unit_0347.c uses
#    an undeclared macro, so exactly one target fails and make keeps going.
#    Needle: make's "*** [...] Error 1" line for that target.
step make_k
mkdir -p "$WORK/mk/src"
python3 - "$WORK/mk" <<'EOF'
import sys
d = sys.argv[1]
for i in range(1, 1001):
    scale = "UNIT_SCALE" if i == 347 else str(i % 17 + 1)
    open(f"{d}/src/unit_{i:04d}.c", "w").write(
        f"int unit_{i:04d}(int x)\n{{\n    return x * {scale};\n}}\n")
open(f"{d}/Makefile", "w").write('''CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Wextra -DBUILD_ID=corpus -fno-common
SRCS = $(sort $(wildcard src/*.c))
OBJS = $(patsubst src/%.c,build/obj/%.o,$(SRCS))

all: $(OBJS)

build/obj:
\tmkdir -p build/obj

build/obj/%.o: src/%.c | build/obj
\t$(CC) $(CFLAGS) -c $< -o $@

.PHONY: all
''')
EOF
( cd "$WORK/mk" && make -k -j1 ) > "$OUT/make_k.log" 2>&1

# ---------------------------------------------------------------------------
# 9. pip_missing_path: a bootstrap loop installing 60 local wheels one by one
#    with `pip install -vv`; one requirement points at a path that does not
#    exist (./libs/acme-metrics).
#    Needle: pip's "ERROR: Invalid requirement" line.
step pip_missing_path
python3 - "$WORK/pip" <<'EOF'
import base64, hashlib, os, sys, zipfile
d = sys.argv[1]
os.makedirs(f"{d}/wheels", exist_ok=True)
names = ["core", "auth", "cache", "cli", "config", "db", "events", "files", "geo",
         "http", "i18n", "jobs", "kv", "mail", "media", "notify", "orm", "pay",
         "queue", "rates", "search", "sessions", "sms", "storage", "stream",
         "tasks", "tenants", "text", "time", "tokens", "trace", "units", "upload",
         "users", "vault", "views", "web", "ws", "xml", "yaml", "zip", "audit",
         "batch", "bills", "cron", "crypto", "diff", "dns", "email", "flags",
         "forms", "graph", "hooks", "images", "ledger", "locks", "logs", "maps",
         "money", "pdf"]
def rec(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={h},{len(data)}"
reqs = []
for n in names:
    mod, dist, ver = f"acme_{n}", f"acme-{n}", "1.4.2"
    files = {f"{mod}/__init__.py": f"__version__ = {ver!r}\n".encode()}
    di = f"{mod}-{ver}.dist-info"
    files[f"{di}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {ver}\nSummary: ACME {n} helpers\n".encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: corpus\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{di}/RECORD"] = ("\n".join([f"{k},{rec(v)}" for k, v in files.items()] + [f"{di}/RECORD,,"]) + "\n").encode()
    whl = f"wheels/{mod}-{ver}-py3-none-any.whl"
    with zipfile.ZipFile(f"{d}/{whl}", "w") as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, date_time=(2024, 1, 1, 0, 0, 0)), v)
    reqs.append("./" + whl)
reqs.insert(14, "./libs/acme-metrics")
open(f"{d}/requirements-local.txt", "w").write("\n".join(reqs) + "\n")
EOF
( cd "$WORK/pip" \
  && while read -r req; do
       echo "--> pip install -vv --no-index --no-deps --target site $req"
       python3 -m pip install -vv --no-index --no-deps --no-cache-dir --target site "$req"
     done < requirements-local.txt
) > "$OUT/pip_missing_path.log" 2>&1

# ---------------------------------------------------------------------------
# 10. npm_broken_json: a monorepo loop running `npm run build --loglevel
#     verbose` in 30 packages; packages/pkg-09 has a trailing comma in its
#     package.json, so npm fails with EJSONPARSE there and the loop continues.
#     Needle: "npm error code EJSONPARSE".
step npm_broken_json
python3 - "$WORK/npm" <<'EOF'
import json, os, sys
d = sys.argv[1]
os.makedirs(f"{d}/scripts", exist_ok=True)
open(f"{d}/scripts/build.js", "w").write('''const path = require('path');
const name = path.basename(process.cwd());
for (let i = 0; i < 40; i++) {
  const f = `src/${name}/module_${String(i).padStart(2, '0')}.ts`;
  console.log(`[${name}] compiled ${f} -> dist/${name}/module_${String(i).padStart(2, '0')}.js (${1000 + i * 37} bytes)`);
}
console.log(`[${name}] build complete: 40 modules, 0 errors, 0 warnings`);
''')
for i in range(1, 31):
    p = f"{d}/packages/pkg-{i:02d}"
    os.makedirs(p, exist_ok=True)
    pj = {"name": f"@acme/pkg-{i:02d}", "version": "2.3.0", "private": True,
          "scripts": {"build": "node ../../scripts/build.js"}}
    text = json.dumps(pj, indent=2) + "\n"
    if i == 9:
        text = text.replace('"private": true', '"private": true,\n  "dependencies": {\n    "@acme/pkg-01": "2.3.0",\n  }')
    open(f"{p}/package.json", "w").write(text)
EOF
: > "$WORK/npmrc"   # empty user config: no machine-specific ~/.npmrc
( cd "$WORK/npm" \
  && for p in packages/*; do
       echo "==> $p: npm run build"
       ( cd "$p" && npm run build --loglevel verbose --cache "$WORK/npm-cache" --logs-dir "$WORK/npm-logs" --userconfig "$WORK/npmrc" --no-update-notifier )
     done
) > "$OUT/npm_broken_json.log" 2>&1

# ---------------------------------------------------------------------------
# 11. ls_lR_end: `ls -lR` of a generated release tree (fixed mtimes); the last
#     line (last file of the last directory) is what the user asked about.
#     Needle (end, non-salient): the last line of the listing.
step ls_lR_end
python3 - "$WORK/tree" <<'EOF'
import os, sys
d = sys.argv[1]
comps = ["api", "auth", "billing", "cache", "cli", "core", "db", "events", "jobs", "web"]
for c in comps:
    for sub in ["src", "tests", "docs", "assets"]:
        p = f"{d}/release/{c}/{sub}"
        os.makedirs(p, exist_ok=True)
        for k in range(38):
            open(f"{p}/{sub}_{c}_{k:03d}.dat", "w").write("x" * ((k * 97 + len(c) * 13) % 5000))
EOF
find "$WORK/tree" -exec touch -h -d '2024-03-01 09:30:00' {} +
( cd "$WORK/tree" && ls -lR --time-style=long-iso release ) > "$OUT/ls_lR_end.log" 2>&1

# ---------------------------------------------------------------------------
# 12. find_missing: `find` over three roots, the middle one does not exist.
#     Needle: find's "No such file or directory" line for that root.
step find_missing
python3 - "$WORK/findtree" <<'EOF'
import os, sys
d = sys.argv[1]
for root, n in (("src", 900), ("docs", 1500)):
    for k in range(n):
        p = f"{d}/{root}/pkg{k % 20:02d}/sub{k % 7}"
        os.makedirs(p, exist_ok=True)
        open(f"{p}/file_{k:04d}.{'rs' if root == 'src' else 'md'}", "w").write("y" * (k % 300))
EOF
find "$WORK/findtree" -exec touch -h -d '2024-03-01 09:30:00' {} +
( cd "$WORK/findtree" && find src vendor/protobuf docs -type f -printf '%M %6s %p\n' ) \
    > "$OUT/find_missing.log" 2>&1

# ---------------------------------------------------------------------------
# 13. json_large: `python -m json.tool` pretty-printing a 1200-record API dump;
#     one record has status "failed" and an "error" field.
#     Needle: that record's "error" line.
step json_large
python3 - "$WORK/json" <<'EOF'
import json, os, random, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
r = random.Random(99)
recs = []
for i in range(1200):
    rec = {"id": f"shard-{i:04d}", "region": r.choice(["eu-west-1", "us-east-2", "ap-south-1"]),
           "status": "ok", "bytes": r.randint(10**5, 10**9),
           "replicas": [{"node": f"n{r.randint(1, 64):02d}", "lag_ms": r.randint(0, 40)} for _ in range(2)]}
    if i == 417:
        rec["status"] = "failed"
        rec["error"] = "connection reset by peer while streaming shard-0417 to n23 (after 3 retries)"
    recs.append(rec)
json.dump({"cluster": "prod-eu", "generated": "2024-05-01T12:00:00Z", "shards": recs},
          open(f"{d}/shards.json", "w"), separators=(",", ":"))
EOF
( cd "$WORK/json" && python3 -m json.tool shards.json ) > "$OUT/json_large.log" 2>&1

# ---------------------------------------------------------------------------
# 14. binary_noise: a small C program dumps pseudo-random binary records
#     (fixed xorshift seed) to stdout; for block 0037 it fails to open the
#     block file and reports the real errno to stderr, then carries on.
#     Needle: that error line, surrounded by binary garbage.
step binary_noise
mkdir -p "$WORK/bin/blocks"
cat > "$WORK/bin/dumpblk.c" <<'EOF'
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t s = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

int main(void)
{
    for (int blk = 0; blk < 100; blk++) {
        char path[64];
        snprintf(path, sizeof path, "blocks/%04d.dat", blk);
        if (blk == 37) {
            FILE *f = fopen(path, "rb");
            if (!f) {
                fflush(stdout);
                fprintf(stderr, "dumpblk: cannot open '%s': %s\n", path, strerror(errno));
                continue;
            }
            fclose(f);
        }
        /* one block = 8 records of random bytes, each record ends in '\n' */
        for (int rec = 0; rec < 8; rec++) {
            int len = 40 + (int)(next() % 200);
            for (int i = 0; i < len; i++) {
                unsigned char c = (unsigned char)next();
                if (c == '\n') c = 0;
                putchar(c);
            }
            putchar('\n');
        }
    }
    fflush(stdout);
    return 0;
}
EOF
( cd "$WORK/bin" && gcc -O2 -o dumpblk dumpblk.c ) >&2
( cd "$WORK/bin" && ./dumpblk ) > "$OUT/binary_noise.log" 2>&1

# ---------------------------------------------------------------------------
# 15. bash_xtrace: a deploy script run under `bash -x` (no -e) that copies
#     and checksums 400 assets; one source asset is missing, cp fails in the
#     middle and the script keeps going.
#     Needle: cp's "cannot stat ... No such file or directory" line.
step bash_xtrace
mkdir -p "$WORK/deploy/assets/img" "$WORK/deploy/public"
for i in $(seq -w 1 400); do
    [ "$i" = "143" ] && continue
    printf 'asset %s\n' "$i" > "$WORK/deploy/assets/img/icon_$i.png"
done
cat > "$WORK/deploy/deploy.sh" <<'EOF'
#!/bin/bash
# deploy static assets
dest=public/static
mkdir -p "$dest"
count=0
for i in $(seq -w 1 400); do
    src="assets/img/icon_$i.png"
    cp "$src" "$dest/"
    sum=$(sha256sum "$dest/icon_$i.png")
    sum=${sum:0:12}
    count=$((count + 1))
    echo "deployed icon_$i.png sha=$sum ($count/400)"
done
echo "done: $count assets"
EOF
( cd "$WORK/deploy" && bash -x deploy.sh ) > "$OUT/bash_xtrace.log" 2>&1

# ---------------------------------------------------------------------------
# 16. git_apply_reject: `git apply -v --reject` of a 1500-file patch; one file
#     was changed locally so its hunk does not apply.
#     Needle: "error: patch failed: <file>:<line>".
step git_apply_reject
mkdir -p "$WORK/git/repo"
python3 - "$WORK/git/repo" <<'EOF'
import os, sys
d = sys.argv[1]
for i in range(1, 1501):
    p = f"{d}/src/module_{i // 100:02d}"
    os.makedirs(p, exist_ok=True)
    open(f"{p}/handler_{i:04d}.c", "w").write(
        f"/* handler {i} */\nint handler_{i:04d}(int x)\n{{\n    return x + {i};\n}}\n")
EOF
(
  cd "$WORK/git/repo" && git init -q -b main . && git add -A && git commit -q -m "import handlers"
  git ls-files | while read -r f; do sed -i 's/return x + /return x * 2 + /' "$f"; done
  git diff > ../scale.patch
  git checkout -q -- .
  sed -i 's/return x + 412;/return x + 412 + LOCAL_FIX;/' src/module_04/handler_0412.c
  git commit -q -am "local fix for handler 412"
) >&2
( cd "$WORK/git/repo" && git apply -v --reject ../scale.patch ) > "$OUT/git_apply_reject.log" 2>&1

# ---------------------------------------------------------------------------
# 17. git_show_stat_end: `git show --stat` of a commit that touches 1700
#     files; the diffstat summary is the last line.
#     Needle (end, non-salient): the "N files changed, ..." summary line.
step git_show_stat_end
(
  cd "$WORK/git/repo" && rm -f src/module_04/handler_0412.c.rej
  python3 - <<'EOF'
import os
for i in range(1501, 1701):
    p = f"src/module_{i // 100:02d}"
    os.makedirs(p, exist_ok=True)
    open(f"{p}/handler_{i:04d}.c", "w").write(f"int handler_{i:04d}(int x)\n{{\n    return x * 3;\n}}\n")
EOF
  git add -A && git commit -q -m "scale handlers; add handlers 1501-1700"
) >&2
( cd "$WORK/git/repo" && git show --stat=100 HEAD ) > "$OUT/git_show_stat_end.log" 2>&1

# ---------------------------------------------------------------------------
# 18. perl_report: a `perl -w` report over 3000 CSV rows; empty/"n/a" fields
#     produce a steady stream of warnings, and one row divides by zero inside
#     eval; the script reports it and continues.
#     Needle: the "ERROR: row ... Illegal division by zero" line.
step perl_report
mkdir -p "$WORK/perl"
python3 - "$WORK/perl" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(5)
rows = ["region,units,revenue,returns"]
for i in range(1, 3001):
    units = str(r.randint(1, 500))
    if i == 1412:
        units = "0"
    rev = str(r.randint(100, 99999))
    ret = r.choice(["0", "1", "2", "", "n/a"]) if i % 23 == 0 else str(r.randint(0, 9))
    rows.append(f"{r.choice(['north', 'south', 'east', 'west'])},{units},{rev},{ret}")
open(f"{d}/sales.csv", "w").write("\n".join(rows) + "\n")
EOF
cat > "$WORK/perl/report.pl" <<'EOF'
#!/usr/bin/perl -w
use strict;
$| = 1;
open(my $fh, '<', 'sales.csv') or die "sales.csv: $!";
my $header = <$fh>;
my $row = 0;
while (my $line = <$fh>) {
    chomp $line;
    $row++;
    my ($region, $units, $revenue, $returns) = split /,/, $line;
    my $avg = eval { $revenue / $units };
    if ($@) {
        print "ERROR: row $row skipped: $@";
        next;
    }
    my $net = $units - $returns;
    printf "%-6s row %4d units=%3d net=%3d avg=%.2f\n", $region, $row, $units, $net, $avg;
}
close $fh;
print "report complete: $row rows\n";
EOF
( cd "$WORK/perl" && perl -w report.pl ) > "$OUT/perl_report.log" 2>&1

# ---------------------------------------------------------------------------
# 19. segfault_tests: a C test harness script running 24 test binaries built
#     from one source; test_hash (9th) dereferences NULL after printing its
#     progress, bash reports the signal and the loop continues.
#     Needle: bash's "Segmentation fault" line (contains a PID: not stable).
step segfault_tests
mkdir -p "$WORK/ctest/build"
cat > "$WORK/ctest/t.c" <<'EOF'
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "unnamed";
    for (int i = 1; i <= 80; i++) {
        printf("[ RUN      ] %s.case_%02d\n", name, i);
        if (strcmp(name, "hash") == 0 && i == 17) {
            volatile int *p = NULL;
            fflush(stdout);
            *p = 42;
        }
        printf("[       OK ] %s.case_%02d (0 ms)\n", name, i);
    }
    printf("[  PASSED  ] %s: 80 tests\n", name);
    return 0;
}
EOF
( cd "$WORK/ctest" && gcc -O0 -o build/t t.c ) >&2
cat > "$WORK/ctest/run_tests.sh" <<'EOF'
#!/bin/bash
ulimit -c 0
failed=0
for t in alloc arena base64 bitset buffer crc32 deque dict hash heap json list \
         lru mpsc parse path pool queue ringbuf rope sha1 slab strbuf utf8; do
    echo "=== test_$t"
    ./build/t "$t"
    rc=$?
    [ $rc -ne 0 ] && failed=$((failed + 1))
done
echo "summary: 24 suites, $failed failed"
EOF
( cd "$WORK/ctest" && bash run_tests.sh ) > "$OUT/segfault_tests.log" 2>&1

# ---------------------------------------------------------------------------
# Needles + README. Each needle is the single line matching its pattern; the
# check insists on exactly one matching line and exactly one occurrence of
# the needle text in the whole log.
step needles+README
python3 - "$OUT" <<'EOF'
import os, re, sys
out = sys.argv[1]
# name: (tool/command, regex picking the needle line, where, what the needle is)
spec = [
 ("gcc_cascade", "gcc -std=c11 -Wall -Wextra -Wconversion -Wshadow -c src/*.c (60 files)",
  r"^src/mod_031\.c:\d+:\d+: error: expected ';' before", "middle",
  "root-cause C syntax error (missing ';' after typedef) above 23 follow-up errors"),
 ("rustc_cascade", "rustc (lib with warnings) then rustc (bin with errors)",
  r"^error\[E0432\]: unresolved import", "middle",
  "root-cause unresolved import above a cascade of E0308 errors"),
 ("javac_modules", "javac -Xlint:all per module (core, billing, api)",
  r"error: package com\.acme\.money does not exist", "middle",
  "root-cause missing package in billing module, between two modules of lint warnings"),
 ("unittest_mid", "python3 -m unittest -v, one module at a time (14 modules)",
  r"^AssertionError: .*INV-0437", "middle",
  "assertion message of the one failing test, in module 5 of 14"),
 ("unittest_end", "python3 -m unittest -v (1000 tests, 1 failure, 1 error)",
  r"^AssertionError: Decimal", "end",
  "assertion message of the failing test, in the final failure report"),
 ("node_test_tap", "node --test --test-reporter=tap (1200 tests)",
  r"^\s+error: 'invoice INV-0437", "middle",
  "TAP YAML error line of the one failing test"),
 ("service_log", "python3 worker.py (logging, 1200 jobs)",
  r"^KeyError: ", "middle",
  "exception line ending a logger.exception() traceback"),
 ("make_k", "make -k -j1 (1000 gcc compiles)",
  r"^make: \*\*\* \[.*Error 1$", "middle",
  "the one failing make target"),
 ("pip_missing_path", "pip install -vv --no-index, looped over 61 local requirements",
  r"^ERROR: Invalid requirement", "middle",
  "pip error for the requirement path that does not exist"),
 ("npm_broken_json", "npm run build --loglevel verbose, looped over 30 packages",
  r"^npm error code EJSONPARSE$", "middle",
  "npm error code for the package.json with a trailing comma"),
 ("ls_lR_end", "ls -lR --time-style=long-iso release",
  "LAST", "end",
  "last line of a long listing (non-salient)"),
 ("find_missing", "find src vendor/protobuf docs -type f -printf ...",
  r"^find: .*No such file or directory$", "middle",
  "find error for the missing root between two large listings"),
 ("json_large", "python3 -m json.tool shards.json (1200 records)",
  r'"error": ', "middle",
  "the only \"error\" field in a large pretty-printed JSON document"),
 ("binary_noise", "./dumpblk (random binary records on stdout, error on stderr)",
  rb"^dumpblk: cannot open", "middle",
  "real errno message between blocks of binary garbage"),
 ("bash_xtrace", "bash -x deploy.sh (400 assets)",
  r"^cp: cannot stat .*No such file or directory$", "middle",
  "cp failure in the middle of a set -x trace"),
 ("git_apply_reject", "git apply -v --reject scale.patch (1500 files)",
  r"^error: patch failed: ", "middle",
  "the hunk that did not apply"),
 ("git_show_stat_end", "git show --stat=100 HEAD (1700 files)",
  r"^ \d+ files changed", "end",
  "diffstat summary, the last line (non-salient)"),
 ("perl_report", "perl -w report.pl (3000 CSV rows)",
  r"^ERROR: row \d+ skipped: Illegal division by zero", "middle",
  "the one real error among a stream of perl warnings"),
 ("segfault_tests", "bash run_tests.sh (24 C test binaries)",
  r"Segmentation fault", "middle",
  "bash's report of the test binary killed by SIGSEGV"),
]
rows = []
bad = []
total = 0
for name, tool, pat, where, what in spec:
    data = open(f"{out}/{name}.log", "rb").read()
    total += len(data)
    lines = data.split(b"\n")
    rx = re.compile(pat if isinstance(pat, bytes) else pat.encode()) if pat != "LAST" else None
    if pat == "LAST":  # the last line of the output
        hits = [len(lines) - 2 if lines[-1] == b"" else len(lines) - 1]
    else:
        hits = [i for i, l in enumerate(lines) if rx.search(l)]
    if len(hits) != 1:
        bad.append(f"{name}: pattern {pat!r} matched {len(hits)} lines")
        continue
    ln = hits[0]
    needle = lines[ln]
    if data.count(needle) != 1:
        bad.append(f"{name}: needle occurs {data.count(needle)} times")
    open(f"{out}/{name}.needle", "wb").write(needle)
    off = data.index(needle)
    size = len(data)
    nlines = data.count(b"\n")
    from_end = size - off
    if size <= 60 * 1024 or size > 1536 * 1024:
        bad.append(f"{name}: size {size} out of range")
    if where == "middle" and (off < 5 * 1024 or from_end <= 45 * 1024):
        bad.append(f"{name}: needle not in the middle (offset {off}, {from_end} from end)")
    if where == "end" and from_end > 45 * 1024:
        bad.append(f"{name}: end needle is {from_end} bytes from the end")
    shown = needle.decode("utf-8", "replace").replace("|", "\\|")
    tool_md = tool.replace("|", "\\|")
    rows.append(f"| `{name}.log` | {tool_md} | {where} | {what} | `` {shown} `` | {off} | {ln + 1} | {size} | {nlines} |")
if total > 12 * 1024 * 1024:
    bad.append(f"corpus too large: {total}")

readme = f"""# Real tool output corpus

Logs of real commands run on a Debian machine (gcc 12, GNU make 4.3, rustc,
javac 17, Python 3.11 + pip 23, node 20 + npm 11, perl 5.36, git 2.47,
coreutils, findutils) used to measure the `smart` output window, which keeps a
head, the tail and salient lines from the elided middle.

* `<name>.log` is the merged stdout+stderr (`2>&1`) of the command, unedited.
  Every log is larger than 60 KB, so a 50 KB window truncates it.
* `<name>.needle` is exactly one line of that log (verbatim, no trailing
  newline) that a model must see to act; it occurs exactly once in the log.
* "middle" needles are neither in the first 5 KB nor the last 45 KB, so only a
  salient-line pass can surface them; "end" needles sit in the tail (two of
  them, the listing's last line and the diffstat summary, are deliberately not
  "salient" and test that the tail is kept).
* `make_corpus.sh` regenerates everything (logs, needles, this README) from
  scratch in a fixed work dir (`/tmp/agent-exec-corpus-work`). Generators use
  fixed seeds and counter-based timestamps; wall-clock durations printed by
  unittest, node and npm, pip's temp dir names and the PID in bash's
  segfault message are not stable between runs.

Offsets are 0-based byte offsets of the needle's first byte; line numbers are
1-based; sizes in bytes; line counts are newline counts.

| log | tool / command | where | needle is | needle | byte offset | line | size | lines |
| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |
""" + "\n".join(rows) + f"""

Total corpus size (logs only): {total} bytes.
"""
# Keep the section make_corpus_classes.sh writes (between its markers), if there is one.
try:
    old = open(f"{out}/README.md").read()
    b, e = "<!-- classes:begin -->", "<!-- classes:end -->"
    if b in old and e in old:
        readme += "\n" + old[old.index(b):old.index(e) + len(e)] + "\n"
except FileNotFoundError:
    pass
open(f"{out}/README.md", "w").write(readme)
for r in rows:
    print(r)
if bad:
    print("\nPROBLEMS:\n" + "\n".join(bad), file=sys.stderr)
    sys.exit(1)
print(f"\nok: {len(rows)} logs, {total} bytes", file=sys.stderr)
EOF
