#!/usr/bin/env bash
# Regenerates the "loss classes" part of the real-tool-output corpus: logs
# built so that each one stresses one way an output window can lose the line
# a model needs (see the classes table in README.md, between the
# `classes:begin` / `classes:end` markers, which this script rewrites).
#
#   c1  a salient line early (first ~4 KB), then thousands of harmless lines
#   c2  the real error in the last 50 KB, with salient-looking noise before
#       and around it (test names containing "error", warnings, ...)
#   c3  budget spent on noise: one harmless error line repeated hundreds of
#       times (or hundreds of warnings) and one real failure in the middle
#   c4  multi-line diagnostic blocks in the middle (ASan, valgrind, g++
#       overload notes, pytest assert diff, go test got/expected, shellcheck)
#   c5  keyword-less markers in the middle (git CONFLICT, valgrind "Invalid
#       read", go "got X, want Y", pytest "N skipped, M deselected", bash
#       "Killed" / make "Error 137", go "signal: killed", "Segmentation fault")
#   c6  long lines (a ~230 KB minified JSON line, a ~32 KB link command, a
#       ~53 KB log line) with the needed text inside or after them
#   c7  output dominated by one or two repeated line templates
#   io  a program writing alternately to stdout and stderr (2>&1 keeps the
#       true order because both are unbuffered)
#
# Every <name>.log is the merged stdout+stderr (2>&1) of a real command run
# by this script; nothing is hand-edited afterwards. Sizes come only from the
# workload (more files, tests, loops, verbose flags). <name>.needle holds one
# or more lines, each a whole line of the log that a model needs; a
# <name>.substr (only for long lines) holds substrings (>= 20 chars, each
# occurring exactly once in the log) that must be visible. Needles are picked
# from the generated log by pattern and checked (see the spec at the end).
#
# Determinism: fixed work dir, fixed seeds, counter-based timestamps,
# LC_ALL=C, TZ=UTC, NO_COLOR=1, fixed git identity/dates, ASan binaries run
# with ASLR off (setarch -R) so their addresses are stable. What cannot be
# pinned: PIDs (ASan "==PID==", valgrind "==PID==", bash's "line N: PID
# Killed"), durations printed by pytest ("in 0.41s") and go test
# ("ok pkg 0.012s"); needles containing them are re-picked on every run.
#
# Tools used: gcc, g++, GNU make, valgrind, shellcheck, go (golang-go), git,
# tar, gzip, jq, python3 (Debian's, in a venv with pytest), bash, dash (sh).
# The script installs what is missing (apt-get, pip into /tmp/corpus-venv).
#
# Usage: bash make_corpus_classes.sh [NAME...]   (no NAME: all logs, ~3-5 min
#        on 2 cores; with NAMEs only those logs, README/needles for all)
#
# It only deletes/rewrites the files it makes itself (the names in LOGS
# below, with .log/.needle/.substr) and the classes section of README.md.

set -u
export LC_ALL=C LANG=C TZ=UTC
export PYTHONHASHSEED=0 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
export NO_COLOR=1 NODE_DISABLE_COLORS=1 TERM=dumb
unset FORCE_COLOR CLICOLOR_FORCE PY_COLORS PYTEST_ADDOPTS MAKEFLAGS MFLAGS
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Corpus Bot" GIT_AUTHOR_EMAIL="corpus@example.invalid"
export GIT_COMMITTER_NAME="Corpus Bot" GIT_COMMITTER_EMAIL="corpus@example.invalid"
export GIT_AUTHOR_DATE="2024-05-01T12:00:00Z" GIT_COMMITTER_DATE="2024-05-01T12:00:00Z"
# Go: no network, no telemetry, a build cache kept outside the work dir (it
# only saves time: -count=1 keeps results from ever being "(cached)").
export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on GOTOOLCHAIN=local GOTELEMETRY=off
export GOCACHE=/tmp/agent-exec-corpus-gocache GOPATH=/tmp/agent-exec-corpus-gopath
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0

OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Fixed (not mktemp) so absolute paths that tools print are identical per run.
WORK="${CORPUS_CLASSES_WORKDIR:-/tmp/agent-exec-corpus-classes-work}"
VENV=/tmp/corpus-venv
PY="$VENV/bin/python"

LOGS=(
  c1_make_first_fails c1_tar_missing_first
  c2_pytest_error_names c2_gcc_warnings_then_error
  c3_service_disconnect_noise c3_pytest_decode_error c3_gcc_many_warnings
  c4_asan_tests c4_valgrind_uninit c4_gxx_overload c4_pytest_assert_diff
  c4_go_test_expected c4_shellcheck
  c5_git_merge_conflict c5_valgrind_invalid_read c5_go_test_gotwant
  c5_pytest_skipped_summary c5_make_killed_137 c5_go_run_killed c5_make_check_segv
  c6_json_minified c6_link_long_line c6_python_long_repr
  c7_make_cc_template c7_gzip_verbose
  io_python_interleave io_c_interleave
)

step() { printf '== %s\n' "$1" >&2; }

# ---------------------------------------------------------------------------
# Tools (idempotent: only what is missing is installed).
install_tools() {
  local missing=() p
  for p in gcc g++ make valgrind shellcheck golang-go git tar gzip jq python3 python3-venv dash; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
  if [ ! -x "$PY" ]; then
    step "venv $VENV"
    /usr/bin/python3 -m venv "$VENV" >&2
  fi
  if ! "$PY" -c 'import pytest' 2>/dev/null; then
    step "pip install pytest"
    "$VENV/bin/pip" install -q 'pytest==9.2.0' >&2 || "$VENV/bin/pip" install -q pytest >&2
  fi
  # ASan addresses are stable with ASLR off; fall back to plain runs.
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    NOASLR=(setarch "$(uname -m)" -R)
  else
    NOASLR=()
  fi
}

# ---------------------------------------------------------------------------
# c1_make_first_fails: `make -k` over 1300 C files; the first one compiled
# (src/alloc.c) uses size_t without <stddef.h>; the other 1299 compile fine.
# Needles: gcc's error, its `note:` (the fix) and make's failing target.
gen_c1_make_first_fails() {
  mkdir -p "$D/src" "$D/include"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(11)
open(f"{d}/src/alloc.c", "w").write('''/* arena allocator */
#include "arena.h"

struct arena {
    unsigned char *base;
    size_t used;
    size_t cap;
};

size_t arena_remaining(const struct arena *a)
{
    return a->cap - a->used;
}
''')
open(f"{d}/include/arena.h", "w").write("struct arena;\n")
groups = ["buffer", "codec", "config", "crypto", "db", "http", "json", "log", "net", "queue", "store", "util"]
n = 0
for g in groups:
    for i in range(1, 109):
        n += 1
        if n > 1299:
            break
        k = r.randint(2, 97)
        open(f"{d}/src/{g}_{i:04d}.c", "w").write(
            f"int {g}_{i:04d}_step(int x)\n{{\n    return x * {k} + {i};\n}}\n")
open(f"{d}/Makefile", "w").write('''CC = cc
CFLAGS = -std=c11 -O2 -Wall -Wextra -Iinclude
SRCS := $(sort $(wildcard src/*.c))
OBJS := $(patsubst src/%.c,build/%.o,$(SRCS))

all: bin/server

bin/server: $(OBJS)
\t@mkdir -p bin
\t$(CC) -o $@ $(OBJS)

build/%.o: src/%.c | build
\t$(CC) $(CFLAGS) -c $< -o $@

build:
\tmkdir -p build
''')
EOF
  ( cd "$D" && make -k -j1 ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c1_tar_missing_first: `tar -cvf` of a release whose first listed input
# (config/release.env) does not exist; tar reports it at once, then lists the
# ~2900 files it did archive, and exits with status 2 at the end.
# Needle: tar's "Cannot stat" line.
gen_c1_tar_missing_first() {
  mkdir -p "$D/dist"
  "$PY" - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(12)
for top, subs in (("assets", ["css", "fonts", "img/icons", "img/photos", "js/vendor"]),
                  ("src", ["api/handlers", "api/models", "core", "jobs", "web/templates"]),
                  ("docs", ["guide", "reference/api", "reference/cli"])):
    for s in subs:
        p = f"{d}/{top}/{s}"
        os.makedirs(p, exist_ok=True)
        for i in range(1, 224):
            ext = {"css": "css", "fonts": "woff2", "img/icons": "svg", "img/photos": "jpg",
                   "js/vendor": "js", "guide": "md", "reference/api": "md",
                   "reference/cli": "md", "web/templates": "html"}.get(s, "py")
            open(f"{p}/{s.split('/')[-1]}_{i:04d}.{ext}", "w").write("x" * r.randint(10, 300))
EOF
  ( cd "$D" && tar --sort=name --owner=0 --group=0 --numeric-owner \
      -cvf dist/release-2.14.0.tar config/release.env assets src docs ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c2_pytest_error_names: `pytest -v` over ~900 tests whose names are full of
# "error" (test_error_code_mapping[...], test_raises_error_on_...), which also
# emit ~100 distinct DeprecationWarnings mentioning errors. The one real
# failure (retry backoff not capped) is reported in FAILURES, followed by the
# long warnings summary, so it sits in the last 50 KB among look-alikes.
# Needles: the assertion message and the failure location line.
gen_c2_pytest_error_names() {
  mkdir -p "$D/src/svc" "$D/tests"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(21)
open(f"{d}/src/svc/__init__.py", "w").write("")
codes = sorted(r.sample(range(100, 1000), 320))
names = {c: f"{r.choice(['bad', 'stale', 'missing', 'invalid', 'locked', 'remote'])}_{r.choice(['request', 'token', 'record', 'peer', 'quota', 'lease'])}_{c}" for c in codes}
legacy = set(r.sample(codes, 110))
open(f"{d}/src/svc/errmap.py", "w").write(f'''import warnings

NAMES = {names!r}
LEGACY = {sorted(legacy)!r}


class ServiceError(Exception):
    def __init__(self, code):
        super().__init__(f"service error {{code}}: {{NAMES[code]}}")
        self.code = code


def error_name(code):
    if code in LEGACY:
        warnings.warn(
            f"error code {{code}} uses the legacy error name {{NAMES[code]!r}}; "
            f"map it through ErrorRegistry.lookup(error_code={{code}}) instead",
            DeprecationWarning,
            stacklevel=2,
        )
    return NAMES[code]


def raise_error(code):
    raise ServiceError(code)
''')
open(f"{d}/src/svc/retry.py", "w").write('''def backoff(attempt, base=0.5, cap=12.0):
    """Delay before retry number `attempt` (0-based), exponential, capped."""
    delay = base * 2 ** attempt
    if attempt < 5:
        delay = min(delay, cap)
    return delay
''')
open(f"{d}/tests/test_errors.py", "w").write(f'''import pytest

from svc.errmap import NAMES, ServiceError, error_name, raise_error

CODES = {codes!r}


@pytest.mark.parametrize("code", CODES)
def test_error_code_mapping(code):
    assert error_name(code) == NAMES[code]


@pytest.mark.parametrize("code", CODES)
def test_raises_error_on_code(code):
    with pytest.raises(ServiceError) as ei:
        raise_error(code)
    assert ei.value.code == code


@pytest.mark.parametrize("code", CODES[::2])
def test_error_message_contains_name(code):
    assert NAMES[code] in str(ServiceError(code))
''')
open(f"{d}/tests/test_retry.py", "w").write('''import pytest

from svc.retry import backoff


@pytest.mark.parametrize("attempt", range(5))
def test_backoff_grows(attempt):
    assert backoff(attempt + 1) >= backoff(attempt)


def test_backoff_first_delay_is_base():
    assert backoff(0, base=0.25) == 0.25


def test_backoff_is_capped():
    delays = [backoff(attempt, base=0.5, cap=12.0) for attempt in range(10)]
    assert max(delays) <= 12.0, f"backoff exceeded cap: {max(delays)} > 12.0"


@pytest.mark.parametrize("attempt", range(3))
def test_backoff_error_budget_is_positive(attempt):
    assert backoff(attempt) > 0
''')
open(f"{d}/pytest.ini", "w").write("[pytest]\npythonpath = src\n")
EOF
  ( cd "$D" && "$PY" -m pytest -v -p no:cacheprovider tests ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# Monorepo-style pytest loop shared by c3/c4/c5: packages/<pkg>/tests run one
# package at a time with `pytest -v`, so a failure report lands in the middle.
pytest_loop() {
  ( cd "$D" && for p in packages/*/; do
      p=${p%/}
      echo "### ${p#packages/}"
      "$PY" -m pytest -v -p no:cacheprovider "$@" "$p/tests"
      echo "### ${p#packages/}: exit $?"
    done )
}

# c3_pytest_decode_error: 9 packages, ~130 tests each, most of them named
# test_decode_error_* (all PASSED); package 4 (codec) has one real failure.
# Needles: the `E` lines of that failure.
gen_c3_pytest_decode_error() {
  "$PY" - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(31)
pkgs = ["auth", "billing", "cache", "codec", "feeds", "ingest", "media", "search", "wire"]
for p in pkgs:
    os.makedirs(f"{d}/packages/{p}/tests", exist_ok=True)
    cases = [(f"{p}-{i:03d}", n) for i, n in enumerate(r.sample(range(1, 111), 110))]
    bug = p == "codec"
    open(f"{d}/packages/{p}/tests/conftest.py", "w").write("")
    open(f"{d}/packages/{p}/tests/test_decode_{p}.py", "w").write(f'''import pytest


class DecodeError(ValueError):
    def __init__(self, msg, offset):
        super().__init__(f"{{msg}} at byte {{offset}}")
        self.offset = offset


def decode(payload, codec):
    """Decode and report the byte offset of the first bad unit."""
    data = bytes(payload)
    width = 2 if codec == "utf-16-le" else 1
    for off in range(0, len(data), width):
        if data[off] == 0xFF:
            {"raise DecodeError('truncated unit', off - width if width == 2 and off % 64 == 62 else off)" if bug else "raise DecodeError('truncated unit', off)"}
    return data.decode("latin-1")


CASES = {cases!r}


@pytest.mark.parametrize("name,offset", CASES)
def test_decode_error_offset(name, offset):
    codec = "utf-16-le" if offset % 2 == 0 else "latin-1"
    payload = [0x41] * offset + [0xFF, 0x00]
    with pytest.raises(DecodeError) as ei:
        decode(payload, codec)
    assert ei.value.offset == offset


@pytest.mark.parametrize("name,offset", CASES[:20])
def test_decode_error_message(name, offset):
    with pytest.raises(DecodeError, match="truncated unit"):
        decode([0x42] * offset + [0xFF], "latin-1")
''')
EOF
  pytest_loop > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c3_service_disconnect_noise: a Python service (logging, counter clock)
# handling 2400 events; ~480 times it logs the harmless
# `ERROR [conn] client disconnected id=... peer=...`; once, in the middle, a
# settlement raises and logger.exception() prints a real traceback.
# Needles: the log line of the failure, the innermost frame, the exception.
gen_c3_service_disconnect_noise() {
  cat > "$D/settle.py" <<'EOF'
def parse_amount(text):
    units, _, cents = text.partition(".")
    return int(units) * 100 + int(cents or 0)


def settle(order):
    amount = parse_amount(order["amount"])
    fee = amount * 3 // 100
    return amount - fee
EOF
  cat > "$D/service.py" <<'EOF'
import logging
import random
from datetime import datetime, timedelta, timezone

from settle import settle

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
tick = 0


class Clock(logging.Formatter):
    def formatTime(self, record, datefmt=None):
        return (T0 + timedelta(milliseconds=37 * tick)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


h = logging.StreamHandler()
h.setFormatter(Clock("%(asctime)s %(levelname)-5s [%(name)s] %(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[h])
conn = logging.getLogger("conn")
api = logging.getLogger("api")
pay = logging.getLogger("settle")

r = random.Random(33)
for i in range(1, 2401):
    tick = i
    kind = r.random()
    cid = f"c-{r.getrandbits(24):06x}"
    if kind < 0.2:
        conn.error("client disconnected id=%s peer=10.0.%d.%d:%d reason=%s", cid,
                   r.randint(0, 9), r.randint(2, 250), r.randint(30000, 60999),
                   r.choice(["reset", "eof", "timeout"]))
    elif kind < 0.35:
        conn.info("client connected id=%s tls=1.3 alpn=h2", cid)
    else:
        oid = f"ord-{i:05d}"
        amount = f"{r.randint(1, 999)}.{r.randint(0, 99):02d}"
        if i == 1417:
            amount = "12a.50"
        try:
            net = settle({"id": oid, "amount": amount})
        except Exception:
            pay.exception("settlement failed for order=%s", oid)
            continue
        api.info("POST /v1/orders/%s/settle 200 net=%d client=%s", oid, net, cid)
api.info("shutdown: 2400 events processed")
EOF
  ( cd "$D" && "$PY" service.py ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c2_gcc_warnings_then_error: `make -k` over 90 C files compiled with -Wall
# -Wextra; most files warn (unused 'error_count', 'last_error' maybe
# uninitialized, in function 'handle_error', ...). The real error is in
# src/retry_063.c (a struct member that does not exist), near the end and
# followed by more warnings. Needles: the gcc error line and make's target.
gen_c2_gcc_warnings_then_error() {
  mkdir -p "$D/src"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(22)
for i in range(1, 91):
    name = ["errors", "faults", "report", "retry", "status"][i % 5]
    if i == 63:
        open(f"{d}/src/retry_063.c", "w").write('''struct retry_policy {
    int attempts;
    int error_attempts;
};

int retry_063_error_ratio(const struct retry_policy *pol)
{
    int error_total = 0;
    if (pol->attempts == 0)
        return 0;
    error_total = pol->max_errors * 100;
    return error_total / pol->attempts;
}
''')
        continue
    body = [f'''#include <string.h>

static int handle_error_{i}(int code, const char *error_text)
{{
    int error_count;
    int last_error;
    unsigned error_limit = {r.randint(3, 9)};
    if (code > 0)
        last_error = code;
    for (int k = 0; k < strlen(error_text); k++) {{
        if (k < error_limit)
            continue;
    }}
    return last_error;
}}

int {name}_{i:03d}_on_error(int code, int unused_errno)
{{
    return handle_error_{i}(code, "error");
}}
''']
    open(f"{d}/src/{name}_{i:03d}.c", "w").write("".join(body))
open(f"{d}/Makefile", "w").write('''CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Wextra
SRCS := $(sort $(wildcard src/*.c))
OBJS := $(patsubst src/%.c,build/%.o,$(SRCS))

all: $(OBJS)

build/%.o: src/%.c
\t@mkdir -p build
\t$(CC) $(CFLAGS) -c $< -o $@
''')
EOF
  # make's order: sorted file names; retry_063 is ~3/4 of the way through.
  ( cd "$D" && make -k -j1 ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c3_gcc_many_warnings: one gcc invocation over 130 files, each with a few
# unrelated warnings (-Wall -Wextra -Wsign-compare -Wshadow); src/mod_065.c
# redeclares a function with a different type. Needles: the error and the
# `note: previous declaration` line that explains it.
gen_c3_gcc_many_warnings() {
  mkdir -p "$D/src"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(32)
for i in range(1, 131):
    if i == 65:
        open(f"{d}/src/mod_065.c", "w").write('''#include <stddef.h>
#include <stdint.h>

uint32_t crc32_update(uint32_t crc, const uint8_t *buf, size_t len);

uint32_t crc32_update(uint32_t crc, const char *buf, int len)
{
    for (int i = 0; i < len; i++)
        crc = (crc >> 8) ^ (uint32_t)(unsigned char)buf[i];
    return crc;
}
''')
        continue
    k = r.randint(2, 50)
    open(f"{d}/src/mod_{i:03d}.c", "w").write(f'''#include <stdio.h>

static int scale_{i}(int value, int unused_flags)
{{
    int value_copy = value;
    {{
        int value = value_copy * {k};
        value_copy = value;
    }}
    return value_copy;
}}

int mod_{i:03d}_sum(const int *xs, int n)
{{
    int total = 0, spare;
    for (unsigned i = 0; i < n; i++)
        total += scale_{i}(xs[i], 0);
    return total;
}}
''')
EOF
  ( cd "$D" && gcc -std=c11 -O2 -Wall -Wextra -Wshadow -c src/*.c ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c4_asan_tests: a test runner script over 32 suites of one C test binary
# built with -fsanitize=address; suite "ringbuf" (the 10th) writes one element
# past a heap ring buffer in case 23, ASan prints its report and aborts that
# suite, the loop continues. ASLR is off (setarch -R) so addresses are stable;
# the "==PID==" prefix is not.
# Needles: the ERROR line, the access line, frame #0 (file:line) and the
# "located 0 bytes to the right of" line.
gen_c4_asan_tests() {
  mkdir -p "$D/src" "$D/build"
  cat > "$D/src/ring.c" <<'EOF'
#include <stdlib.h>

struct ring { int *slots; int cap; int head; };

struct ring *ring_new(int cap)
{
    struct ring *r = malloc(sizeof *r);
    r->slots = malloc(cap * sizeof *r->slots);
    r->cap = cap;
    r->head = 0;
    return r;
}

void ring_push(struct ring *r, int v)
{
    r->slots[r->head] = v;
    r->head = r->head + 1 > r->cap ? 0 : r->head + 1;
}
EOF
  cat > "$D/src/t.c" <<'EOF'
#include <stdio.h>
#include <string.h>

struct ring;
struct ring *ring_new(int cap);
void ring_push(struct ring *r, int v);

static int run_case(const char *suite, int n)
{
    if (strcmp(suite, "ringbuf") == 0 && n == 23) {
        struct ring *r = ring_new(16);
        for (int i = 0; i < 17; i++)
            ring_push(r, i);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *suite = argc > 1 ? argv[1] : "unnamed";
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i <= 60; i++) {
        printf("[ RUN      ] %s.case_%02d\n", suite, i);
        run_case(suite, i);
        printf("[       OK ] %s.case_%02d (0 ms)\n", suite, i);
    }
    printf("[  PASSED  ] %s: 60 tests\n", suite);
    return 0;
}
EOF
  ( cd "$D" && gcc -g -O0 -fsanitize=address -fno-omit-frame-pointer -o build/t src/t.c src/ring.c ) >&2
  cat > "$D/run_tests.sh" <<'EOF'
#!/bin/bash
failed=0
for t in alloc arena base64 bitset buffer crc32 deque dict hash ringbuf heap json \
         list lru mpsc parse path pool queue rope sha1 slab sort strbuf table \
         timer trie utf8 varint vec wal zlib; do
    echo "=== test_$t"
    ./build/t "$t" || failed=$((failed + 1))
done
echo "summary: 32 suites, $failed failed"
EOF
  ( cd "$D" && "${NOASLR[@]}" bash run_tests.sh ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c4_valgrind_uninit: a check script runs `valgrind --track-origins=yes
# ./parse` over 14 data files (each prints ~130 record lines, then valgrind's
# heap summary); for file 08 (a v1 header) a header field is never set and
# valgrind reports a conditional jump on an uninitialised value.
# Needles: the report line, its first frame (file:line) and the origin frame.
gen_c4_valgrind_uninit() {
  mkdir -p "$D/data"
  cat > "$D/parse.c" <<'EOF'
#include <stdio.h>
#include <string.h>

struct header { int version; int flags; int count; };

static void read_header(FILE *f, struct header *h)
{
    if (fscanf(f, "v%d %d", &h->version, &h->count) != 2)
        h->count = 0;
    if (h->version >= 2 && fscanf(f, " flags=%d", &h->flags) != 1)
        h->flags = 0;
}

static int parse_file(const char *path)
{
    struct header h;
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    read_header(f, &h);
    for (int i = 0; i < h.count; i++) {
        char name[32];
        int qty;
        if (fscanf(f, "%31s %d", name, &qty) != 2)
            break;
        if (h.flags & 1)
            printf("%s: record %3d %-12s qty=%d (checked)\n", path, i, name, qty);
        else
            printf("%s: record %3d %-12s qty=%d\n", path, i, name, qty);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++)
        parse_file(argv[i]);
    return 0;
}
EOF
  "$PY" - "$D/data" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(42)
for n in range(1, 15):
    v1 = n == 8
    lines = [f"v1 130" if v1 else f"v2 130 flags={r.randint(0, 1)}"]
    for i in range(130):
        lines.append(f"{r.choice(['bolt', 'nut', 'gear', 'shaft', 'valve'])}-{r.randint(100, 999)} {r.randint(1, 500)}")
    open(f"{d}/batch_{n:02d}.txt", "w").write("\n".join(lines) + "\n")
EOF
  ( cd "$D" && gcc -g -O0 -o parse parse.c ) >&2
  ( cd "$D" && for f in data/batch_*.txt; do
      echo "--- checking $f"
      valgrind --track-origins=yes --error-exitcode=3 ./parse "$f"
      echo "--- $f: exit $?"
    done ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c5_valgrind_invalid_read: `valgrind ./inventory` printing a 2600-line stock
# report; one lookup reads one element past a 100-int heap table. The report
# has no "error" word: "Invalid read of size 4" and the frames are the marker.
# Needles: the "Invalid read" line, its first frame and the block description.
gen_c5_valgrind_invalid_read() {
  cat > "$D/inventory.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

static int *prices;

static int lookup_price(int sku)
{
    return prices[sku % 101];
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    prices = malloc(100 * sizeof *prices);
    for (int i = 0; i < 100; i++)
        prices[i] = 100 + (i * 37) % 900;
    unsigned s = 12345;
    long total = 0;
    for (int row = 1; row <= 2600; row++) {
        s = s * 1103515245u + 12345u;
        int sku = (int)((s >> 8) % 100);
        if (row == 1300)
            sku = 100;
        int qty = (int)((s >> 3) % 40) + 1;
        int price = lookup_price(sku);
        total += (long)price * qty;
        printf("row %4d sku=%03d qty=%2d unit=%4d line_total=%6d running=%9ld\n",
               row, sku, qty, price, price * qty, total);
    }
    printf("stock value: %ld\n", total);
    free(prices);
    return 0;
}
EOF
  ( cd "$D" && gcc -g -O0 -o inventory inventory.c ) >&2
  ( cd "$D" && valgrind ./inventory ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c4_gxx_overload: `make -k` over 600 C++ files (g++ -std=c++17 -Wall
# -Wextra), every 8th with an unused-parameter warning; src/billing_150.cpp
# calls an overloaded function with a std::string and g++ explains why each
# candidate does not fit.
# Needles: the error line and its `note:` lines (candidates, conversion,
# "candidate expects 3 arguments, 2 provided").
gen_c4_gxx_overload() {
  mkdir -p "$D/src"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(43)
groups = ["audit", "billing", "catalog", "checkout", "inventory", "shipping"]
n = 0
for g in groups:
    for i in range(1, 101):
        n += 1
        path = f"{d}/src/{g}_{n:03d}.cpp"
        if n == 150:
            open(path, "w").write('''#include <string>

namespace billing {

int scale(int amount, int percent)
{
    return amount * percent / 100;
}

double scale(double amount, double percent, double floor)
{
    double v = amount * percent / 100.0;
    return v < floor ? floor : v;
}

int discounted(const std::string &sku, int percent)
{
    std::string key = sku;
    return scale(key, percent);
}

} // namespace billing
''')
            continue
        warn = n % 8 == 0
        open(path, "w").write(f'''namespace {g} {{

int step_{n:03d}(int value{", int flags" if warn else ""})
{{
    return value * {r.randint(2, 99)} + {n};
}}

}} // namespace {g}
''')
open(f"{d}/Makefile", "w").write('''CXX = g++
CXXFLAGS = -std=c++17 -O1 -Wall -Wextra -Wpedantic -Iinclude -DSHOP_VERSION=2.14
SRCS := $(sort $(wildcard src/*.cpp))
OBJS := $(patsubst src/%.cpp,build/%.o,$(SRCS))

all: $(OBJS)

build/%.o: src/%.cpp
\t@mkdir -p build
\t$(CXX) $(CXXFLAGS) -c $< -o $@
''')
EOF
  ( cd "$D" && make -k -j1 ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c4_pytest_assert_diff: the pytest loop over 10 packages (125 invoice tests
# each); in package 4 (ledger) one invoice total is off and pytest prints a
# dict assert diff. Needles: the assert line and the "Differing items" pair.
gen_c4_pytest_assert_diff() {
  "$PY" - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(44)
for p in ["accounts", "billing", "invoicing", "ledger", "payouts", "refunds", "reports", "statements", "taxes", "wallets"]:
    os.makedirs(f"{d}/packages/{p}/tests", exist_ok=True)
    invoices = []
    for i in range(1, 126):
        lines = [(r.randint(1, 9), r.randint(50, 900)) for _ in range(r.randint(1, 4))]
        invoices.append((f"INV-{p[:3].upper()}-{i:04d}", lines))
    bug = p == "ledger"
    open(f"{d}/packages/{p}/tests/test_{p}_totals.py", "w").write(f'''import pytest

INVOICES = {invoices!r}


def summarize(number, lines):
    total = sum(qty * cents for qty, cents in lines)
    {"if number == 'INV-LED-0063':" if bug else "if False:"}
        total = total - total % 100 if total % 100 < 50 else total
    return {{"currency": "EUR", "lines": len(lines), "number": number, "total": total}}


@pytest.mark.parametrize("number,lines", INVOICES, ids=[n for n, _ in INVOICES])
def test_invoice_summary(number, lines):
    expected = {{
        "currency": "EUR",
        "lines": len(lines),
        "number": number,
        "total": sum(q * c for q, c in lines),
    }}
    assert summarize(number, lines) == expected
''')
EOF
  pytest_loop > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c5_pytest_skipped_summary: CI shards run one package at a time with
# `pytest -v -m "not slow"`; package "pgstore" skips every test (PG_DSN is not
# set) so its run passes nothing: only the summary line says so.
# Needle: that "N skipped, M deselected" summary line (its duration varies).
gen_c5_pytest_skipped_summary() {
  "$PY" - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(45)
for p in ["api", "auth", "cache", "events", "pgstore", "queue", "reports", "scheduler", "search", "storage", "web", "workers"]:
    os.makedirs(f"{d}/packages/{p}/tests", exist_ok=True)
    n = r.randint(90, 110)
    needs_pg = p == "pgstore"
    open(f"{d}/packages/{p}/tests/test_{p}.py", "w").write(f'''import os

import pytest

pytestmark = [{'pytest.mark.skipif(not os.environ.get("PG_DSN"), reason="PG_DSN not set")' if needs_pg else ''}]


@pytest.mark.parametrize("case", range({n}))
def test_{p}_roundtrip(case):
    assert (case * 7) % 7 == 0


@pytest.mark.slow
@pytest.mark.parametrize("case", range({r.randint(10, 30)}))
def test_{p}_soak(case):
    assert case >= 0


@pytest.mark.parametrize("case", range({r.randint(5, 15)}))
def test_{p}_optional_backend(case):
    if case % 4 == 0:
        pytest.skip("optional backend not installed")
    assert case
''')
    open(f"{d}/packages/{p}/pytest.ini", "w").write("[pytest]\nmarkers =\n    slow: long-running soak tests\n")
EOF
  pytest_loop -m "not slow" > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# Go module shared by c4_go_test_expected and c5_go_test_gotwant:
# 14 packages with table-driven tests (100 subtests each),
# run with `go test -count=1 -v ./...`. MODE picks the one thing that breaks.
go_module() {
  "$PY" - "$D" "$1" <<'EOF'
import os, random, sys
d, mode = sys.argv[1], sys.argv[2]
r = random.Random({"expected": 46, "gotwant": 51}[mode])
pkgs = ["audit", "billing", "catalog", "fulfil", "invoice", "ledger", "notify", "orders", "payments", "pricing", "rates", "refunds", "snapshot", "stock"]
open(f"{d}/go.mod", "w").write("module example.com/shop\n\ngo 1.19\n")
for p in pkgs:
    os.makedirs(f"{d}/{p}", exist_ok=True)
    cases = [(f"{p[:3].upper()}-{i:04d}", r.randint(1, 40), r.randint(5, 99)) for i in range(1, 101)]
    open(f"{d}/{p}/{p}.go", "w").write(f'''package {p}

// Total returns the line total in cents for qty units at price cents.
func Total(id string, qty, price int) int {{
\tt := qty * price
\t{'if id == "INV-0437" {' if (mode == "expected" and p == "invoice") else 'if id == "LED-0052" {' if (mode == "gotwant" and p == "ledger") else 'if false {'}
\t\tt -= t % 50
\t}}
\treturn t
}}
''')
    rows = "\n".join(f'\t\t{{"{c[0] if not (mode == "expected" and p == "invoice" and i == 36) else "INV-0437"}", {c[1]}, {c[2]}}},' for i, c in enumerate(cases))
    if mode == "expected":
        check = '''\t\t\tif got, want := Total(c.id, c.qty, c.price), c.qty*c.price; got != want {
\t\t\t\tt.Errorf("total for %s:\\ngot:      %d\\nexpected: %d", c.id, got, want)
\t\t\t}'''
    else:
        check = '''\t\t\tif got, want := Total(c.id, c.qty, c.price), c.qty*c.price; got != want {
\t\t\t\tt.Errorf("got %d, want %d", got, want)
\t\t\t}'''
    open(f"{d}/{p}/{p}_test.go", "w").write(f'''package {p}

import "testing"

func TestTotal(t *testing.T) {{
\tcases := []struct {{
\t\tid         string
\t\tqty, price int
\t}}{{
{rows}
\t}}
\tfor _, c := range cases {{
\t\tc := c
\t\tt.Run(c.id, func(t *testing.T) {{
{check}
\t\t}})
\t}}
}}
''')
EOF
}

# c4_go_test_expected: package invoice (5th of 14) computes one total wrong;
# the test prints a got:/expected: block. Needles: the test's message line,
# the got: and expected: lines, and the failing subtest's --- FAIL line.
gen_c4_go_test_expected() {
  go_module expected
  ( cd "$D" && go test -count=1 -v ./... ) > "$OUT/$N.log" 2>&1
}

# c5_go_test_gotwant: package ledger (6th of 14) fails one subtest with
# t.Errorf("got %d, want %d"). Needle: that message line.
gen_c5_go_test_gotwant() {
  go_module gotwant
  ( cd "$D" && go test -count=1 -v ./... ) > "$OUT/$N.log" 2>&1
}

# c5_go_run_killed: an import script runs `go run ./cmd/import -shard N`
# for 10 shards (each prints 260 progress lines); shard 4 is SIGKILLed half
# way (the program kills itself, standing in for the OOM killer) and go run
# only says "signal: killed". Needle: that line.
gen_c5_go_run_killed() {
  mkdir -p "$D/cmd/import"
  printf 'module example.com/importer\n\ngo 1.19\n' > "$D/go.mod"
  cat > "$D/cmd/import/main.go" <<'EOF'
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"syscall"
)

func main() {
	shard := flag.Int("shard", 1, "shard number")
	flag.Parse()
	rng := rand.New(rand.NewSource(int64(*shard)))
	for i := 1; i <= 260; i++ {
		n := 200 + rng.Intn(800)
		fmt.Printf("shard %d: imported batch %03d rows=%d bytes=%d\n", *shard, i, n, n*137)
		if *shard == 4 && i == 130 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	fmt.Printf("shard %d: done (260 batches)\n", *shard)
}
EOF
  ( cd "$D" && for s in 1 2 3 4 5 6 7 8 9 10; do
      echo "=== import shard $s"
      go run ./cmd/import -shard "$s"
    done ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c4_shellcheck: `shellcheck scripts/*.sh` over 100 ops scripts, each with
# the usual info/warning/style findings (unquoted variables, unused
# variables, cd without || exit, backticks); scripts/rollout_047.sh has the
# one error-severity finding (unquoted $@). Needles: the "In FILE line N:"
# header of that finding, the code line and the SC2068 (error) line.
gen_c4_shellcheck() {
  mkdir -p "$D/scripts"
  "$PY" - "$D/scripts" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(47)
kinds = ["backup", "deploy", "rollout", "rotate", "sync"]
for i in range(1, 101):
    k = kinds[i % 5]
    svc = r.choice(["api", "worker", "cron", "gateway", "billing"])
    body = [f'''#!/bin/bash
# {k} helper for {svc} (#{i})
target_dir=/srv/{svc}/releases
stamp=`date +%Y%m%d`
unused_{k}_{i}=1
cd $target_dir
for f in $(find $target_dir -name "*.tar"); do
    echo "checking $f"
    cp $f /var/backups/{svc}/$f.$stamp
done
''']
    if i == 47:
        body.append('''hosts_file=/etc/rollout/hosts
for host in $@; do
    ssh "$host" "systemctl restart app" < "$hosts_file"
done
''')
    else:
        body.append(f'''echo "{k} {svc} done: $stamp"
''')
    open(f"{d}/{k}_{i:03d}.sh", "w").write("".join(body))
EOF
  ( cd "$D" && shellcheck scripts/*.sh ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c5_git_merge_conflict: `git merge feature` where both branches edited 2400
# files (main the first line, feature the last line, so they auto-merge);
# in src/module_11/handler_1123.c both edited the same line. Git prints
# "Auto-merging ..." for each file and one CONFLICT line, no "error" word.
# Needle: the CONFLICT line.
gen_c5_git_merge_conflict() {
  mkdir -p "$D/repo"
  "$PY" - "$D/repo" <<'EOF'
import os, sys
d = sys.argv[1]
for i in range(1, 2401):
    p = f"{d}/src/module_{i // 100:02d}"
    os.makedirs(p, exist_ok=True)
    open(f"{p}/handler_{i:04d}.c", "w").write(
        f"/* handler {i} */\n#include \"handler.h\"\n\nint handler_{i:04d}(int x)\n{{\n"
        f"    int y = x + {i};\n    return y;\n}}\n/* end of handler {i} */\n")
EOF
  (
    cd "$D/repo" && git init -q -b main . && git add -A && git commit -q -m "import handlers"
    git checkout -q -b feature
    git ls-files | xargs sed -i 's|^/\* end of handler \([0-9]*\) \*/$|/* end of handler \1 (feature: traced) */|'
    sed -i 's/    int y = x + 1123;/    int y = x + 1123 + TRACE_BIAS;/' src/module_11/handler_1123.c
    git commit -q -am "feature: trace every handler"
    git checkout -q main
    git ls-files | xargs sed -i 's|^/\* handler \([0-9]*\) \*/$|/* handler \1 (main: audited) */|'
    sed -i 's/    int y = x + 1123;/    int y = x + 1123 * 2;/' src/module_11/handler_1123.c
    git commit -q -am "main: audit every handler"
  ) >&2
  ( cd "$D/repo" && git merge --no-edit feature ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c5_make_killed_137: `make -k` over 80 shard targets, recipe run by bash;
# each shard job prints ~20 progress lines; shard 30 is SIGKILLed (it kills
# itself, as the OOM killer would). bash reports "Killed" (with a PID) and make
# "Error 137". Needles: both lines.
gen_c5_make_killed_137() {
  cat > "$D/shard.py" <<'EOF'
import os
import random
import signal
import sys

n = int(sys.argv[1])
r = random.Random(n)
for step in range(1, 21):
    print(f"shard {n:02d}: step {step:02d}/20 merged {r.randint(1000, 9999)} rows into part-{n:02d}-{step:02d}.parquet")
    if n == 30 and step == 11:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
print(f"shard {n:02d}: done")
EOF
  "$PY" - "$D" <<'EOF'
import sys
d = sys.argv[1]
shards = " ".join(f"out/shard_{i:02d}.done" for i in range(1, 81))
open(f"{d}/Makefile", "w").write(f'''SHELL := /bin/bash
PYTHON ?= python3
SHARDS := {shards}

all: $(SHARDS)

out/shard_%.done: shard.py
\t@mkdir -p out
\t$(PYTHON) shard.py $* && touch $@
''')
EOF
  ( cd "$D" && make -k -j1 PYTHON="$PY" ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c5_make_check_segv: `make -k check` runs 30 test suites (recipe
# `ulimit -c 0; ./build/t SUITE`, so through sh), each printing 50
# "[ RUN ]/[ OK ]" pairs; suite hash (9th) dereferences a bad pointer, sh prints
# "Segmentation fault" and make "Error 139". Needles: both lines.
gen_c5_make_check_segv() {
  mkdir -p "$D/build"
  cat > "$D/t.c" <<'EOF'
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "unnamed";
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i <= 50; i++) {
        printf("[ RUN      ] %s.case_%02d\n", name, i);
        if (strcmp(name, "hash") == 0 && i == 29) {
            volatile int *p = (int *)8;
            *p = 42;
        }
        printf("[       OK ] %s.case_%02d (0 ms)\n", name, i);
    }
    printf("[  PASSED  ] %s: 50 tests\n", name);
    return 0;
}
EOF
  ( cd "$D" && gcc -O0 -o build/t t.c ) >&2
  "$PY" - "$D" <<'EOF'
import sys
d = sys.argv[1]
suites = "alloc arena base64 bitset buffer crc32 deque dict hash heap json list lru mpsc parse path pool queue ringbuf rope sha1 slab strbuf table utf8 varint vec wal xml zlib".split()
open(f"{d}/Makefile", "w").write(f'''SUITES := {" ".join(suites)}

check: $(addprefix check-,$(SUITES))

check-%: build/t
\tulimit -c 0; ./build/t $*
''')
EOF
  ( cd "$D" && make -k check ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c6_json_minified: `jq -c .` prints a 1400-job batch result as one ~220 KB
# line; job 0701 (about 110 KB into the line) failed. A second jq lists the
# jobs that are not ok.
# Needles: the second jq's line; substr: the failed job's status+message.
gen_c6_json_minified() {
  "$PY" - "$D" <<'EOF'
import json, random, sys
d = sys.argv[1]
r = random.Random(61)
jobs = []
for i in range(1, 1401):
    start = 1714564800 + i * 17
    job = {
        "id": f"job-7781-{i:04d}",
        "batch": 7781,
        "node": f"worker-{r.randint(1, 24):02d}.eu-west",
        "attempts": 1 if r.random() < 0.9 else 2,
        "started": start,
        "finished": start + r.randint(3, 90),
        "bytes": r.randint(10_000, 9_000_000),
        "status": "ok",
        "message": None,
    }
    if i == 701:
        job["status"] = "error"
        job["message"] = "disk quota exceeded on /var/lib/pg/wal (segment 0000000100000A2F000000C4)"
    jobs.append(job)
json.dump({"batch": 7781, "count": len(jobs), "jobs": jobs}, open(f"{d}/jobs.json", "w"), indent=2)
EOF
  ( cd "$D" && jq -c . jobs.json && jq -r '.jobs[] | select(.status != "ok") | "\(.id) \(.status)"' jobs.json ) \
    > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c6_link_long_line: `make -k` compiles 721 objects, echoes one ~32 KB link
# command (all objects), the link fails on an undefined reference, and make
# goes on compiling 850 test objects. Needles: the two ld lines naming the
# object/function and the undefined symbol, and collect2's line.
gen_c6_link_long_line() {
  "$PY" - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(62)
objs, tobjs = [], []
for area in ("billing", "catalog", "payments", "reporting", "shipping", "storefront"):
    p = f"{d}/src/services/{area}"
    os.makedirs(p, exist_ok=True)
    for i in range(1, 121):
        name = f"{area}_{i:04d}"
        body = f"int {name}(int x)\n{{\n    return x * {r.randint(2, 97)};\n}}\n"
        if name == "reporting_0112":
            body = ("int fmt_currency(char *out, long cents);\n\n"
                    "int reporting_0112(int x)\n{\n    char buf[32];\n    return fmt_currency(buf, x) + x;\n}\n")
        open(f"{p}/{name}.c", "w").write(body)
        objs.append(f"build/obj/services/{area}/{name}.o")
os.makedirs(f"{d}/src/main", exist_ok=True)
open(f"{d}/src/main/main.c", "w").write("int main(void)\n{\n    return 0;\n}\n")
objs.append("build/obj/main/main.o")
os.makedirs(f"{d}/tests", exist_ok=True)
for i in range(1, 851):
    open(f"{d}/tests/test_{i:04d}.c", "w").write(f"int test_{i:04d}(void)\n{{\n    return {i};\n}}\n")
open(f"{d}/Makefile", "w").write('''CC = cc
CFLAGS = -std=c11 -O1 -Wall -Wextra
OBJS := $(patsubst src/%.c,build/obj/%.o,$(sort $(wildcard src/*/*.c src/*/*/*.c)))
TOBJS := $(patsubst tests/%.c,build/tests/%.o,$(sort $(wildcard tests/*.c)))

all: bin/storefront tests

bin/storefront: $(OBJS)
\t@mkdir -p bin
\t$(CC) -o $@ $(OBJS)

tests: $(TOBJS)

build/obj/%.o: src/%.c
\t@mkdir -p $(dir $@)
\t$(CC) $(CFLAGS) -c $< -o $@

build/tests/%.o: tests/%.c
\t@mkdir -p $(dir $@)
\t$(CC) $(CFLAGS) -c $< -o $@
''')
EOF
  ( cd "$D" && make -k -j1 ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c6_python_long_repr: a Python settlement service (logging, counter clock)
# processes 36 batches; for batch b-0019 it logs the per-order results dict
# as one ~55 KB line, in which one order was rejected, then an ERROR that
# settlement is postponed. Needles: the ERROR line; substr: the rejected
# order's entry inside the long line.
gen_c6_python_long_repr() {
  cat > "$D/settle_batches.py" <<'EOF'
import logging
import random
from datetime import datetime, timedelta, timezone

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
tick = 0


class Clock(logging.Formatter):
    def formatTime(self, record, datefmt=None):
        return (T0 + timedelta(milliseconds=211 * tick)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


h = logging.StreamHandler()
h.setFormatter(Clock("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[h])
log = logging.getLogger("settle")

r = random.Random(63)
for b in range(1, 37):
    batch = f"b-{b:04d}"
    results = {}
    for k in range(1, 61):
        tick += 1
        oid = f"o-{b:02d}{k:03d}"
        qty = r.randint(1, 20)
        if b == 19 and k == 41:
            qty = -3
        results[oid] = "accepted" if qty >= 1 else f"rejected: qty must be >= 1 (got {qty})"
        log.info("batch %s order %s amount=%d.%02d EUR queued", batch, oid,
                 r.randint(1, 999), r.randint(0, 99))
    if b == 19:
        for k in range(61, 2201):
            results[f"o-{b:02d}{k:04d}"] = "accepted"
        log.warning("batch %s partially rejected: results=%r", batch, results)
        log.error("batch %s: 1 order(s) rejected, settlement postponed", batch)
    else:
        log.info("batch %s settled: %d orders", batch, len(results))
EOF
  ( cd "$D" && "$PY" settle_batches.py ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c7_make_cc_template: `make -k` over 2000 C files; the output is 2000 lines
# of one template (`cc -O2 -Wall -c src/module_N.c -o build/module_N.o`);
# module_0917 has a type error. Needles: gcc's error line and make's target.
gen_c7_make_cc_template() {
  mkdir -p "$D/src"
  "$PY" - "$D" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(71)
for i in range(1, 2001):
    if i == 917:
        body = ('struct point { int x, y; };\n\n'
                'int module_0917(struct point p)\n{\n    return p.x + p.y + p.z;\n}\n')
    else:
        body = f"int module_{i:04d}(int v)\n{{\n    return v + {r.randint(1, 999)};\n}}\n"
    open(f"{d}/src/module_{i:04d}.c", "w").write(body)
open(f"{d}/Makefile", "w").write('''SRCS := $(sort $(wildcard src/*.c))
OBJS := $(patsubst src/%.c,build/%.o,$(SRCS))

all: $(OBJS)

build/%.o: src/%.c
\t@mkdir -p build
\tcc -O2 -Wall -c $< -o $@
''')
EOF
  ( cd "$D" && make -k -j1 ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# c7_gzip_verbose: `gzip -v logs/*.log` over 2400 rotated logs; the output is
# one template ("X:  NN.N% -- replaced with X.gz"); one archive already exists
# so gzip refuses that file (no "error" word) and exits 2.
# Needle: gzip's "already exists; not overwritten" line.
gen_c7_gzip_verbose() {
  mkdir -p "$D/logs"
  "$PY" - "$D/logs" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(72)
words = ["GET", "POST", "200", "404", "/api/v1/orders", "/healthz", "user=", "ms", "cache=hit", "cache=miss"]
for i in range(1, 2401):
    lines = [" ".join(r.choice(words) for _ in range(8)) for _ in range(r.randint(5, 40))]
    open(f"{d}/app-2024-05-01_{i:04d}.log", "w").write("\n".join(lines) + "\n")
EOF
  ( cd "$D/logs" && gzip -n -c app-2024-05-01_1317.log > app-2024-05-01_1317.log.gz ) >&2
  ( cd "$D" && gzip -n -v logs/*.log < /dev/null ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# io_python_interleave: a data migration writing progress to stdout and
# warnings to stderr, both unbuffered (PYTHONUNBUFFERED=1), so 2>&1 keeps the
# true interleaving. One row fails a foreign key (stderr) and its batch is
# rolled back (stdout). Needles: both lines.
gen_io_python_interleave() {
  cat > "$D/migrate.py" <<'EOF'
import random
import sys

r = random.Random(81)
for batch in range(1, 25):
    lo, hi = (batch - 1) * 100 + 1, batch * 100
    print(f"batch {batch:02d}: migrating rows {lo}-{hi} into accounts_v2")
    failed = False
    for row in range(lo, hi + 1):
        cust = r.randint(10000, 99999)
        if row == 1417:
            print(f"migrate: row {row}: foreign key violation: customer {cust} missing in customers_v2", file=sys.stderr)
            failed = True
            continue
        if r.random() < 0.3:
            print(f"warning: row {row}: email for customer {cust} not normalized, lowercased", file=sys.stderr)
        print(f"row {row}: customer {cust} -> accounts_v2 ok")
    if failed:
        print(f"batch {batch:02d} (rows {lo}-{hi}) rolled back; continuing with batch {batch + 1:02d}")
    else:
        print(f"batch {batch:02d}: committed {hi - lo + 1} rows")
print("migration finished: 24 batches, 1 rolled back")
EOF
  ( cd "$D" && "$PY" migrate.py ) > "$OUT/$N.log" 2>&1
}

# ---------------------------------------------------------------------------
# io_c_interleave: an fsck-like checker that write(2)s per-inode results to
# stdout and repairs to stderr (no stdio buffering). One inode has a block
# claimed twice; the checker reports it (stderr) and clears it (stdout).
# Needles: both lines.
gen_io_c_interleave() {
  cat > "$D/chk.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void out(int fd, const char *s) { (void)!write(fd, s, strlen(s)); }

int main(void)
{
    char buf[256];
    unsigned s = 2024;
    for (int ino = 48001; ino <= 50400; ino++) {
        s = s * 1103515245u + 12345u;
        if (ino == 49213) {
            snprintf(buf, sizeof buf, "inode %d: block 1417 already claimed by inode 48001; clearing inode %d\n", ino, ino);
            out(2, buf);
            snprintf(buf, sizeof buf, "pass 1: inode %d cleared (2 blocks released)\n", ino);
            out(1, buf);
            continue;
        }
        if ((s >> 16) % 4 == 0) {
            snprintf(buf, sizeof buf, "inode %d: i_links_count is 2, should be 1; fixed\n", ino);
            out(2, buf);
        }
        snprintf(buf, sizeof buf, "pass 1: inode %d ok (mode 0100644, %u blocks)\n", ino, (s >> 8) % 64);
        out(1, buf);
    }
    out(1, "pass 1 complete: 2400 inodes checked\n");
    return 0;
}
EOF
  ( cd "$D" && gcc -O2 -o chk chk.c ) >&2
  ( cd "$D" && ./chk ) > "$OUT/$N.log" 2>&1
}

# MAIN: tools, then the selected generators (all by default).
install_tools
if [ $# -gt 0 ]; then SELECTED=("$@"); else SELECTED=("${LOGS[@]}"); fi
for N in "${SELECTED[@]}"; do
  case " ${LOGS[*]} " in *" $N "*) ;; *) echo "unknown log: $N" >&2; exit 2 ;; esac
done
mkdir -p "$WORK"
for N in "${SELECTED[@]}"; do
  step "$N"
  D="$WORK/$N"
  rm -rf "$D"
  mkdir -p "$D"
  rm -f "$OUT/$N.log" "$OUT/$N.needle" "$OUT/$N.substr"
  "gen_$N"
done

# ---------------------------------------------------------------------------
# Needles + README section. Each needle regex must match exactly one line of
# its log; that whole line is the needle (and must occur exactly once as a
# whole line). Each substr regex must match exactly once; the matched text is
# the substring. "where": head = first 4 KB, tail = last 50 KB, else middle;
# each needle is checked against the place its class puts it.
step needles+README
"$PY" - "$OUT" "${LOGS[@]}" <<'EOF'
import re, sys
out, names = sys.argv[1], sys.argv[2:]
HEAD, TAIL = 4096, 51200
# name: (tool/command, where needles sit, what the needles are, [needle regex or (regex, where)], [substr regex])
spec = {
 "c1_make_first_fails": ("make -k -j1 (1300 C files, the first fails)", "head",
  "gcc error for the first file compiled, its note with the fix, make's failing target",
  [r"^src/alloc\.c:6:5: error: unknown type name 'size_t'$",
   r"^src/alloc\.c:\d+:\d+: note: 'size_t' is defined in header",
   r"^make: \*\*\* \[Makefile:\d+: build/alloc\.o\] Error 1$"], []),
 "c1_tar_missing_first": ("tar --sort=name -cvf dist/release-2.14.0.tar config/release.env assets src docs", "head",
  "tar's error for the first input, before a 2900-line listing",
  [r"^tar: config/release\.env: Cannot stat: No such file or directory$"], []),
 "c2_pytest_error_names": ("pytest -v tests (~810 tests named *error*, 110 warnings)", "tail",
  "assertion message and location of the one failure, among 'error' test names and warnings",
  [r"^E       AssertionError: backoff exceeded cap: ",
   r"^tests/test_retry\.py:\d+: AssertionError$"], []),
 "c2_gcc_warnings_then_error": ("make -k -j1 (90 C files, gcc -Wall -Wextra, 'error'-named warnings)", "tail",
  "the one gcc error (late, between warnings) and make's failing target",
  [r"^src/retry_063\.c:\d+:\d+: error: ",
   r"^make: \*\*\* \[Makefile:\d+: build/retry_063\.o\] Error 1$"], []),
 "c3_service_disconnect_noise": ("python3 service.py (logging, 2400 events, ~450 'ERROR client disconnected')", "middle",
  "the real failure among repeated harmless ERROR lines: log line, innermost frame, exception",
  [r" ERROR \[settle\] settlement failed for order=ord-01417$",
   r'^  File ".*/settle\.py", line \d+, in parse_amount$',
   r"^ValueError: invalid literal for int\(\) with base 10: "], []),
 "c3_pytest_decode_error": ("for p in packages/*: pytest -v $p/tests (9 packages, ~1150 test_decode_error_* PASSED)", "middle",
  "the `E` lines and location of the one failure in package 4 of 9",
  [r"^E       AssertionError: assert \d+ == 62$",
   r"^E        \+  where \d+ = DecodeError\('truncated unit at byte \d+'\)\.offset$",
   r"^packages/codec/tests/test_decode_codec\.py:\d+: AssertionError$"], []),
 "c3_gcc_many_warnings": ("gcc -std=c11 -O2 -Wall -Wextra -Wshadow -c src/*.c (130 files, ~520 warnings)", "middle",
  "the one error (conflicting types) and the note pointing at the other declaration",
  [r"^src/mod_065\.c:\d+:\d+: error: conflicting types for 'crc32_update'",
   r"^src/mod_065\.c:\d+:\d+: note: previous declaration of 'crc32_update'"], []),
 "c4_asan_tests": ("setarch -R bash run_tests.sh (32 suites, gcc -fsanitize=address)", "middle",
  "AddressSanitizer report of suite 10: error, access, frame #0, region, summary",
  [r"^==\d+==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x[0-9a-f]+ ",
   r"^WRITE of size 4 at 0x[0-9a-f]+ thread T0$",
   r"^    #0 0x[0-9a-f]+ in ring_push src/ring\.c:\d+$",
   r"^0x[0-9a-f]+ is located 0 bytes to the right of 64-byte region ",
   r"^SUMMARY: AddressSanitizer: heap-buffer-overflow src/ring\.c:\d+ in ring_push$"], []),
 "c4_valgrind_uninit": ("for f in data/*: valgrind --track-origins=yes ./parse $f (14 runs)", "middle",
  "valgrind report of run 8: the error, its first frame, the origin and its frame",
  [r"^==\d+== Conditional jump or move depends on uninitialised value\(s\)$",
   r"^==\d+==    at 0x[0-9A-F]+: parse_file \(parse\.c:26\)$",
   r"^==\d+==  Uninitialised value was created by a stack allocation$",
   r"^==\d+==    at 0x[0-9A-F]+: parse_file \(parse\.c:15\)$"], []),
 "c4_gxx_overload": ("make -k -j1 (600 C++ files, g++ -std=c++17 -Wall -Wextra)", "middle",
  "g++ overload-resolution error with its candidate/conversion notes",
  [r"^src/billing_150\.cpp:\d+:\d+: error: no matching function for call to 'scale\(std::string&, int&\)'$",
   r"^src/billing_150\.cpp:\d+:\d+: note: candidate: 'int billing::scale\(int, int\)'$",
   r"^src/billing_150\.cpp:\d+:\d+: note:   no known conversion for argument 1 from 'std::string'",
   r"^src/billing_150\.cpp:\d+:\d+: note: candidate: 'double billing::scale\(double, double, double\)'$",
   r"^src/billing_150\.cpp:\d+:\d+: note:   candidate expects 3 arguments, 2 provided$"], []),
 "c4_pytest_assert_diff": ("for p in packages/*: pytest -v $p/tests (10 packages, 1250 tests)", "middle",
  "pytest dict assert diff of the one failure in package 4 of 10, and its location",
  [r"^E       AssertionError: assert \{'currency': .*'total': \d+\} == \{'currency': .*\}$",
   r"^E         \{'total': \d+\} != \{'total': \d+\}$",
   r"^packages/ledger/tests/test_ledger_totals\.py:\d+: AssertionError$"], []),
 "c4_go_test_expected": ("go test -count=1 -v ./... (14 packages, 1400 subtests)", "middle",
  "t.Errorf message with its got:/expected: lines, and the failing subtest",
  [r"^    invoice_test\.go:\d+: total for INV-0437:$",
   r"^        got:      \d+$",
   r"^        expected: \d+$",
   r"^    --- FAIL: TestTotal/INV-0437 \([0-9.]+s\)$"], []),
 "c4_shellcheck": ("shellcheck scripts/*.sh (100 scripts, 700 findings)", "middle",
  "the one error-severity finding: its 'In FILE line N:' header, code line and SC2068 line",
  [r"^In scripts/rollout_047\.sh line 12:$",
   r"^for host in \$@; do$",
   r"^ +\^-- SC2068 \(error\): "], []),
 "c5_git_merge_conflict": ("git merge --no-edit feature (2400 files auto-merged)", "middle",
  "the one CONFLICT line among 2400 'Auto-merging' lines",
  [r"^CONFLICT \(content\): Merge conflict in "], []),
 "c5_valgrind_invalid_read": ("valgrind ./inventory (2600-line report)", "middle",
  "valgrind's Invalid read, its first frame and the block it ran past",
  [r"^==\d+== Invalid read of size 4$",
   r"^==\d+==    at 0x[0-9A-F]+: lookup_price \(inventory\.c:\d+\)$",
   r"^==\d+==  Address 0x[0-9a-f]+ is 0 bytes after a block of size 400 alloc'd$"], []),
 "c5_go_test_gotwant": ("go test -count=1 -v ./... (14 packages, 1400 subtests)", "middle",
  "the failing subtest's 'got X, want Y' line",
  [r"^    ledger_test\.go:\d+: got \d+, want \d+$"], []),
 "c5_pytest_skipped_summary": ("for p in packages/*: pytest -v -m 'not slow' $p/tests (12 shards)", "middle",
  "summary of the shard that ran nothing (all skipped)",
  [r"^=+ \d+ skipped, \d+ deselected in [0-9.]+s =+$"], []),
 "c5_make_killed_137": ("make -k -j1 (80 shard jobs, SHELL=/bin/bash)", "middle",
  "bash's Killed report for the SIGKILLed job and make's Error 137",
  [r"^/bin/bash: line \d+: +\d+ Killed +.*shard\.py 30$",
   r"^make: \*\*\* \[Makefile:\d+: out/shard_30\.done\] Error 137$"], []),
 "c5_go_run_killed": ("for s in 1..10: go run ./cmd/import -shard $s", "middle",
  "go run's report that shard 4 was SIGKILLed",
  [r"^signal: killed$"], []),
 "c5_make_check_segv": ("make -k check (30 suites)", "middle",
  "sh's Segmentation fault and make's Error 139 for suite hash",
  [r"^Segmentation fault$",
   r"^make: \*\*\* \[Makefile:\d+: check-hash\] Error 139$"], []),
 "c6_json_minified": ("jq -c . jobs.json; jq -r '.jobs[] | select(.status != \"ok\") ...' jobs.json", "middle",
  "the failed job's status and message ~115 KB into a 230 KB line (substr); the failed-job listing",
  [(r"^job-7781-0701 error$", "tail")],
  [r'"status":"error","message":"[^"]*"']),
 "c6_link_long_line": ("make -k -j1 (721 objects, a ~32 KB link line, then 850 test objects)", "middle",
  "ld's undefined reference after a ~32 KB command line, collect2's and make's lines",
  [r"^/usr/bin/ld: build/obj/services/reporting/reporting_0112\.o: in function `reporting_0112':$",
   r"^reporting_0112\.c:\(\.text\+0x[0-9a-f]+\): undefined reference to `fmt_currency'$",
   r"^collect2: error: ld returned 1 exit status$",
   r"^make: \*\*\* \[Makefile:\d+: bin/storefront\] Error 1$"], []),
 "c6_python_long_repr": ("python3 settle_batches.py (logging, 36 batches, one ~53 KB line)", "middle",
  "the rejected order inside a ~53 KB results line (substr) and the ERROR after it",
  [r" ERROR   settle: batch b-0019: 1 order\(s\) rejected, settlement postponed$"],
  [r"'o-19041': 'rejected: qty must be >= 1 \(got -3\)'"]),
 "c7_make_cc_template": ("make -k -j1 (2000 x `cc -O2 -Wall -c src/module_N.c -o build/module_N.o`)", "middle",
  "the one failing compile's error and make's target",
  [r"^src/module_0917\.c:\d+:\d+: error: 'struct point' has no member named 'z'$",
   r"^make: \*\*\* \[Makefile:\d+: build/module_0917\.o\] Error 1$"], []),
 "c7_gzip_verbose": ("gzip -n -v logs/*.log (2400 files)", "middle",
  "the one file gzip refused among 2400 'replaced with' lines",
  [r"^gzip: logs/app-2024-05-01_1317\.log\.gz already exists;\tnot overwritten$"], []),
 "io_python_interleave": ("python3 migrate.py (unbuffered stdout + stderr)", "middle",
  "the foreign key failure (stderr) and the rollback it caused (stdout)",
  [r"^migrate: row 1417: foreign key violation: ",
   r"^batch 15 \(rows 1401-1500\) rolled back; "], []),
 "io_c_interleave": ("./chk (write(2) to stdout and stderr alternately)", "middle",
  "the doubly-claimed block (stderr) and the inode cleared for it (stdout)",
  [r"^inode 49213: block 1417 already claimed by inode 48001; ",
   r"^pass 1: inode 49213 cleared "], []),
}
assert sorted(spec) == sorted(names), set(spec) ^ set(names)

def where(off, size):
    if off < HEAD:
        return "head"
    if size - off <= TAIL:
        return "tail"
    return "middle"

def md(s):
    return "`` " + s.replace("|", "\\|").replace("\t", "\\t") + " ``"

rows, bad, total, nneedles = [], [], 0, 0
for name in names:
    tool, expect, what, needles, substrs = spec[name]
    try:
        data = open(f"{out}/{name}.log", "rb").read()
    except FileNotFoundError:
        bad.append(f"{name}: no log")
        continue
    size = len(data)
    total += size
    if not (60 * 1024 < size < 600 * 1024):
        bad.append(f"{name}: size {size} out of range")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    starts, off = [], 0
    for l in lines:
        starts.append(off)
        off += len(l) + 1
    cells, picked = [], []
    for n in needles:
        pat, exp = (n if isinstance(n, tuple) else (n, expect))
        rx = re.compile(pat.encode())
        hits = [i for i, l in enumerate(lines) if rx.search(l)]
        if len(hits) != 1:
            bad.append(f"{name}: needle pattern {pat!r} matched {len(hits)} lines")
            continue
        i = hits[0]
        needle = lines[i]
        if lines.count(needle) != 1:
            bad.append(f"{name}: needle occurs {lines.count(needle)} times as a whole line")
        w = where(starts[i], size)
        if w != exp:
            bad.append(f"{name}: needle {needle[:60]!r} is {w}, expected {exp} (offset {starts[i]}, {size - starts[i]} from end)")
        picked.append(needle)
        cells.append(f"{md(needle.decode('utf-8', 'replace'))} ({w}, {starts[i]}, line {i + 1})")
    with open(f"{out}/{name}.needle", "wb") as f:
        f.write(b"\n".join(picked) + b"\n")
    nneedles += len(picked)
    subs = []
    for pat in substrs:
        ms = list(re.finditer(pat.encode(), data))
        if len(ms) != 1:
            bad.append(f"{name}: substr pattern {pat!r} matched {len(ms)} times")
            continue
        s = ms[0].group(0)
        if len(s) < 20 or data.count(s) != 1:
            bad.append(f"{name}: substr {s!r} too short or not unique")
        o = ms[0].start()
        li = data.count(b"\n", 0, o)
        w = where(o, size)
        if w != expect:
            bad.append(f"{name}: substr is {w}, expected {expect}")
        subs.append(s)
        cells.append(f"substr {md(s.decode())} ({w}, {o}, line {li + 1}, {o - starts[li]} bytes into a {len(lines[li])}-byte line)")
    if subs:
        with open(f"{out}/{name}.substr", "wb") as f:
            f.write(b"\n".join(subs) + b"\n")
    cls = name.split("_")[0]
    nl = data.count(b"\n")
    tool_md = tool.replace("|", "\\|")
    cells_md = "<br>".join(cells)
    rows.append(f"| `{name}.log` | {cls} | {tool_md} | {what} | {cells_md} | {size} | {nl} |")
if total > 6 * 1024 * 1024:
    bad.append(f"logs too large: {total} bytes")

section = """<!-- classes:begin -->
## Loss classes (`make_corpus_classes.sh`)

A second set of logs, made by `make_corpus_classes.sh` (Debian 12: gcc/g++
12, GNU make 4.3, valgrind 3.19, ShellCheck 0.9, Go 1.19, git, GNU tar,
gzip, jq, Python 3.11 with pytest in a venv), each built so that one way of
losing the needed line is exercised. The file name starts with its class:

* `c1` a salient line early (first 4 KB), then thousands of harmless lines;
* `c2` the real error in the last 50 KB, with salient-looking noise before
  and around it (test names and warnings full of "error");
* `c3` budget spent on noise: one harmless error line repeated hundreds of
  times, hundreds of PASSED `test_decode_error_*` lines, hundreds of
  warnings, with one real failure in the middle;
* `c4` multi-line diagnostic blocks in the middle: AddressSanitizer,
  valgrind, g++ overload notes, pytest assert diff, go test
  `got:`/`expected:`, shellcheck's `In FILE line N:` findings;
* `c5` keyword-less markers in the middle: git `CONFLICT`, valgrind
  `Invalid read`, go `got X, want Y`, pytest `N skipped, M deselected`,
  bash `Killed` + make `Error 137`, go run `signal: killed`,
  `Segmentation fault`;
* `c6` long lines: a ~230 KB minified JSON line, a ~32 KB link command, a
  ~53 KB log line, with the needed text inside or right after them;
* `c7` output made of one repeated line template;
* `io` a program writing alternately to stdout and stderr, unbuffered, so
  `2>&1` keeps the true order.

Needle files (this format is backwards compatible with the one above):

* `<name>.needle` holds one or more lines; each is a whole line of the log
  (verbatim, exactly once) and a model needs every one of them.
* `<name>.substr` (only where the text sits inside a very long line) holds
  one or more lines; each is a substring of the log (>= 20 bytes, occurring
  exactly once) that must be visible.

Where: `head` = within the first 4 KB, `tail` = within the last 50 KB
(51200 bytes), otherwise `middle`; then the 0-based byte offset and 1-based
line of the needle. Sizes in bytes, line counts are newline counts.

Determinism: fixed work dir (`/tmp/agent-exec-corpus-classes-work`), fixed
seeds, counter-based timestamps, `LC_ALL=C`, `TZ=UTC`, `NO_COLOR=1`, fixed git
identity and dates, ASLR off for the ASan run (stable addresses). Not
pinned, so they differ between runs: PIDs (ASan's and valgrind's `==PID==`,
bash's `line 1: PID Killed`), durations (pytest's `in 0.06s`, go test's
`ok pkg 0.003s` and, in principle, `(0.00s)`). Needles are picked from each
new log by pattern, so a needle containing one of these changes with it.

`make_corpus.sh` (the first set) rewrites this README and deletes every
`*.log`/`*.needle`: run `make_corpus_classes.sh` after it.

| log | class | tool / command | needles are | needles (where, byte offset, line) | size | lines |
| --- | --- | --- | --- | --- | ---: | ---: |
""" + "\n".join(rows) + f"""

Total size of these logs: {total} bytes, {len(rows)} logs, {nneedles} needle lines.
<!-- classes:end -->
"""
readme_path = f"{out}/README.md"
readme = open(readme_path).read()
b, e = "<!-- classes:begin -->", "<!-- classes:end -->"
if b in readme and e in readme:
    readme = readme[:readme.index(b)] + section + readme[readme.index(e) + len(e):].lstrip("\n")
else:
    readme = readme.rstrip("\n") + "\n\n" + section
open(readme_path, "w").write(readme)
print(f"{len(rows)} logs, {total} bytes, {nneedles} needles", file=sys.stderr)
if bad:
    print("PROBLEMS:\n" + "\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok", file=sys.stderr)
EOF
