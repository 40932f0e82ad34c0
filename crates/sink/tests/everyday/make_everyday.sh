#!/usr/bin/env bash
# make_everyday.sh — build the "everyday agent commands" corpus.
#
# Sets up real projects under $W (default /tmp/everyday-work), runs ~37 everyday
# commands an LLM coding agent runs, and records for each case <name>:
#   <name>.cmd     the command line as typed
#   <name>.log     merged stdout+stderr, unedited
#   <name>.needle  lines the model must see (verbatim whole lines of .log)
#   <name>.rtk     rtk's output for the same command (via `rtk rewrite`), or the
#                  raw output when rtk has no equivalent (passthrough)
#   <name>.task    one sentence: what the agent wanted
# and regenerates README.md.
#
# Offline: pytest wheels and the typescript package are taken from $CACHE
# (/tmp/everyday-cache); if missing they are fetched once from PyPI / npm.
# Needs: git gcc make python3 node npm go cargo(+clippy) tree rg ss ip unshare.
# Usage: bash make_everyday.sh            (RTK=/path/to/rtk to override)
set -u
umask 022
OUT=$(cd "$(dirname "$0")" && pwd)
W=${W:-/tmp/everyday-work}
CACHE=${CACHE:-/tmp/everyday-cache}
RTK=${RTK:-/work/tools/rtk/bin/rtk}
[ -x "$RTK" ] || { echo "rtk not found at $RTK" >&2; exit 1; }

export NO_COLOR=1 TERM=dumb CLICOLOR=0 CLICOLOR_FORCE= CARGO_TERM_COLOR=never \
       FORCE_COLOR=0 NODE_DISABLE_COLORS=1 PY_COLORS=0 PYTHONDONTWRITEBYTECODE=1 \
       GIT_PAGER=cat PAGER=cat LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC \
       GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local \
       PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_COLOR=1 PIP_PROGRESS_BAR=off \
       npm_config_update_notifier=false npm_config_color=false \
       RTK_TELEMETRY_DISABLED=1 COLUMNS=120 CARGO_BUILD_JOBS=1
export GIT_AUTHOR_DATE="2024-03-01T12:00:00+00:00" GIT_COMMITTER_DATE="2024-03-01T12:00:00+00:00" \
       GIT_AUTHOR_NAME="Dana Reyes" GIT_AUTHOR_EMAIL="dana@example.com" \
       GIT_COMMITTER_NAME="Dana Reyes" GIT_COMMITTER_EMAIL="dana@example.com" \
       GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

rm -rf "$W"; mkdir -p "$W/specs"
rm -f "$OUT"/*.cmd "$OUT"/*.log "$OUT"/*.needle "$OUT"/*.rtk "$OUT"/*.task
: > "$W/rtkmap.tsv"

# run NAME DIR CMD TASK NEEDLESPEC...
#   needle spec: "=literal whole line" | "~regex" (first full-line match) | "$regex" (last)
#   env hooks:  PRE   shell snippet run (in DIR) before the raw AND before the rtk run
#               EXEC  what is actually executed when it differs from the typed CMD
#               RTKEXEC  how to execute the rtk command (use {RTK} placeholder), optional
#               RTKCMD   force this rtk command when `rtk rewrite` has no rule but rtk has a
#                        matching subcommand (e.g. `rtk env`, `rtk npm test`)
run() {
  local name=$1 dir=$2 cmd=$3 task=$4; shift 4
  echo "== $name: $cmd" >&2
  printf '%s\n' "$cmd"  > "$OUT/$name.cmd"
  printf '%s\n' "$task" > "$OUT/$name.task"
  printf '%s\n' "$@"    > "$W/specs/$name.spec"
  local exe=${EXEC:-$cmd}
  ( cd "$dir" && eval "${PRE:-:}" ) >/dev/null 2>&1
  ( cd "$dir" && bash -c "$exe" ) > "$OUT/$name.log" 2>&1
  local rw rc
  rw=$(cd "$dir" && "$RTK" rewrite "$cmd" 2>/dev/null); rc=$?
  local how=""
  if [ -n "${RTKCMD:-}" ]; then rw=$RTKCMD; rc=0; how=" (manual: rtk rewrite has no rule)"; fi
  if [ -n "$rw" ] && { [ $rc = 0 ] || [ $rc = 3 ]; }; then
    local rexe=$rw
    if [ -n "${RTKEXEC:-}" ]; then rexe=${RTKEXEC//\{RTK\}/$rw}; fi
    rexe=${rexe//rtk /$RTK }; rexe=${rexe/#rtk /$RTK }
    ( cd "$dir" && eval "${PRE:-:}" ) >/dev/null 2>&1
    ( cd "$dir" && bash -c "$rexe" ) > "$OUT/$name.rtk" 2>&1
    printf '%s\t%s\n' "$name" "$rw$how" >> "$W/rtkmap.tsv"
  else
    cp "$OUT/$name.log" "$OUT/$name.rtk"
    printf '%s\t%s\n' "$name" "(none: passthrough)" >> "$W/rtkmap.tsv"
  fi
}

py() { python3 - "$@"; }

###############################################################################
# 1. git repository: 1000 commits via fast-import (deterministic hashes)
###############################################################################
mkdir -p "$W/shop" && cd "$W/shop" && git init -q -b main .
cat > "$W/gen_module.py" <<'PY'
import random, hashlib
MODS = ["accounts","addresses","audit","auth","billing","cart","catalog","checkout","coupons","currency",
        "customers","discounts","emails","events","exports","fulfillment","gifts","imports","inventory","invoices",
        "ledger","loyalty","media","notifications","orders","packaging","payments","payouts","permissions","pricing",
        "promotions","queues","ratings","receipts","refunds","reports","returns","reviews","search","sessions",
        "settings","shipping","sitemap","sku","storage","subscriptions","suppliers","support","taxes","tenants",
        "tokens","tracking","translations","uploads","users","vendors","vouchers","warehouse","webhooks","wishlist"]
VERBS = ["load","save","validate","compute","sync","render","normalize","reconcile","schedule","resolve"]
NOUNS = ["batch","record","snapshot","summary","window","limit","quota","payload","cursor","entry"]
def module(mod, ver, extra=None):
    r = random.Random(mod)
    out = [f'"""{mod} service helpers (generated fixture)."""', "", "from __future__ import annotations", "",
           "import logging", "from dataclasses import dataclass", "", f"log = logging.getLogger(\"shop.{mod}\")", "", ""]
    out += [f"@dataclass", f"class {mod.capitalize()}Config:", f"    retries: int = {3 + ver % 4}",
            f"    timeout_s: float = {5 + (ver * 7) % 23}.0", f"    region: str = \"eu-west-{1 + ver % 3}\"", "", ""]
    for j in range(8):
        v = VERBS[r.randrange(len(VERBS))]; n = NOUNS[r.randrange(len(NOUNS))]
        fn = f"{v}_{n}_{j}"
        out += [f"def {fn}(items, *, limit=None):",
                f"    \"\"\"{v.capitalize()} the {n} for {mod} (step {j}).\"\"\"",
                f"    limit = limit or {100 + j * 10 + (ver * (j + 3)) % 97}",
                f"    result = []",
                f"    for item in items[:limit]:",
                f"        if item is None:",
                f"            continue",
                f"        result.append(item)",
                f"    log.debug(\"{fn}: %d of %d\", len(result), len(items))"]
        if extra and extra.get(j):
            out += extra[j]
        out += [f"    return result", "", ""]
    return "\n".join(out).rstrip() + "\n"
def test_module(mod, ver):
    lines = [f"from shop.{mod} import *", "", ""]
    for k in range(6):
        lines += [f"def test_{mod}_case_{k}():", f"    assert {k} + {ver % 5} >= 0", "", ""]
    return "\n".join(lines).rstrip() + "\n"
PY
py "$W/gen_module.py" <<'PY' > "$W/shop.fi"
import sys, random
exec(open(sys.argv[1]).read())
r = random.Random(1234)
out = sys.stdout.buffer
AUTHORS = [("Dana Reyes","dana@example.com"),("Kofi Mensah","kofi@example.com"),("Mei Lin","mei@example.com"),
           ("Lars Eriksen","lars@example.com"),("Priya Natarajan","priya@example.com")]
KINDS = ["fix","feat","refactor","chore","perf","test","docs"]
WHAT = ["handle empty {n} in {v}","tighten {n} validation","speed up {v} for large {n}","log {n} ids on retry",
        "make {v} idempotent","drop stale {n} cache","rename {n} helper","cover {v} edge cases",
        "bump default {n} limit","guard against None {n}"]
ver = {m: 0 for m in MODS}
t0 = 1672531200
for i in range(1000):
    a = AUTHORS[i % 5]
    ts = t0 + i * 5400 + r.randrange(3000)
    files = {}
    if i == 0:
        for m in MODS:
            files[f"src/shop/{m}.py"] = module(m, 0)
            files[f"tests/test_{m}.py"] = test_module(m, 0)
        files["README.md"] = "# shop\n\nBackend services for the shop.\n"
        files["src/shop/__init__.py"] = ""
        msg = "initial import of shop services\n"
    elif i == 940:
        ver["payments"] += 1; ver["ledger"] += 1
        files = {"src/shop/payments.py": module("payments", ver["payments"], {5: ["    # refunds are rounded half-even to match the ledger", "    result = [round(x, 2) if isinstance(x, float) else x for x in result]"]}),
                 "src/shop/ledger.py": module("ledger", ver["ledger"], {2: ["    # keep ledger rounding in sync with payments.refund", "    result.sort(key=lambda e: getattr(e, 'ts', 0))"]}),
                 "tests/test_payments.py": test_module("payments", ver["payments"]) + "\n\ndef test_refund_rounding_half_even():\n    assert round(2.675, 2) == 2.67\n"}
        msg = "fix(payments): round refunds half-even to match ledger (#4127)\n\nRefunds were rounded half-up while the ledger rounds half-even, which\nleft 1-cent discrepancies in the nightly reconciliation report.\n\nReviewed-by: Mei Lin\n"
    else:
        m = MODS[r.randrange(len(MODS))]
        ver[m] += 1
        files[f"src/shop/{m}.py"] = module(m, ver[m])
        if i % 4 == 0:
            files[f"tests/test_{m}.py"] = test_module(m, ver[m])
        k = KINDS[r.randrange(len(KINDS))]
        w = WHAT[r.randrange(len(WHAT))].format(n=NOUNS[r.randrange(10)], v=VERBS[r.randrange(10)])
        msg = f"{k}({m}): {w} (#{1000 + i * 3})\n"
        if i % 3 == 0:
            msg += f"\nThe {m} module now handles this more defensively; see ticket SHOP-{2000 + i}.\nReviewed-by: {AUTHORS[(i + 2) % 5][0]}\n"
        if i == 510:
            msg = "revert: drop legacy CSV exporter (#2290)\n"
    out.write(b"commit refs/heads/main\n")
    out.write(f"author {a[0]} <{a[1]}> {ts} +0000\ncommitter {a[0]} <{a[1]}> {ts} +0000\n".encode())
    mb = msg.encode(); out.write(b"data %d\n" % len(mb) + mb)
    for path, data in files.items():
        d = data.encode()
        out.write(f"M 100644 inline {path}\n".encode() + b"data %d\n" % len(d) + d + b"\n")
    out.write(b"\n")
PY
git fast-import --quiet < "$W/shop.fi" && git checkout -q -f main
SHOW_REV=$(git log --format=%h --grep='round refunds half-even' -1)

# State A: a focused change in 6 files with several hunks each (diff / diff --stat)
py "$W/gen_module.py" <<'PY'
import sys
exec(open(sys.argv[1]).read())
import subprocess
for m, v in [("checkout", 97), ("coupons", 88), ("discounts", 71), ("orders", 64), ("pricing", 93)]:
    open(f"src/shop/{m}.py", "w").write(module(m, v))
extra = {3: ["    # never promise stock we do not have on hand",
             "    have = sum(getattr(i, 'qty', 0) for i in result)",
             "    if limit and have < limit:",
             "        log.warning(\"short stock: have %d, need %d\", have, limit)"],
         7: ["    if not result:",
             "        raise StockError(f\"insufficient stock for {sku}: have {have}, need {qty}\")"]}
src = module("warehouse", 91, extra)
src = src.replace("from dataclasses import dataclass", "from dataclasses import dataclass\n\n\nclass StockError(RuntimeError):\n    \"\"\"Raised when a reservation cannot be satisfied.\"\"\"")
open("src/shop/warehouse.py", "w").write(src)
PY
run git_diff_hunks "$W/shop" "git diff" \
  "See exactly what changed in the working tree, in particular the new stock check at the end of warehouse.py." \
  "=diff --git a/src/shop/warehouse.py b/src/shop/warehouse.py" \
  '$@@ .*@@ .*' \
  '=+        raise StockError(f"insufficient stock for {sku}: have {have}, need {qty}")'
run git_diff_stat "$W/shop" "git diff --stat" \
  "Get an overview of which files the uncommitted change touches and how big it is." \
  "~ src/shop/warehouse.py +\| +[0-9]+ [+-]+" "~ 6 files changed, .*"

run git_log_oneline "$W/shop" "git log --oneline" \
  "Find the commit that reverted the legacy CSV exporter, somewhere in the middle of a long history." \
  "~[0-9a-f]{7} revert: drop legacy CSV exporter \(#2290\)"
run git_log_full "$W/shop" "git log -n 120" \
  "Read recent history to find who fixed the refund rounding and why." \
  "~commit $(git rev-parse "$SHOW_REV")" \
  "=    fix(payments): round refunds half-even to match ledger (#4127)" \
  "=    left 1-cent discrepancies in the nightly reconciliation report."
run git_show_commit "$W/shop" "git show --stat --patch $SHOW_REV" \
  "Inspect the refund-rounding commit: which files it touched and the actual change to payments.py." \
  "~ 3 files changed, .*" \
  "=+    # refunds are rounded half-even to match the ledger" \
  "=+def test_refund_rounding_half_even():"

# State B: many modified, deleted, staged and untracked files (status)
py "$W/gen_module.py" <<'PY'
import sys, os
exec(open(sys.argv[1]).read())
for idx, m in enumerate(MODS):
    if idx % 3 != 2:
        open(f"src/shop/{m}.py", "a").write(f"\n\n# touched while refactoring {m}\n")
    if idx % 2 == 1:
        open(f"tests/test_{m}.py", "a").write("\n# TODO: more cases\n")
for m in ["gifts", "sitemap", "vouchers"]:
    os.remove(f"tests/test_{m}.py")
for k in range(40):
    open(f"src/shop/new_feature_{k:02d}.py", "w").write(f"# draft {k}\n")
    open(f"tests/test_new_feature_{k:02d}.py", "w").write(f"def test_{k}():\n    pass\n")
open("src/shop/rate_limiter.py", "w").write("class RateLimiter:\n    pass\n")
open("notes.txt", "w").write("scratch\n")
open(".env.local", "w").write("DEBUG=1\n")
PY
git add src/shop/rate_limiter.py src/shop/auth.py src/shop/tokens.py
run git_status_many "$W/shop" "git status" \
  "Check what is staged, modified and untracked before committing; rate_limiter.py must be staged." \
  "=	new file:   src/shop/rate_limiter.py" \
  "=	deleted:    tests/test_vouchers.py" \
  "=	src/shop/new_feature_07.py"

###############################################################################
# 2. Rust: test crate with 300 tests (2 failing), all-pass crate, build error, clippy
###############################################################################
if [ -z "${SKIP_RUST:-}" ]; then   # SKIP_RUST=1: for testing other parts while cargo is busy
mkdir -p "$W/rust"
py "$W/rust" <<'PY'
import os, sys, random
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
# ---- invoice: 300 unit tests, 2 failures
mods = {"money": 80, "parse": 80, "tax": 70, "report": 70}
w(f"{root}/invoice/Cargo.toml", '[package]\nname = "invoice"\nversion = "0.4.2"\nedition = "2021"\n\n[dependencies]\n')
lib = ["//! Invoice arithmetic (fixture crate).", ""]
for m in mods: lib.append(f"pub mod {m};")
w(f"{root}/invoice/src/lib.rs", "\n".join(lib) + "\n")
body = {
 "money": "pub fn add_cents(a: i64, b: i64) -> i64 { a + b }\npub fn split(total: i64, parts: i64) -> Vec<i64> {\n    let base = total / parts;\n    let mut v = vec![base; parts as usize];\n    let rem = total - base * parts;\n    for i in 0..rem as usize { v[i] += 1; }\n    v\n}\n",
 "parse": "pub fn parse_amount(s: &str) -> Result<i64, String> {\n    let s = s.trim();\n    if s.starts_with('-') { return Err(format!(\"negative amount not allowed: {:?}\", s)); }\n    let (int, frac) = s.split_once('.').unwrap_or((s, \"0\"));\n    let i: i64 = int.parse().map_err(|e| format!(\"bad integer part {:?}: {}\", int, e))?;\n    let mut f = frac.to_string(); while f.len() < 2 { f.push('0'); }\n    let f: i64 = f[..2].parse().map_err(|e| format!(\"bad fraction {:?}: {}\", frac, e))?;\n    Ok(i * 100 + f)\n}\n",
 "tax": "pub fn vat(cents: i64, rate_pct: i64) -> i64 {\n    // rounds half-up (the bug the failing test documents)\n    (cents * rate_pct + 50) / 100\n}\n",
 "report": "pub fn line(label: &str, cents: i64) -> String { format!(\"{:<20}{:>10}.{:02}\", label, cents / 100, cents % 100) }\n",
}
r = random.Random(7)
for m, n in mods.items():
    t = [body[m], "#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for k in range(n):
        a, b = r.randrange(1, 10000), r.randrange(1, 10000)
        if m == "money":
            t += ["    #[test]", f"    fn add_cents_{k:03d}() {{", f"        assert_eq!(add_cents({a}, {b}), {a + b});", "    }", ""]
        elif m == "parse":
            t += ["    #[test]", f"    fn parses_amount_{k:03d}() {{", f"        assert_eq!(parse_amount(\"{a}.{b % 100:02d}\").unwrap(), {a * 100 + b % 100});", "    }", ""]
        elif m == "tax":
            rate = [7, 10, 19, 20, 21][k % 5]
            t += ["    #[test]", f"    fn vat_{rate}pct_{k:03d}() {{", f"        assert_eq!(vat({a * 100}, {rate}), {a * rate});", "    }", ""]
        else:
            t += ["    #[test]", f"    fn formats_line_{k:03d}() {{", f"        assert_eq!(line(\"item\", {a}).len(), 33);", "    }", ""]
    if m == "tax":
        t += ["    #[test]", "    fn vat_rounding_half_even() {",
              "        assert_eq!(vat(1250, 19), 237, \"VAT on 12.50 at 19% must round half-even (237.5 -> 237)\");", "    }", ""]
    if m == "parse":
        t += ["    #[test]", "    fn parses_negative_refund() {",
              "        let cents = parse_amount(\"-12.50\").unwrap();", "        assert_eq!(cents, -1250);", "    }", ""]
    t += ["}"]
    w(f"{root}/invoice/src/{m}.rs", "\n".join(t) + "\n")
# ---- ledger: all tests pass (unit + integration + doc)
w(f"{root}/ledger/Cargo.toml", '[package]\nname = "ledger"\nversion = "1.2.0"\nedition = "2021"\n\n[dependencies]\n')
lt = ["//! Double-entry ledger helpers.", "", "/// Balance of a list of postings.", "///", "/// ```", "/// assert_eq!(ledger::balance(&[100, -40]), 60);", "/// ```",
      "pub fn balance(p: &[i64]) -> i64 { p.iter().sum() }", "", "/// True when postings net to zero.", "///", "/// ```", "/// assert!(ledger::is_balanced(&[5, -5]));", "/// ```",
      "pub fn is_balanced(p: &[i64]) -> bool { balance(p) == 0 }", "",
      "#[cfg(test)]", "mod tests {", "    use super::*;"]
for k in range(140):
    a = r.randrange(1, 999)
    lt += ["    #[test]", f"    fn balances_pair_{k:03d}() {{ assert!(is_balanced(&[{a}, -{a}])); }}"]
lt += ["}"]
w(f"{root}/ledger/src/lib.rs", "\n".join(lt) + "\n")
it = ["use ledger::*;", ""]
for k in range(24):
    it += ["#[test]", f"fn journal_roundtrip_{k:02d}() {{ assert_eq!(balance(&[{k}, 1]), {k + 1}); }}", ""]
w(f"{root}/ledger/tests/journal.rs", "\n".join(it))
# ---- buildfail workspace: warnings in two crates, one error in app
w(f"{root}/buildfail/Cargo.toml", '[workspace]\nmembers = ["core", "util", "app"]\nresolver = "2"\n')
for c in ["core", "util"]:
    w(f"{root}/buildfail/{c}/Cargo.toml", f'[package]\nname = "shop-{c}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n')
w(f"{root}/buildfail/core/src/lib.rs", """use std::collections::HashMap;
use std::fmt::Write;

pub struct Order { pub id: u64, pub total_cents: i64, pub note: String }

pub fn total(orders: &[Order]) -> i64 {
    let mut count = 0;
    let unused_scale = 100;
    orders.iter().map(|o| o.total_cents).sum()
}

fn legacy_total(orders: &[Order]) -> i64 {
    orders.iter().fold(0, |a, o| a + o.total_cents)
}

pub fn describe(o: &Order) -> String {
    let mut s = String::new();
    s.push_str(&format!("#{} {}", o.id, o.total_cents));
    s
}
""")
w(f"{root}/buildfail/util/src/lib.rs", """use std::io::Read;

pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let lower = c.to_ascii_lowercase();
        if c.is_alphanumeric() { out.push(c.to_ascii_lowercase()); } else { out.push('-'); }
    }
    out
}

#[derive(Debug)]
enum Mode { Fast, Safe, Legacy }

pub fn pad(s: &str, n: usize) -> String {
    let mut t = s.to_string();
    while t.len() < n { t.push(' '); }
    return t;
}
""")
w(f"{root}/buildfail/app/Cargo.toml", '[package]\nname = "shop-app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nshop-core = { path = "../core" }\nshop-util = { path = "../util" }\n')
w(f"{root}/buildfail/app/src/main.rs", """use shop_core::{total, Order};
use shop_util::slug;
use std::time::Duration;

fn summary(orders: &[Order]) -> String {
    let cents: i64 = total(orders);
    let label: String = cents / 100;
    format!("{} {}", slug("Daily Total"), label)
}

fn main() {
    let orders = vec![Order { id: 1, total_cents: 1999, note: String::new() }];
    println!("{}", summary(&orders));
}
""")
# ---- lintme: clippy warnings
w(f"{root}/lintme/Cargo.toml", '[package]\nname = "lintme"\nversion = "0.3.0"\nedition = "2021"\n\n[dependencies]\n')
w(f"{root}/lintme/src/lib.rs", """//! Catalog helpers that clippy does not like.

pub struct Item { pub name: String, pub price: u32, pub tags: Vec<String> }

pub fn is_empty_catalog(items: &Vec<Item>) -> bool {
    return items.len() == 0;
}

pub fn cheap_names(items: &[Item]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..items.len() {
        if items[i].price >= 100 && items[i].price <= 500 {
            out.push(items[i].name.clone());
        }
    }
    out
}

pub fn first_tag(item: &Item) -> Option<String> {
    let tags = item.tags.clone();
    if tags.len() > 0 { Some(tags[0].clone()) } else { None }
}

pub fn total(items: &[Item]) -> u32 {
    let mut t: u32 = 0;
    for it in items.iter() { t = t + it.price; }
    return t;
}

pub fn has_tag(item: &Item, tag: &str) -> bool {
    item.tags.iter().find(|t| *t == tag).is_some()
}

pub fn label(item: &Item) -> String {
    let s = format!("{}", item.name);
    s.to_string()
}

pub fn bucket(price: u32) -> &'static str {
    if price < 100 { "cheap" } else { if price < 500 { "mid" } else { "normal" } }
}

pub fn names_upper(items: &[Item]) -> Vec<String> {
    items.iter().map(|i| i.name.clone()).map(|n| n.to_uppercase()).collect::<Vec<String>>()
}

pub fn opt_price(p: Option<u32>) -> u32 {
    match p { Some(v) => v, None => 0 }
}

pub fn maybe_discount(price: u32, pct: u32) -> u32 {
    let discounted = price - price * pct / 100;
    return discounted;
}

pub fn copy_tags(src: &Item, dst: &mut Item) {
    for t in src.tags.iter() { dst.tags.push(t.clone()); }
}

pub fn compare(a: f64, b: f64) -> bool { a == b }

pub fn count_expensive(items: &[Item]) -> usize {
    items.iter().filter(|i| i.price > 1000).collect::<Vec<_>>().len()
}
""")
PY
cd "$W/rust/invoice" && cargo generate-lockfile --offline -q 2>/dev/null
PRE="cargo clean -q" run cargo_test_two_failures "$W/rust/invoice" "cargo test" \
  "Run the test suite and find out which tests fail and why." \
  "=---- tax::tests::vat_rounding_half_even stdout ----" \
  "~.*VAT on 12.50 at 19% must round half-even \(237.5 -> 237\)" \
  "~.*called \`Result::unwrap\(\)\` on an \`Err\` value: \"negative amount not allowed: \\\\\"-12.50\\\\\"\"" \
  "~test result: FAILED\. 300 passed; 2 failed; .*"
PRE="cargo clean -q" run cargo_test_all_pass "$W/rust/ledger" "cargo test" \
  "Confirm the whole ledger test suite (unit, integration, doc) passes after a change." \
  "~test result: ok\. 140 passed; 0 failed; .*" "~test result: ok\. 24 passed; 0 failed; .*" "~test result: ok\. 2 passed; 0 failed; .*"
PRE="cargo clean -q" run cargo_build_error "$W/rust/buildfail" "cargo build" \
  "Build the workspace and find the compile error that stops it." \
  "=error[E0308]: mismatched types" "~ *--> app/src/main\.rs:7:.*" \
  "=error: could not compile \`shop-app\` (bin \"shop-app\") due to 1 previous error; 1 warning emitted"
PRE="cargo clean -q" run cargo_clippy_warnings "$W/rust/lintme" "cargo clippy" \
  "Run clippy and see which lints fire, notably the index loop in cheap_names() at line 11." \
  "=warning: the loop variable \`i\` is only used to index \`items\`" "~ *--> src/lib\.rs:11:.*" \
  "~warning: \`lintme\` \(lib\) generated [0-9]+ warnings.*"

fi

###############################################################################
# 3. Python: venv + pytest (300 tests, 2 failing), pip installs, traceback
###############################################################################
if ! ls "$CACHE"/wheels/pytest-*.whl >/dev/null 2>&1; then
  mkdir -p "$CACHE/wheels" && python3 -m pip download -q pytest==8.3.4 -d "$CACHE/wheels"
fi
python3 -m venv "$W/venv" && "$W/venv/bin/pip" install -q --no-index --find-links "$CACHE/wheels" pytest
export PATH="$W/venv/bin:$PATH" VIRTUAL_ENV="$W/venv"
mkdir -p "$W/pyproj"
py "$W/pyproj" <<'PY'
import os, sys, random, zipfile, hashlib, base64
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True); open(path, "w").write(text)
w(f"{root}/inventory/__init__.py", "")
w(f"{root}/inventory/pricing.py", '''"""Pricing rules."""
from decimal import Decimal, ROUND_HALF_EVEN

def apply_discount(price: Decimal, pct: int) -> Decimal:
    return (price * (100 - pct) / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)

def bulk_price(unit: Decimal, qty: int) -> Decimal:
    if qty >= 100:
        return apply_discount(unit * qty, 10)
    return unit * qty
''')
w(f"{root}/inventory/stock.py", '''"""Stock levels."""
class OutOfStock(Exception):
    pass

class Stock:
    def __init__(self):
        self.levels = {}
    def add(self, sku, qty):
        self.levels[sku] = self.levels.get(sku, 0) + qty
    def take(self, sku, qty):
        have = self.levels.get(sku, 0)
        if have < qty:
            raise OutOfStock(f"{sku}: have {have}, need {qty}")
        self.levels[sku] = have - qty
    def reserved(self, sku):
        return self.levels[sku]
''')
w(f"{root}/pytest.ini", "[pytest]\ntestpaths = tests\n")
w(f"{root}/tests/conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n")
r = random.Random(11)
w(f"{root}/tests/test_pricing.py", "from decimal import Decimal\nimport pytest\nfrom inventory.pricing import apply_discount, bulk_price\n\n"
  + "@pytest.mark.parametrize('price,pct', [" + ", ".join(f"(Decimal('{r.randrange(100, 99999)/100:.2f}'), {r.randrange(0, 60)})" for _ in range(116)) + "])\n"
  + "def test_discount_never_increases(price, pct):\n    assert apply_discount(price, pct) <= price\n\n"
  + "@pytest.mark.parametrize('qty', list(range(1, 61)))\ndef test_bulk_price_small_orders(qty):\n    assert bulk_price(Decimal('2.50'), qty) == Decimal('2.50') * qty\n\n"
  + "def test_bulk_price_hundred_units():\n    assert bulk_price(Decimal('19.99'), 100) == Decimal('1799.10')\n\n"
  + "def test_discount_rounds_half_even():\n    assert apply_discount(Decimal('10.05'), 50) == Decimal('5.03')\n")
w(f"{root}/tests/test_stock.py", "import pytest\nfrom inventory.stock import Stock, OutOfStock\n\n"
  + "@pytest.mark.parametrize('sku,qty', [" + ", ".join(f"('SKU-{1000 + k}', {r.randrange(1, 50)})" for k in range(80)) + "])\n"
  + "def test_add_then_take(sku, qty):\n    s = Stock()\n    s.add(sku, qty)\n    s.take(sku, qty)\n    assert s.reserved(sku) == 0\n\n"
  + "@pytest.mark.parametrize('qty', list(range(1, 41)))\ndef test_take_too_much_raises(qty):\n    s = Stock()\n    s.add('SKU-1', qty)\n    with pytest.raises(OutOfStock):\n        s.take('SKU-1', qty + 1)\n\n"
  + "def test_reserved_unknown_sku_is_zero():\n    s = Stock()\n    assert s.reserved('SKU-404') == 0\n\n"
  + "def test_take_exact():\n    s = Stock()\n    s.add('SKU-7', 3)\n    s.take('SKU-7', 3)\n    assert s.levels == {'SKU-7': 0}\n")
# a traceback script (~8 KiB-ish output before the crash) and a cat target
w(f"{root}/scripts/import_orders.py", '''"""Import orders from a CSV export into the inventory."""
import csv, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from inventory.stock import Stock


def parse_row(row):
    return {"order": int(row["order_id"]), "sku": row["sku"], "qty": int(row["qty"]),
            "customer": row["customer_id"]}


def transform(rows):
    for n, row in enumerate(rows, 1):
        yield parse_row(row)


def load(path):
    with open(path, newline="") as fh:
        yield from transform(csv.DictReader(fh))


def main(path):
    stock = Stock()
    for rec in load(path):
        stock.add(rec["sku"], rec["qty"])
        print(f"imported order #{rec['order']} sku={rec['sku']} qty={rec['qty']} customer={rec['customer']}")
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
''')
rows = ["order_id,sku,qty,customer_id"] + [f"{5000 + k},SKU-{r.randrange(1000, 1999)},{r.randrange(1, 9)},C{r.randrange(10000, 99999)}" for k in range(120)]
rows.append("5120,SKU-1777,2")  # missing column -> None customer -> fine; next row has renamed header? use KeyError via bad int
rows.append("5121,SKU-1778,two,C12345")
w(f"{root}/data/orders.csv", "\n".join(rows) + "\n")
# ~8 KiB source file for `cat`
src = ['"""HTTP client with retry/backoff used by the inventory sync job."""', "", "import logging", "import random", "import time", "from dataclasses import dataclass, field", "", "log = logging.getLogger(__name__)", "", "",
       "@dataclass", "class RetryPolicy:", "    MAX_RETRIES = 7", "    base_delay: float = 0.25", "    max_delay: float = 30.0", "    jitter: float = 0.1", "", "    def delay(self, attempt: int) -> float:", "        d = min(self.max_delay, self.base_delay * (2 ** attempt))", "        return d * (1 + random.uniform(-self.jitter, self.jitter))", "", ""]
for k in range(15):
    src += [f"def sync_endpoint_{k:02d}(client, payload, policy=RetryPolicy()):",
            f"    \"\"\"POST payload to /v2/sync/{k:02d}, retrying transient failures.\"\"\"",
            "    for attempt in range(policy.MAX_RETRIES):",
            f"        resp = client.post(\"/v2/sync/{k:02d}\", json=payload, timeout=10)",
            "        if resp.status_code < 500:",
            "            return resp",
            f"        log.warning(\"sync {k:02d} attempt %d failed: %s\", attempt, resp.status_code)",
            "        time.sleep(policy.delay(attempt))",
            f"    raise RuntimeError(\"sync {k:02d} gave up after %d attempts\" % policy.MAX_RETRIES)", "", ""]
w(f"{root}/inventory/http_sync.py", "\n".join(src).rstrip() + "\n")
# local wheels for pip installs
def wheel(dist, ver, deps, outdir):
    mod = dist.replace("-", "_")
    files = {f"{mod}/__init__.py": f"__version__ = '{ver}'\n".encode()}
    di = f"{mod}-{ver}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {ver}\nSummary: {dist} (fixture)\n" + "".join(f"Requires-Dist: {d}\n" for d in deps)
    files[f"{di}/METADATA"] = meta.encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rec = ""
    for p, d in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        rec += f"{p},sha256={h},{len(d)}\n"
    rec += f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = rec.encode()
    os.makedirs(outdir, exist_ok=True)
    with zipfile.ZipFile(f"{outdir}/{mod}-{ver}-py3-none-any.whl", "w") as z:
        for p, d in files.items():
            zi = zipfile.ZipInfo(p, (2024, 1, 1, 0, 0, 0)); zi.external_attr = 0o644 << 16
            z.writestr(zi, d)
names = ["core","config","logging","http","retry","cache","db","orm","migrations","auth","jwt","crypto","money","tax",
         "geo","mail","templates","queue","worker","scheduler","metrics","tracing","storage","images","pdf","csv",
         "search","i18n","cli","testing","fixtures","faker","api","admin","reports","webhooks","sms","push","audit","flags"]
dists = {}
for k, n in enumerate(names):
    deps = ["acme-core>=1.0"] if k else []
    if k > 3 and names[k // 2] != "geo": deps.append(f"acme-{names[k // 2]}>=1.0")
    dists[n] = deps
for n, deps in dists.items():
    for ver in ["1.3.0", "1.4.0"] if n == "geo" else ["1.0.0", "1.2.0"]:
        wheel(f"acme-{n}", ver, deps, f"{root}/wheels")
req = [f"acme-{n}>=1.0" for n in names[:24] if n != "geo"] + ["acme-geo>=2.0"] + [f"acme-{n}" for n in names[24:]]
w(f"{root}/requirements.txt", "# production dependencies\n" + "\n".join(req) + "\n")
w(f"{root}/requirements-dev.txt", "# dev tools\n" + "\n".join(f"acme-{n}==1.2.0" for n in names if n not in ("geo",)) + "\npytest>=8\n")
PY
cd "$W/pyproj"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$W/pyproj/wheels"
pip install -q acme-core==1.2.0 acme-config==1.2.0 acme-logging==1.2.0 acme-http==1.2.0 acme-retry==1.2.0 acme-cache==1.2.0 acme-db==1.2.0 acme-orm==1.2.0 >/dev/null 2>&1
run pytest_q_two_failures "$W/pyproj" "pytest -q" \
  "Run the Python tests and see which ones fail and why." \
  "=E       AssertionError: assert Decimal('5.02') == Decimal('5.03')" \
  "=FAILED tests/test_pricing.py::test_discount_rounds_half_even - AssertionError: assert Decimal('5.02') == Decimal('5.03')" \
  "=FAILED tests/test_stock.py::test_reserved_unknown_sku_is_zero - KeyError: 'SKU-404'" \
  "~2 failed, 298 passed in [0-9.]+s"
run pytest_v_two_failures "$W/pyproj" "pytest -v" \
  "Run the Python tests verbosely to see the status of each test and the failure details." \
  "~tests/test_pricing.py::test_discount_rounds_half_even FAILED +\[ *[0-9]+%\]" \
  "=E       AssertionError: assert Decimal('5.02') == Decimal('5.03')" \
  "~E +KeyError: 'SKU-404'" \
  "~=+ 2 failed, 298 passed in [0-9.]+s =+"
run pip_install_requirements_fail "$W/pyproj" "pip install -r requirements.txt" \
  "Install the production requirements and find out what blocks the install." \
  "=ERROR: Could not find a version that satisfies the requirement acme-geo>=2.0 (from versions: 1.3.0, 1.4.0)" \
  "=ERROR: No matching distribution found for acme-geo>=2.0"
DEVPKGS=$(grep -o '^acme-[a-z0-9]*' requirements-dev.txt | grep -v -e acme-core -e acme-config -e acme-logging -e acme-http -e acme-retry -e acme-cache -e acme-db -e acme-orm | tr '\n' ' ')
PRE="pip uninstall -y -q $DEVPKGS; pip install -q acme-core==1.2.0 acme-config==1.2.0 acme-logging==1.2.0 acme-http==1.2.0 acme-retry==1.2.0 acme-cache==1.2.0 acme-db==1.2.0 acme-orm==1.2.0" \
run pip_install_dev_ok "$W/pyproj" "pip install -r requirements-dev.txt" \
  "Install the dev requirements and confirm everything got installed." \
  "~Successfully installed acme-.*acme-webhooks-1\.2\.0.*"
run python_traceback "$W/pyproj" "python scripts/import_orders.py data/orders.csv" \
  "Run the CSV import and find where and why it crashed." \
  "=Traceback (most recent call last):" \
  "~  File \"$W/pyproj/scripts/import_orders.py\", line 9, in parse_row" \
  "=ValueError: invalid literal for int() with base 10: 'two'" \
  "=imported order #5120 sku=SKU-1777 qty=2 customer=None"
run cat_source "$W/pyproj" "cat inventory/http_sync.py" \
  "Read the sync client to find how many retries the policy allows." \
  "=    MAX_RETRIES = 7"
unset PIP_NO_INDEX PIP_FIND_LINKS

###############################################################################
# 4. Node: npm install of local tarballs, node --test (200 tests, 1 failing), tsc
###############################################################################
mkdir -p "$W/node/pkgs" "$W/node/app"
py "$W/node" <<'PY'
import os, sys, json, random
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
names = ["money","cart-core","tax-rules","http-kit","retry","logger","config","events","schema","dates","ids","cache"]
for k, n in enumerate(names):
    pj = {"name": f"@acme/{n}", "version": f"1.{k}.0", "main": "index.js", "license": "MIT"}
    if k % 4 == 1: pj["engines"] = {"node": ">=22.0.0"}
    if k % 5 == 2: pj["peerDependencies"] = {"@acme/money": "^1.0.0"}
    if k % 6 == 3: pj["scripts"] = {"postinstall": "node -e \"console.log('building native helpers')\""}
    w(f"{root}/pkgs/{n}/package.json", json.dumps(pj, indent=2) + "\n")
    w(f"{root}/pkgs/{n}/index.js", f"module.exports = {{ name: '{n}' }};\n")
    w(f"{root}/pkgs/{n}/README.md", f"# @acme/{n}\n")
app = {"name": "checkout-service", "version": "3.1.0", "private": True,
       "scripts": {"test": "node --test"},
       "dependencies": {f"@acme/{n}": f"file:../pkgs/acme-{n}-1.{k}.0.tgz" for k, n in enumerate(names)}}
w(f"{root}/app/package.json", json.dumps(app, indent=2) + "\n")
w(f"{root}/app/.npmrc", "audit=false\nfund=false\n")
w(f"{root}/app/src/cart.js", """'use strict';
function lineTotal(unitCents, qty) { return unitCents * qty; }
function applyCoupon(totalCents, coupon) {
  if (!coupon) return totalCents;
  if (coupon.type === 'percent') return Math.round(totalCents * (100 - coupon.value) / 100);
  if (coupon.type === 'fixed') return Math.max(0, totalCents - coupon.value);
  return totalCents;
}
function shipping(totalCents, country) {
  if (totalCents >= 5000) return 0;
  return country === 'DE' ? 490 : 990;
}
module.exports = { lineTotal, applyCoupon, shipping };
""")
r = random.Random(3)
groups = {"lineTotal": 70, "applyCoupon": 70, "shipping": 60}
for g, n in groups.items():
    t = ["'use strict';", "const { describe, it } = require('node:test');", "const assert = require('node:assert');",
         "const { lineTotal, applyCoupon, shipping } = require('../src/cart');", "", f"describe('{g}', () => {{"]
    for k in range(n):
        a, b = r.randrange(1, 5000), r.randrange(1, 20)
        if g == "lineTotal":
            t.append(f"  it('multiplies {a} x {b}', () => {{ assert.strictEqual(lineTotal({a}, {b}), {a * b}); }});")
        elif g == "applyCoupon":
            t.append(f"  it('fixed coupon {b * 10} on {a}', () => {{ assert.strictEqual(applyCoupon({a}, {{ type: 'fixed', value: {b * 10} }}), {max(0, a - b * 10)}); }});")
        else:
            t.append(f"  it('shipping for {a + 5000} is free', () => {{ assert.strictEqual(shipping({a + 5000}, 'FR'), 0); }});")
    if g == "applyCoupon":
        t.append("  it('percent coupon stacks with sale price', () => {\n    assert.strictEqual(applyCoupon(1999, { type: 'percent', value: 15 }), 1700, 'expected 15% off 19.99 to be 17.00');\n  });")
    t.append("});")
    w(f"{root}/app/test/{g}.test.js", "\n".join(t) + "\n")
PY
for d in "$W"/node/pkgs/*/; do (cd "$W/node/pkgs" && npm pack -q "./$(basename "$d")" >/dev/null 2>&1); done
PRE="rm -rf node_modules package-lock.json" run npm_install_local "$W/node/app" "npm install" \
  "Install the service's dependencies and check whether npm warns about anything (engines, peers)." \
  "~npm warn EBADENGINE Unsupported engine \{" "~npm warn EBADENGINE   package: '@acme/cart-core@1\.1\.0',?" \
  "~added 1[0-9] packages in .*"
RTKCMD="rtk npm test" run npm_test_one_failure "$W/node/app" "npm test" \
  "Run the JS tests and find the failing test and its assertion." \
  "~ *not ok [0-9]+ - percent coupon stacks with sale price" \
  "~ *expected 15% off 19\.99 to be 17\.00" "=# fail 1" "=# pass 200"

if [ ! -d "$CACHE/tsc/node_modules/typescript" ]; then
  mkdir -p "$CACHE/tsc" && (cd "$CACHE/tsc" && npm init -y >/dev/null && npm install -q typescript@5.6.3 --no-audit --no-fund)
fi
mkdir -p "$W/tsproj/node_modules" && cp -r "$CACHE/tsc/node_modules/typescript" "$W/tsproj/node_modules/"
mkdir -p "$W/tsproj/node_modules/.bin" && ln -s ../typescript/bin/tsc "$W/tsproj/node_modules/.bin/tsc"
py "$W/tsproj" <<'PY'
import os, sys, json
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
w(f"{root}/package.json", json.dumps({"name": "admin-ui", "version": "0.9.0", "private": True, "devDependencies": {"typescript": "5.6.3"}}, indent=2) + "\n")
w(f"{root}/tsconfig.json", json.dumps({"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": True, "noEmit": True, "noUnusedLocals": True}, "include": ["src"]}, indent=2) + "\n")
w(f"{root}/src/types.ts", "export interface Order { id: number; totalCents: number; customer: { email: string; name?: string }; items: Item[] }\nexport interface Item { sku: string; qty: number; priceCents: number }\nexport type Status = 'open' | 'paid' | 'shipped';\n")
feats = ["orders","customers","refunds","reports","inventory","shipping","coupons","settings","users","audit","billing","search"]
for k, f in enumerate(feats):
    lines = ["import { Order, Item, Status } from './types';", ""]
    for j in range(6):
        lines += [f"export function {f}Total{j}(o: Order): number {{",
                  f"  const unused{j} = o.items.length;" if (j == 2) else f"  const n{j} = o.items.length;",
                  f"  return o.items.reduce((s, i) => s + i.priceCents * i.qty, 0) + {'n' + str(j) if j != 2 else 0};",
                  "}", ""]
    lines += [f"export function {f}Label(o: Order): string {{", "  return o.customer.name.toUpperCase();", "}", "",
              f"export function {f}Status(s: string): Status {{", "  return s;", "}", "",
              f"export const {f}Count: number = '{k}';", ""]
    if f == "refunds":
        lines += ["export function refundAmount(o: Order, item: Item): number {", "  return o.totalCents - item.price;", "}", ""]
    w(f"{root}/src/{f}.ts", "\n".join(lines))
PY
run tsc_errors "$W/tsproj" "npx tsc --noEmit" \
  "Type-check the admin UI and find the error in refunds.ts about the Item type." \
  "~src/refunds\.ts\([0-9]+,[0-9]+\): error TS2339: Property 'price' does not exist on type 'Item'\."

###############################################################################
# 5. Go: 8 packages, 200 tests, 1 failure
###############################################################################
mkdir -p "$W/goshop"
py "$W/goshop" <<'PY'
import os, sys, random
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
w(f"{root}/go.mod", "module example.com/goshop\n\ngo 1.19\n")
pk = ["cart","catalog","pricing","inventory","orders","users","shipping","util"]
r = random.Random(5)
for p in pk:
    w(f"{root}/{p}/{p}.go", f"package {p}\n\n// Add returns a+b.\nfunc Add(a, b int) int {{ return a + b }}\n\n// ApplyDiscount returns cents reduced by pct percent, rounded half-up.\nfunc ApplyDiscount(cents, pct int) int {{ return (cents*(100-pct) + 50) / 100 }}\n")
    t = [f"package {p}", "", "import \"testing\"", ""]
    for k in range(25):
        a, b = r.randrange(1000), r.randrange(1000)
        name = f"Test{p.capitalize()}Add{k:02d}"
        t += [f"func {name}(t *testing.T) {{", f"\tif got := Add({a}, {b}); got != {a + b} {{", f"\t\tt.Errorf(\"Add({a}, {b}) = %d, want {a + b}\", got)", "\t}", "}", ""]
    if p == "pricing":
        t += ["func TestApplyDiscountHalfEven(t *testing.T) {", "\tif got := ApplyDiscount(1999, 15); got != 1700 {",
              "\t\tt.Errorf(\"ApplyDiscount(1999, 15) = %d, want 1700 (half-even)\", got)", "\t}", "}", ""]
    w(f"{root}/{p}/{p}_test.go", "\n".join(t))
PY
cd "$W/goshop" && go build ./... 2>/dev/null
PRE="go clean -testcache" run go_test_one_failure "$W/goshop" "go test ./..." \
  "Run the Go tests and find which package and test fail." \
  "~    pricing_test\.go:[0-9]+: ApplyDiscount\(1999, 15\) = 1699, want 1700 \(half-even\)" \
  "=--- FAIL: TestApplyDiscountHalfEven (0.00s)" "~FAIL\texample\.com/goshop/pricing\t[0-9.]+s"
PRE="go clean -testcache" run go_test_v_one_failure "$W/goshop" "go test -v ./..." \
  "Run the Go tests verbosely and find the failing test and its message." \
  "=--- FAIL: TestApplyDiscountHalfEven (0.00s)" \
  "~    pricing_test\.go:[0-9]+: ApplyDiscount\(1999, 15\) = 1699, want 1700 \(half-even\)" \
  "~FAIL\texample\.com/goshop/pricing\t[0-9.]+s"

# a module that does not compile
mkdir -p "$W/gotool/internal/report"
printf 'module example.com/gotool\n\ngo 1.19\n' > "$W/gotool/go.mod"
cat > "$W/gotool/internal/report/report.go" <<'GO'
package report

import (
	"fmt"
	"os"
	"strings"
)

// Row is one line of the daily report.
type Row struct {
	SKU   string
	Qty   int
	Cents int64
}

// Render formats rows as a fixed-width table.
func Render(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-12s %5d %10d\n", r.SKU, r.Qty, r.Cents)
	}
	return b.String()
}

// Total sums the value of all rows.
func Total(rows []Row) int64 {
	var t int
	for _, r := range rows {
		t += r.Cents
	}
	return t
}
GO
cat > "$W/gotool/main.go" <<'GO'
package main

import (
	"fmt"

	"example.com/gotool/internal/report"
)

func main() {
	rows := []report.Row{{SKU: "SKU-1", Qty: 2, Cents: 1999}}
	fmt.Print(report.Render(rows))
	fmt.Println("total:", report.Totals(rows))
}
GO
run go_build_error "$W/gotool" "go build ./..." \
  "Build the Go tool and find out why it does not compile." \
  '=internal/report/report.go:5:2: imported and not used: "os"' \
  "~internal/report/report\.go:29:3: invalid operation: t \+= r\.Cents \(mismatched types int and int64\)"

###############################################################################
# 6. make + gcc: 150 C files; one warning + one error (make -k), and a clean build
###############################################################################
py "$W" <<'PY'
import os, sys, random
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
r = random.Random(9)
words = ["acct","alloc","buf","cfg","codec","crc","db","dict","dns","evt","fs","hash","heap","http","io","json","kv","list",
         "lock","log","map","mem","net","opt","parse","pipe","pool","proc","queue","rbt","re","ring","rpc","sched","sig",
         "sock","sort","str","tcp","tim","tls","tok","tree","udp","url","utf8","vec","wal","xml","zip"]
names = []
for i in range(150):
    names.append(f"{words[i % len(words)]}_{['core','util','ops'][i // len(words)]}")
for proj, broken in [("cbuild", True), ("cbuild_ok", False)]:
    d = f"{root}/{proj}"
    w(f"{d}/include/common.h", "#ifndef COMMON_H\n#define COMMON_H\n#include <stddef.h>\nint checksum(const char *p, size_t n);\n#endif\n")
    for i, n in enumerate(names):
        body = f"#include \"common.h\"\n\nint {n}_run(const char *p, size_t n)\n{{\n    int acc = {i};\n    for (size_t i = 0; i < n; i++)\n        acc += p[i] * {r.randrange(2, 97)};\n    return acc;\n}}\n"
        if broken and n == "hash_util":
            body = f"#include \"common.h\"\n\nint {n}_run(const char *p, size_t n)\n{{\n    int acc = 0;\n    int tmp;\n    for (size_t i = 0; i < n; i++)\n        acc += p[i];\n    return acc;\n}}\n"
        if broken and n == "queue_util":
            body = f"#include \"common.h\"\n\nint {n}_run(const char *p, size_t n)\n{{\n    int acc = 0;\n    for (size_t i = 0; i < n; i++)\n        acc += p[i];\n    return acc + cnt;\n}}\n"
        w(f"{d}/src/{n}.c", body)
    w(f"{d}/src/checksum.c", "#include \"common.h\"\nint checksum(const char *p, size_t n) { int s = 0; while (n--) s += *p++; return s; }\n")
    w(f"{d}/src/main.c", "#include <stdio.h>\n#include \"common.h\"\nint main(void) { printf(\"%d\\n\", checksum(\"abc\", 3)); return 0; }\n")
    w(f"{d}/Makefile", "CC = gcc\nCFLAGS = -Wall -O1 -Iinclude\nSRCS = $(sort $(wildcard src/*.c))\nOBJS = $(patsubst src/%.c,build/%.o,$(SRCS))\n\n"
      "all: build/storaged\n\nbuild/storaged: $(OBJS)\n\t$(CC) -o $@ $^\n\t@echo \"linked $@ ($(words $(OBJS)) objects)\"\n\n"
      "build/%.o: src/%.c include/common.h | build\n\t$(CC) $(CFLAGS) -c $< -o $@\n\nbuild:\n\tmkdir -p build\n\nclean:\n\trm -rf build\n\n.PHONY: all clean\n")
PY
PRE="make clean" run make_k_errors "$W/cbuild" "make -k" \
  "Build the C project, keep going past failures, and find the compile error." \
  "=src/queue_util.c:8:18: error: ‘cnt’ undeclared (first use in this function); did you mean ‘int’?" \
  "=src/hash_util.c:6:9: warning: unused variable ‘tmp’ [-Wunused-variable]" \
  "~make: \*\*\* \[Makefile:[0-9]+: build/queue_util\.o\] Error 1" \
  "=make: Target 'all' not remade because of errors."
PRE="make clean" run make_build_ok "$W/cbuild_ok" "make" \
  "Build the C project and confirm it linked." \
  "=linked build/storaged (152 objects)"

###############################################################################
# 7. Listings: ls -la (400 files), ls -R, find, tree, du
###############################################################################
mkdir -p "$W/uploads"
py "$W/uploads" <<'PY'
import os, sys, random, time, calendar
root = sys.argv[1]
r = random.Random(21)
base = calendar.timegm((2024, 1, 2, 9, 0, 0))
for k in range(400):
    kind = ["invoice_2024_%04d.pdf", "receipt_%04d.png", "export_orders_%04d.csv", "thumb_%04d.jpg"][k % 4]
    name = kind % (k + 1)
    size = r.randrange(200, 400000)
    if name == "invoice_2024_0217.pdf": size = 183204
    p = os.path.join(root, name)
    with open(p, "wb") as fh: fh.truncate(size)
    t = base + k * 86400 // 3 + r.randrange(3600)
    os.utime(p, (t, t))
PY
touch -d "2024-06-30 18:00" "$W/uploads"
run ls_la_many "$W/uploads" "ls -la" \
  "Find invoice_2024_0217.pdf in the uploads directory and check its size and date." \
  "~-rw-r--r-- +1 [a-z]+ [a-z]+ 183204 [A-Z][a-z]{2} [ 0-9]{2} [ 0-9:]{5} invoice_2024_0217\.pdf"

mkdir -p "$W/webapp"
py "$W/webapp" <<'PY'
import os, sys, random
root = sys.argv[1]
def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True); open(path, "w").write(text)
r = random.Random(42)
feats = ["accounts","analytics","auth","billing","calendar","campaigns","cart","catalog","chat","checkout","comments",
         "dashboard","devices","documents","emails","exports","feeds","files","forms","groups","help","imports",
         "integrations","invoices","labels","maps","media","members","notifications","onboarding","orders","payments",
         "permissions","profile","projects","reports","reviews","search","settings","shipping"]
words = ["Summary","List","Detail","Editor","Filter","Table","Chart","Panel","Dialog","Form"]
todos = 0
for f in feats:
    F = f.capitalize()
    base = f"{root}/apps/web/src/features/{f}"
    files = []
    for k in range(8): files.append(f"{base}/api/{['get','list','create','update','delete','search','export','sync'][k]}{F}.ts")
    for k in range(6): files.append(f"{base}/hooks/use{F}{words[k]}.ts")
    for k in range(6): files.append(f"{base}/utils/{['format','parse','validate','sort','group','merge'][k]}{F}.ts")
    for k in range(10): files.append(f"{base}/__tests__/{f}{words[k]}.test.ts")
    files += [f"{base}/types.ts", f"{base}/index.ts"]
    for k in range(8): files.append(f"{base}/components/{F}{words[k]}.tsx")
    for k in range(3): files.append(f"{base}/components/{F}{words[k]}.module.css")
    for p in files:
        body = [f"// {os.path.relpath(p, root)}", "import { fetchJson } from '@acme/http';", ""]
        if p.endswith(".ts") and r.random() < 0.42:
            body.append(f"// TODO({f}): {r.choice(['handle pagination','remove legacy field','add retries','type the response','cache results','check permissions'])}")
        if p.endswith("refund.ts") or p.endswith("deletePayments.ts"):
            body.append("// TODO(payments): handle partial refunds before closing the invoice")
        if "/api/" in p:
            body.append(f"export async function call() {{\n  return fetchJson('/api/{f}/{os.path.basename(p)[:-3]}');\n}}")
        else:
            body.append("export {};")
        w(p, "\n".join(body) + "\n")
for pkg, comps in [("ui", ["Button","DatePicker","Dropdown","Modal","Table","Tabs","Toast","Tooltip","Avatar","Badge","Card","Checkbox","Input","Select","Spinner",
                          "Accordion","Alert","Breadcrumbs","Chip","ColorPicker","Combobox","DataGrid","Divider","Drawer","FileUpload",
                          "Grid","Link","List","Menu","Pagination","Popover","Progress","Radio","Rating","Skeleton","Slider",
                          "Stepper","Switch","TextArea","TimePicker","Toolbar","TreeView"]),
                   ("icons", ["Arrow","Bell","Calendar","Check","Close","Cog","Download","Edit","Eye","Heart"])]:
    for c in comps:
        d = f"{root}/packages/{pkg}/src/components/{c}"
        for suffix in [".tsx", ".stories.tsx", ".test.tsx", ".module.css"]:
            w(f"{d}/{c}{suffix}", f"// {c}{suffix}\nexport {{}};\n")
        w(f"{d}/index.ts", f"export * from './{c}';\n")
    w(f"{root}/packages/{pkg}/package.json", "{\n  \"name\": \"@acme/" + pkg + "\"\n}\n")
    w(f"{root}/packages/{pkg}/src/index.ts", "export {};\n")
w(f"{root}/packages/http/src/fetchJson.ts", "export async function fetchJson(url: string) {\n  const r = await fetch(url);\n  return r.json();\n}\n")
w(f"{root}/package.json", "{\n  \"name\": \"webapp\",\n  \"private\": true,\n  \"workspaces\": [\"apps/*\", \"packages/*\"]\n}\n")
w(f"{root}/apps/web/package.json", "{\n  \"name\": \"web\"\n}\n")
w(f"{root}/apps/web/src/features/payments/api/refund.ts", "// apps/web/src/features/payments/api/refund.ts\nimport { fetchJson } from '@acme/http';\n\n// TODO(payments): handle partial refunds before closing the invoice\nexport async function refund(id: string) {\n  return fetchJson(`/api/payments/${id}/refund`);\n}\n")
PY
run ls_R_packages "$W/webapp" "ls -R packages" \
  "List the shared packages to find where the DatePicker component and its stories live." \
  "=packages/ui/src/components/DatePicker:" "=DatePicker.stories.tsx"
run find_ts_files "$W/webapp" "find . -name '*.ts'" \
  "Locate the TypeScript file that implements payment refunds." \
  "=./apps/web/src/features/payments/api/refund.ts"
run tree_webapp "$W/webapp" "tree" \
  "Get an overview of the monorepo layout and its size." \
  "~[0-9]+ directories, [0-9]+ files" "~.* refund\.ts"
run grep_rn_todo "$W/webapp" "grep -rn TODO apps/web/src" \
  "Find all TODOs, in particular the one about partial refunds in the payments feature." \
  "=apps/web/src/features/payments/api/refund.ts:4:// TODO(payments): handle partial refunds before closing the invoice"
run rg_fetchjson "$W/webapp" "rg -n 'fetchJson\\('" \
  "Find every call site of fetchJson, in particular the refund endpoint." \
  "=apps/web/src/features/payments/api/refund.ts:6:  return fetchJson(\`/api/payments/\${id}/refund\`);" \
  "=packages/http/src/fetchJson.ts:1:export async function fetchJson(url: string) {"

mkdir -p "$W/srv"
py "$W/srv" <<'PY'
import os, sys, random
root = sys.argv[1]
r = random.Random(8)
dirs = {"backups": 9000, "cache": 6200, "logs": 2400, "uploads": 1800, "releases": 1500, "tmp": 300, "db": 4200,
        "static": 700, "node_modules": 3100, "venv": 2600, "media": 3900, "exports": 450, "reports": 120, "certs": 8,
        "config": 12, "scripts": 40, "docs": 90, "fixtures": 600, "snapshots": 1100, "queue": 60}
for d, kib in dirs.items():
    os.makedirs(f"{root}/{d}", exist_ok=True)
    n = max(1, kib // 300)
    for k in range(n):
        with open(f"{root}/{d}/part_{k:03d}.bin", "wb") as fh:
            fh.write(b"\x5a" * (kib * 1024 // n))
open(f"{root}/README.txt", "w").write("server data root\n")
open(f"{root}/docker-compose.yml", "w").write("services: {}\n" * 50)
PY
run du_sh_star "$W/srv" "du -sh *" \
  "Find which directory under the data root uses the most disk space." \
  "~8\.[0-9]M\tbackups|9\.[0-9]M\tbackups"

###############################################################################
# 8. System: env, ps aux, df -h, ss -ltnp, ip addr
###############################################################################
cat > "$W/dev.env" <<'ENV'
SHELL=/bin/bash
COLORTERM=truecolor
HISTCONTROL=ignoreboth
HISTSIZE=10000
EDITOR=vim
VISUAL=vim
PWD=/home/dev/src/shop
LOGNAME=dev
XDG_SESSION_TYPE=tty
HOME=/home/dev
LANG=en_US.UTF-8
USER=dev
SHLVL=2
XDG_SESSION_ID=41
XDG_RUNTIME_DIR=/run/user/1000
PATH=/home/dev/.cargo/bin:/home/dev/.local/bin:/home/dev/.nvm/versions/node/v20.11.1/bin:/home/dev/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin
DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus
MAIL=/var/mail/dev
SSH_TTY=/dev/pts/3
TERM=xterm-256color
_=/usr/bin/env
NVM_DIR=/home/dev/.nvm
NVM_BIN=/home/dev/.nvm/versions/node/v20.11.1/bin
NVM_INC=/home/dev/.nvm/versions/node/v20.11.1/include/node
CARGO_HOME=/home/dev/.cargo
RUSTUP_HOME=/home/dev/.rustup
GOPATH=/home/dev/go
GOCACHE=/home/dev/.cache/go-build
PYENV_ROOT=/home/dev/.pyenv
VIRTUAL_ENV=/home/dev/src/shop/.venv
PIP_REQUIRE_VIRTUALENV=true
JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
ANDROID_HOME=/home/dev/Android/Sdk
DOCKER_HOST=unix:///run/user/1000/docker.sock
COMPOSE_PROJECT_NAME=shop
KUBECONFIG=/home/dev/.kube/config:/home/dev/.kube/staging.yaml
AWS_PROFILE=shop-staging
AWS_REGION=eu-west-1
AWS_DEFAULT_REGION=eu-west-1
APP_ENV=development
APP_PORT=8080
APP_LOG_LEVEL=debug
DATABASE_URL=postgres://app:app@localhost:5432/shop_dev
REDIS_URL=redis://localhost:6379/2
CELERY_BROKER_URL=redis://localhost:6379/3
SENTRY_ENVIRONMENT=dev
FEATURE_FLAGS=new_checkout,refund_v2,fast_search
NODE_OPTIONS=--max-old-space-size=4096
NODE_ENV=development
RUST_LOG=info,shop=debug
RUST_BACKTRACE=1
GPG_TTY=/dev/pts/3
LESS=-R
LESSOPEN=| /usr/bin/lesspipe %s
LESSCLOSE=/usr/bin/lesspipe %s %s
MANPAGER=less -R
STARSHIP_SHELL=bash
STARSHIP_SESSION_KEY=4471920387716251
TMUX=/tmp/tmux-1000/default,2231,0
TMUX_PANE=%3
SSH_AUTH_SOCK=/run/user/1000/keyring/ssh
SSH_CONNECTION=10.0.0.12 53122 10.0.0.5 22
SSH_CLIENT=10.0.0.12 53122 22
XDG_DATA_DIRS=/usr/local/share:/usr/share:/var/lib/snapd/desktop
XDG_CONFIG_DIRS=/etc/xdg
OLDPWD=/home/dev/src
ENV
# LS_COLORS as dircolors prints it
echo "LS_COLORS=$(TERM=xterm-256color dircolors -b | sed -n "s/^LS_COLORS='\(.*\)';$/\1/p")" >> "$W/dev.env"
ENVCMD="env -i $(sed "s/'/'\\\\''/g; s/^\([^=]*\)=\(.*\)$/\1='\2'/" "$W/dev.env" | tr '\n' ' ')"
EXEC="$ENVCMD env" RTKCMD="rtk env" RTKEXEC="$ENVCMD {RTK}" run env_vars "$W" "env" \
  "Check which database the app is configured to use." \
  "=DATABASE_URL=postgres://app:app@localhost:5432/shop_dev"

# ps aux: run inside a private PID namespace with ~330 realistic processes
cat > "$W/ps_fixture.sh" <<'SH'
#!/bin/bash
# spawns a fake process population, then runs "$@"
spawn() { ( exec -a "$1" sleep 100000 ) & }
for i in $(seq 1 60); do spawn "postgres: app shop_dev 127.0.0.1(5$((1000+i))) idle"; done
for i in $(seq 1 40); do spawn "/home/dev/src/shop/.venv/bin/python /home/dev/src/shop/.venv/bin/celery -A shop.worker worker --loglevel=INFO --concurrency=8 -Q default,emails,refunds -n worker$i@dev"; done
for i in $(seq 1 50); do spawn "/usr/bin/node /home/dev/src/webapp/node_modules/.bin/vite --port 51$((10+i)) --host 127.0.0.1 --strictPort --config /home/dev/src/webapp/apps/web/vite.config.ts"; done
for i in $(seq 1 50); do spawn "/usr/lib/jvm/java-17-openjdk-amd64/bin/java -Xms512m -Xmx2g -XX:+UseG1GC -Dlog4j.configurationFile=/etc/search/log4j2.xml -cp /opt/search/lib/* org.search.node.Main --node $i"; done
for i in $(seq 1 40); do spawn "/home/dev/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rust-analyzer"; done
for i in $(seq 1 40); do spawn "/usr/local/bin/gunicorn shop.wsgi:application --bind 127.0.0.1:8080 --workers 8 --timeout 120 --access-logfile -"; done
for i in $(seq 1 30); do spawn "redis-server 127.0.0.1:63$((10+i))"; done
for i in $(seq 1 20); do spawn "/bin/bash --login"; done
for i in $(seq 1 120); do spawn "/opt/google/chrome/chrome --type=renderer --crashpad-handler-pid=2211 --enable-crash-reporter=,stable --change-stack-guard-on-fork=enable --lang=en-US --num-raster-threads=4 --renderer-client-id=$((100+i)) --shared-files=v8_context_snapshot_data:100"; done
sleep 4242 &
sleep 0.5
"$@"
SH
chmod +x "$W/ps_fixture.sh"
EXEC="unshare --pid --fork --mount-proc $W/ps_fixture.sh ps aux" \
RTKEXEC="unshare --pid --fork --mount-proc $W/ps_fixture.sh {RTK}" run ps_aux_many "$W" "ps aux" \
  "Find the PID of the 'sleep 4242' process started earlier so it can be killed." \
  "~[a-z]+ +[0-9]+ .* sleep 4242"

run df_h_root "$W" "df -h /" \
  "Check how full the root filesystem is." \
  "~[^ ]+ +[0-9.]+[KMGT] +[0-9.]+[KMGT]? +[0-9.]+[KMGT] +[0-9]+% /"

python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & HTTP_PID=$!
python3 -m http.server 9123 --bind 127.0.0.1 >/dev/null 2>&1 & HTTP2_PID=$!
sleep 1
run ss_ltnp "$W" "ss -ltnp" \
  "Find which process is listening on port 8765." \
  "~LISTEN +0 +[0-9]+ +127\.0\.0\.1:8765 +0\.0\.0\.0:\* +users:\(\(\"python3?\",pid=[0-9]+,fd=[0-9]+\)\)"
kill $HTTP_PID $HTTP2_PID 2>/dev/null; wait $HTTP_PID $HTTP2_PID 2>/dev/null
run ip_addr "$W" "ip addr" \
  "Find the loopback interface's IPv4 address." \
  "~    inet 127\.0\.0\.1/8 scope host lo"

###############################################################################
# resolve needle specs against the logs, check them, write README
###############################################################################
python3 - "$OUT" "$W" <<'PY'
import os, re, sys, glob, json
out, w = sys.argv[1], sys.argv[2]
rtkmap = dict(l.rstrip("\n").split("\t", 1) for l in open(f"{w}/rtkmap.tsv"))
bad = []
rows = []
for spec in sorted(glob.glob(f"{w}/specs/*.spec")):
    name = os.path.basename(spec)[:-5]
    log = open(f"{out}/{name}.log", encoding="utf-8", errors="replace").read()
    lines = log.split("\n")
    needles = []
    for s in open(spec).read().split("\n"):
        if not s: continue
        kind, pat = s[0], s[1:]
        if kind == "=":
            hit = pat if pat in lines else None
        else:
            rx = re.compile(pat)
            m = [l for l in lines if rx.fullmatch(l)]
            hit = (m[0] if kind == "~" else m[-1]) if m else None
        if hit is None:
            bad.append(f"{name}: no whole line matches {s!r}")
        else:
            needles.append(hit)
    open(f"{out}/{name}.needle", "w").write("".join(n + "\n" for n in needles))
    for n in needles:
        assert n in lines
    rows.append((name, open(f"{out}/{name}.cmd").read().strip(), open(f"{out}/{name}.task").read().strip(),
                 len(log.encode()), len(needles), rtkmap.get(name, "?"), os.path.getsize(f"{out}/{name}.rtk")))
if bad:
    print("NEEDLE CHECK FAILED:", *bad, sep="\n  ", file=sys.stderr)
md = ["# everyday — measurement corpus of everyday agent commands", "",
      "Generated by `make_everyday.sh` (real commands run in real fixture projects under /tmp/everyday-work).",
      "Per case: `.cmd` command as typed, `.log` merged stdout+stderr, `.needle` lines the model must see (verbatim whole",
      "lines of `.log`), `.rtk` output of the rtk equivalent (from `rtk rewrite <cmd>`; raw passthrough copy when rtk has none),",
      "`.task` what the agent wanted.", "",
      "Timings, PIDs, hashes of build dirs etc. vary between runs; fixture contents, git hashes and file dates are fixed.", "",
      "| name | command | task | raw bytes | needles | rtk command (rtk bytes) |", "|---|---|---|---:|---:|---|"]
for n, c, t, b, k, r, rb in rows:
    c = c.replace("|", "\\|"); t = t.replace("|", "\\|"); r = r.replace("|", "\\|")
    md.append(f"| {n} | `{c}` | {t} | {b} | {k} | `{r}` ({rb}) |" if not r.startswith("(none") else f"| {n} | `{c}` | {t} | {b} | {k} | none — raw passthrough ({rb}) |")
md += ["", "## Notes", "",
       "- rtk column: the command `rtk rewrite <cmd>` produced (what rtk's agent hook would run). `(manual ...)`: rewrite has no",
       "  rule but rtk has a matching subcommand, which was used (`rtk env`, `rtk npm test`). `none — raw passthrough`: rtk has",
       "  no equivalent; `.rtk` is a copy of `.log`. rtk may append `[full output: ~/.local/share/rtk/tee/...]` hints; kept as is.",
       "- `env` runs under `env -i` with a fixed, realistic developer environment (no host secrets); `ps aux` runs in a private",
       "  PID namespace (`unshare --pid --fork --mount-proc`) populated with ~450 fake services plus `sleep 4242`; `df -h /` is",
       "  restricted to `/` to keep host/sandbox mounts out. The `.cmd` file shows the command as the agent typed it.",
       "- Needle specs are regexes resolved against the log at generation time (timings, PIDs vary); the script fails if a",
       "  needle is not a whole line of its log.",
       "- State-changing commands (`pip install`, `npm install`, `make`, `cargo`, `go test` cache) are reset with a PRE step",
       "  before both the raw and the rtk run, so both see the same starting state.",
      ]
md += ["", f"Total raw bytes: {sum(r[3] for r in rows)} over {len(rows)} cases.", ""]
open(f"{out}/README.md", "w").write("\n".join(md))
print(f"{len(rows)} cases, {len(bad)} needle problems")
sys.exit(1 if bad else 0)
PY
