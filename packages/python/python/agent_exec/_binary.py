"""Finding the `agent-exec` binary: one function, shared by both clients and `python -m agent_exec`."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import List, Optional

__all__ = ["AgentExecNotFound", "find_binary"]

_NAME = "agent-exec.exe" if os.name == "nt" else "agent-exec"


class AgentExecNotFound(FileNotFoundError):
    """No usable `agent-exec` binary: the message lists every place that was tried."""


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _user_scripts_dir() -> Optional[str]:
    # `pip install --user` puts scripts in the user scheme's scripts dir (~/.local/bin on Linux).
    try:
        if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
            scheme = sysconfig.get_preferred_scheme("user")  # novermin
        elif sys.platform == "darwin" and getattr(sys, "_framework", None):
            scheme = "osx_framework_user"
        else:
            scheme = f"{os.name}_user"
        return sysconfig.get_path("scripts", scheme)
    except (KeyError, ValueError):
        return None


def _own_binary() -> Optional[str]:
    """The binary that this package's own installation put down, as its RECORD lists it (maturin
    `bindings = "bin"`: a script entry such as `../../../bin/agent-exec`). Right where the guesses of
    `_installed_dirs` are not: `pip install --prefix` or `--root`, a distribution's own install
    scheme."""
    try:
        from importlib.metadata import distribution  # Python 3.8+

        dist = distribution("agent-exec")
        files = dist.files or []
        # Only the installation this module was imported from: a source checkout on sys.path must
        # not pick up the binary of some other installed agent-exec.
        here = os.path.realpath(__file__)
        if not any(f.name == "_binary.py" and os.path.realpath(dist.locate_file(f)) == here
                   for f in files):
            return None
        for f in files:
            if f.name == _NAME:
                path = os.path.abspath(dist.locate_file(f))
                if _executable(path):
                    return path
    except Exception:  # not installed (PackageNotFoundError), or metadata it cannot read
        pass
    return None


def _installed_dirs() -> List[str]:
    """Where a wheel of this package puts its binary (maturin `bindings = "bin"`: the scripts dir)."""
    candidates = [
        sysconfig.get_path("scripts"),  # the running environment's (a venv's bin/)
        # The interpreter's own dir: a venv's bin/ even when sysconfig is confused (an embedded or
        # relocated interpreter). Not resolved: a venv's python is a symlink out of the venv.
        os.path.dirname(sys.executable) if sys.executable else None,
        # `pip install --target DIR` puts the package in DIR and the scripts in DIR/bin.
        os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"),
        _user_scripts_dir(),
    ]
    dirs: List[str] = []
    for d in candidates:
        if d and os.path.normcase(os.path.abspath(d)) not in (os.path.normcase(x) for x in dirs):
            dirs.append(os.path.abspath(d))
    return dirs


def _resolve(name: str) -> Optional[str]:
    # A bare name is looked up on PATH; anything with a directory part is taken as a path.
    if os.path.dirname(name):
        return os.path.abspath(name) if _executable(name) else None
    return shutil.which(name)


def find_binary(binary: Optional[str] = None) -> str:
    """The path of the `agent-exec` binary to run.

    In order: `binary` (a path, or a name looked up on PATH); else `$AGENT_EXEC_BIN`; else the
    binary installed with this package: the one its own installation's metadata lists
    (`importlib.metadata`), else the first found in the scripts dir of the running interpreter, the
    dir of `sys.executable`, `--target`'s `bin/`, the user scheme's scripts dir; else `agent-exec`
    on PATH. An explicit `binary` or `$AGENT_EXEC_BIN` that does not resolve is an error, not a
    reason to fall back: running some other agent-exec than the one named would be a surprise.
    Raises `AgentExecNotFound` (a `FileNotFoundError`) naming everything tried.
    """
    if binary:
        found = _resolve(os.fspath(binary))
        if found is None:
            raise AgentExecNotFound(f"agent-exec binary {binary!r} (the binary= argument) "
                                    "does not exist or is not executable")
        return found
    env = os.environ.get("AGENT_EXEC_BIN")
    if env:
        found = _resolve(env)
        if found is None:
            raise AgentExecNotFound(f"AGENT_EXEC_BIN={env!r} does not exist or is not executable")
        return found
    found = _own_binary()
    if found:
        return found
    tried = []
    for d in _installed_dirs():
        path = os.path.join(d, _NAME)
        if _executable(path):
            return path
        tried.append(path)
    found = shutil.which(_NAME)
    if found:
        return found
    raise AgentExecNotFound(
        "agent-exec binary not found. Tried: the binary= argument (not given), $AGENT_EXEC_BIN "
        f"(not set), the installed package's metadata, {', '.join(tried)}, and {_NAME!r} on PATH. "
        "Install it with `pip install agent-exec` (the wheel ships the binary), or set "
        "AGENT_EXEC_BIN to its path."
    )
