"""Fixtures for the Android tests: a test ADB server with a ToyEnv-backed (or simulator-backed) device."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules next to the tests


@pytest.fixture
def adb_server() -> Iterator[Any]:
    pytest.importorskip("adbutils")
    from android_adb_server import AdbTestServer

    with AdbTestServer() as srv:
        yield srv
