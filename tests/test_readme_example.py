"""The README's Python example runs as written: the first ```python block, executed in a fresh folder.

The example uses tiny budgets on purpose (a 32-wide one-layer policy, 10 SFT steps, one online
iteration of 4 trajectories), so running it here costs a few seconds of CPU.
"""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_python_blocks(text: str) -> list[str]:
    """The bodies of the README's fenced ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```\s*$", text, flags=re.MULTILINE | re.DOTALL)


def test_readme_has_one_python_example() -> None:
    blocks = readme_python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) == 1, "the test runs the README's first Python block; say which one if you add another"
    assert 'digirl.make("digirl/sim-general-v0")' in blocks[0]


def test_readme_python_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_thread: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = readme_python_blocks(README.read_text(encoding="utf-8"))[0]
    monkeypatch.chdir(tmp_path)  # the example writes runs/ relative to where it runs
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, str(README), "exec"), namespace)  # our own README, on purpose

    # what the example promises: an SFT policy folder, a DigiRL run with its final evaluation
    assert (tmp_path / "runs" / "sft" / "policy" / "model.safetensors").is_file()
    assert (tmp_path / "runs" / "digirl" / "config.yaml").is_file()
    result = namespace["result"]
    assert isinstance(result, dict)
    final = result["final"][0]
    assert final["episodes"] == 4 and 0.0 <= final["success_rate"] <= 1.0
    printed = capsys.readouterr().out.splitlines()
    policy, obs = namespace["policy"], namespace["obs"]
    assert printed[0] == str(policy.act([obs], greedy=True)[0].action)  # type: ignore[attr-defined]
    assert float(printed[-1]) == final["success_rate"]
