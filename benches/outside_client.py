#!/usr/bin/env python3
"""The rows of issue 34 as an agent's client meets them: one outside client process (Python,
stdlib only, buffered reads) drives `agent-exec serve` and times each yardstick the same way
in the same run, interleaved, medians:

- a warm session's `true` through `serve` vs a raw `bash` pipe round trip (one line in, one
  line out, the same buffered reader) and vs `serve`'s cheapest answer (a `cancel` of nothing);
- a one-shot `:; true` through `serve` vs a fresh `bash -c true`, back to back and paced (20 ms
  of untimed think time before each, for both);
- `agent-exec run -- true` vs `bash -c true`, whole processes.

Usage: outside_client.py AGENT_EXEC [OUT.json]. Prints a table and writes the figures.
"""
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else None
ROUNDS = 10


class Serve:
    def __init__(self, *flags):
        self.proc = subprocess.Popen([BIN, "serve", *flags], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.reader = io.BufferedReader(self.proc.stdout, 65536)
        self.id = 0

    def call(self, method, params):
        self.id += 1
        line = '{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}\n' % (self.id, method, params)
        self.proc.stdin.write(line.encode())
        answer = self.reader.readline()
        assert b'"result"' in answer, answer
        return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class RawBash:
    """The yardstick of a warm round trip: a bash on pipes, one line in, one line out."""

    def __init__(self):
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.reader = io.BufferedReader(self.proc.stdout, 65536)

    def round_trip(self):
        self.proc.stdin.write(b"true; printf 'marker\\n'\n")
        self.reader.readline()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def timed(call, n, pause=0.0):
    times = []
    for _ in range(n):
        if pause:
            time.sleep(pause)
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def interleaved(calls, n, pause=0.0):
    """Each call `n` times in all, in ROUNDS turns, so drift hits every one alike."""
    out = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            out[name] += timed(call, max(1, n // ROUNDS), pause)
    return {name: statistics.median(t) * 1e6 for name, t in out.items()}


def fresh_bash():
    subprocess.run(["bash", "-c", "true"], check=True)


def main():
    artifacts = tempfile.mkdtemp(prefix="agent-exec-bench-")
    os.environ["AGENT_EXEC_ARTIFACTS"] = artifacts
    serve = Serve()
    raw = RawBash()
    session = '{"command":"true","session":"bench"}'
    serve.call("exec", session)
    warm = interleaved({
        "raw_bash_pipe": raw.round_trip,
        "serve_floor_cancel": lambda: serve.call("cancel", '{"id":"none"}'),
        "serve_session_true": lambda: serve.call("exec", session),
    }, 3000)
    one_shot = '{"command":":; true"}'
    back_to_back = interleaved({
        "fresh_bash_c_true": fresh_bash,
        "serve_one_shot": lambda: serve.call("exec", one_shot),
    }, 300)
    paced = interleaved({
        "fresh_bash_c_true": fresh_bash,
        "serve_one_shot": lambda: serve.call("exec", one_shot),
    }, 100, pause=0.02)
    raw.close()
    serve.close()

    def run(*flags):
        subprocess.run([BIN, "run", *flags, "--", "true"], check=True,
                       stdout=subprocess.DEVNULL)
    whole = interleaved({
        "bash_c_true": fresh_bash,
        "agent_exec_run": run,
        "agent_exec_run_sandbox_off": lambda: run("--sandbox", "off"),
    }, 200)
    figures = {"warm_us": warm, "one_shot_back_to_back_us": back_to_back,
               "one_shot_paced_us": paced, "whole_process_us": whole}
    rows = [
        ("`serve` warm session `true` / raw bash pipe (outside client)",
         warm["serve_session_true"] / warm["raw_bash_pipe"], "<= 4"),
        ("`serve`'s floor (a `cancel` of nothing) / raw bash pipe (outside client)",
         warm["serve_floor_cancel"] / warm["raw_bash_pipe"], "(the floor)"),
        ("fresh `bash -c true` / `serve` one-shot `:; true`, back to back (outside client)",
         back_to_back["fresh_bash_c_true"] / back_to_back["serve_one_shot"], ">= 1.5"),
        ("fresh `bash -c true` / `serve` one-shot `:; true`, paced 20 ms (outside client)",
         paced["fresh_bash_c_true"] / paced["serve_one_shot"], ">= 3"),
        ("`agent-exec run -- true` / `bash -c true` (outside client)",
         whole["agent_exec_run"] / whole["bash_c_true"], "<= 1.5"),
        ("`agent-exec run --sandbox off -- true` / `bash -c true` (outside client)",
         whole["agent_exec_run_sandbox_off"] / whole["bash_c_true"], "(measured)"),
    ]
    figures["rows"] = [{"measure": m, "ratio": round(r, 2), "target": t} for m, r, t in rows]
    for measure, ratio, target in rows:
        print("| %s | %.2f | %s |" % (measure, ratio, target))
    print("figures (µs, medians): " + json.dumps({k: v for k, v in figures.items() if k != "rows"}))
    if OUT:
        os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(figures, f)
    subprocess.run(["rm", "-rf", artifacts], check=False)


if __name__ == "__main__":
    main()
