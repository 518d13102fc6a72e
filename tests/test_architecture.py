"""Fitness tests: the architecture rules the code must keep as it grows.

They scan whatever exists under ``digirl/`` (new subpackages are covered automatically, missing
ones are skipped) and fail with the file and line to fix.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "digirl"
HEAVY = ("torch", "playwright", "adbutils", "transformers", "ray")
# Subpackages that sit below training/cli and must never import them.
LOWER_LAYERS = ("envs", "sim", "policies", "data", "algorithms", "distributed")
UPPER_LAYERS = ("training", "experiments", "cli")


def _py_files(sub: str = "") -> list[Path]:
    root = PKG / sub if sub else PKG
    return sorted(root.rglob("*.py")) if root.exists() else []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Absolute module names imported anywhere in the file (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_pkg = path.name == "__init__.py"
    here = _module_name(path).split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # resolve "from ..x import y" against this module's package
                base = here if is_pkg else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            yield node.lineno, mod
            for alias in node.names:  # "from digirl import training" imports digirl.training
                yield node.lineno, f"{mod}.{alias.name}"


def _rel(path: Path) -> str:
    return str(path.relative_to(PKG.parent)) if path.is_relative_to(PKG.parent) else str(path)


# --------------------------------------------------------------------------- (a) light imports
@pytest.mark.parametrize(
    "code",
    [
        "import digirl, digirl.core, digirl.envs",
        "import digirl.config",
        "from digirl.cli.main import build_parser; build_parser()",  # `digirl --help` stays fast
    ],
)
def test_light_imports_do_not_load_heavy_dependencies(code: str) -> None:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=PKG.parent,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == [], f"`{code}` imported {loaded}; import them inside the functions that need them"


# --------------------------------------------------------------------------- (b) layering
def test_core_imports_no_other_digirl_subpackage() -> None:
    bad = [
        f"{_rel(p)}:{line}: imports {mod}"
        for p in _py_files("core")
        for line, mod in _imports(p)
        if mod.startswith("digirl.") and not (mod == "digirl.core" or mod.startswith("digirl.core."))
    ]
    assert not bad, "digirl.core must stay dependency-free:\n" + "\n".join(bad)


def test_lower_layers_do_not_import_training_or_cli() -> None:
    upper = tuple(f"digirl.{u}" for u in UPPER_LAYERS)
    bad = [
        f"{_rel(p)}:{line}: imports {mod}"
        for sub in LOWER_LAYERS
        for p in _py_files(sub)
        for line, mod in _imports(p)
        if any(mod == u or mod.startswith(u + ".") for u in upper)
    ]
    assert not bad, "imports must point one way (training/cli use the lower layers, not back):\n" + "\n".join(bad)


def test_training_does_not_import_experiments() -> None:
    """Experiments drive the training loop from outside; the library never depends on a study."""
    bad = [
        f"{_rel(p)}:{line}: imports {mod}"
        for p in _py_files("training")
        for line, mod in _imports(p)
        if mod == "digirl.experiments" or mod.startswith("digirl.experiments.")
    ]
    assert not bad, "digirl.training must not import digirl.experiments (experiments import training):\n" + "\n".join(bad)


# --------------------------------------------------------------------------- (b2) no import cycles
# No import cycle may pass through a module outside digirl.sim.apps: the apps may import each other
# freely (they share screens and state) and form a leaf layer; the family registry sits below the
# families, the expert and the predicates; the algorithm catalog below configs and the registry.
# KNOWN_CYCLES lists any cycle tolerated for now (each entry: its modules outside sim.apps): none.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()
FREE_CYCLES = "digirl.sim.apps"


def _type_only_lines(tree: ast.Module) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks: imports there never run, so they make no cycle."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def _import_graph() -> dict[str, set[str]]:
    """Module -> the digirl modules it imports when it runs: at module level or inside functions (an
    import deferred into a function still needs the other module, so it still ties the two together),
    not under ``if TYPE_CHECKING``. ``from pkg.mod import name`` is an edge to ``pkg.mod``."""
    files = {_module_name(p): p for p in _py_files()}

    def owner(name: str) -> str | None:  # the longest prefix of a dotted name that is a module
        parts = name.split(".")
        while parts and ".".join(parts) not in files:
            parts.pop()
        return ".".join(parts) or None

    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        skip = _type_only_lines(ast.parse(path.read_text(encoding="utf-8")))
        targets = {owner(name) for line, name in _imports(path) if line not in skip and name.startswith("digirl")}
        graph[mod] = {t for t in targets if t is not None and t != mod}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp: set[str] = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.add(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def test_cycle_finder_finds_cycles_and_only_them() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(sorted(c) for c in _cycles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_outside_sim_apps() -> None:
    bad = []
    for comp in _cycles(_import_graph()):
        rest = {m for m in comp if not (m == FREE_CYCLES or m.startswith(FREE_CYCLES + "."))}
        if rest and not any(rest <= known for known in KNOWN_CYCLES):
            bad.append(", ".join(sorted(comp)))
    assert not bad, "modules that import each other (move the shared part into a lower module):\n" + "\n".join(bad)


# --------------------------------------------------------------------------- (c) no print in the library
def test_no_print_outside_cli() -> None:
    bad = []
    for p in _py_files():
        if p.relative_to(PKG).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                bad.append(f"{_rel(p)}:{node.lineno}")
    assert not bad, "library code logs with `logging`, never print():\n" + "\n".join(bad)


# --------------------------------------------------------------------------- (d) no unsafe deserialization
def _unsafe_loads(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pickle_mods, pickle_funcs, torch_names, np_names = (
        {"pickle", "dill", "cloudpickle"},
        set(),
        {"torch"},
        {"np"},
    )
    for node in ast.walk(tree):  # follow aliases: import pickle as pk / from pickle import load
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ("pickle", "dill", "cloudpickle"):
                    pickle_mods.add(a.asname or a.name)
                elif a.name == "torch":
                    torch_names.add(a.asname or a.name)
                elif a.name == "numpy":
                    np_names.add(a.asname or a.name)
        elif isinstance(node, ast.ImportFrom) and node.module in ("pickle", "dill", "cloudpickle"):
            pickle_funcs.update(a.asname or a.name for a in node.names if a.name in ("load", "loads", "Unpickler"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        kw = {k.arg: k.value for k in node.keywords}
        where = f"{_rel(path)}:{node.lineno}"
        if isinstance(f, ast.Name) and f.id in pickle_funcs:
            yield f"{where}: {f.id}() unpickles"
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            owner, attr = f.value.id, f.attr
            if owner in pickle_mods and attr in ("load", "loads", "Unpickler"):
                yield f"{where}: {owner}.{attr}() unpickles"
            if owner in torch_names and attr == "load":
                w = kw.get("weights_only")
                if not (isinstance(w, ast.Constant) and w.value is True):
                    yield f"{where}: torch.load() without weights_only=True"
            if owner in np_names and attr == "load":
                a = kw.get("allow_pickle")
                if a is not None and not (isinstance(a, ast.Constant) and a.value is False):
                    yield f"{where}: np.load(allow_pickle=...)"


def test_no_unsafe_deserialization() -> None:
    bad = [msg for p in _py_files() for msg in _unsafe_loads(p)]
    assert not bad, "user files are loaded without pickle (torch.load needs weights_only=True):\n" + "\n".join(bad)


def test_unsafe_load_scanner_catches_violations(tmp_path: Path) -> None:
    # The scanner itself must work, or the test above passes vacuously.
    fake = tmp_path / "probe.py"
    fake.write_text(
        "import pickle as pk\nimport torch\nimport numpy as np\nfrom pickle import loads\n"
        "pk.load(f)\nloads(b)\ntorch.load(p)\ntorch.load(p, weights_only=False)\n"
        "np.load(p, allow_pickle=True)\n"
        "torch.load(p, weights_only=True)\nnp.load(p)\n"
    )
    found = list(_unsafe_loads(fake))
    assert len(found) == 5, found


# --------------------------------------------------------------------------- (e) CLI help
def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name)
                yield from _walk(sub, (*path, name))


def test_every_subcommand_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    from digirl.cli.main import build_parser, main

    commands = list(_walk(build_parser()))
    assert commands, "no subcommands registered"
    missing = []
    for cmd in commands:
        with pytest.raises(SystemExit) as exc:
            main([*cmd, "--help"])
        text = capsys.readouterr().out
        assert exc.value.code == 0, f"digirl {' '.join(cmd)} --help exited {exc.value.code}"
        if "example" not in text.lower():
            missing.append(" ".join(cmd))
    assert not missing, "add an example to the --help of: " + ", ".join(missing)


def test_no_function_over_80_lines() -> None:
    # A function past ~80 lines is probably two (DEVELOPERS.md); the package holds to it, so keep it held.
    long: list[str] = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 80:
                    long.append(f"{path.relative_to(PKG.parent)}::{node.name} ({lines} lines)")
    assert not long, "functions over 80 lines: " + ", ".join(long)
