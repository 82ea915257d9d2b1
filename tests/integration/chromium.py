"""Debian's Chromium, headless, for the tests that look at pages as a person would.

Launched with a fresh profile and every background fetch off, so a test sees only what
the page itself loads. `dump_dom` returns the DOM after the page's scripts ran.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def executable() -> str:
    """The system Chromium (CI installs it: `.ci/run`); tests skip without it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    return found


def _run(url: str, *args: str) -> str:
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        done = subprocess.run(
            [executable(), *FLAGS, f"--user-data-dir={profile}", *args, url],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    return done.stdout


def dump_dom(url: str) -> str:
    return _run(url, "--dump-dom", "--virtual-time-budget=5000")


def screenshot(url: str, out: Path, size: str = "1400,800") -> Path:
    _run(url, f"--screenshot={out}", f"--window-size={size}", "--virtual-time-budget=5000")
    return out
