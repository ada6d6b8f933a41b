"""The package's shape, as docs/architecture.md states it: subpackages by concern, no import circle
(in-function and type-checking imports included), the backends never importing the converter,
errors taken from `hearth.errors`, no module over 450 lines and no function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "hearth"
TOP_LEVEL = {"__init__", "engine", "errors", "frames", "options", "pipeline"}
SUBPACKAGES = {"backends", "checkpoint", "cli", "convert", "generation", "listen", "model", "platform", "reliability",
               "runtime", "serve", "streaming", "text", "tools", "voices"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(name: str) -> set[str]:
    """Every Hearth module `name` imports, wherever the import stands."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            module = target
            while module not in MODULES and "." in module:
                module = module.rpartition(".")[0]
            if module in MODULES and module != name:
                found.add(module)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _package(name: str) -> str:
    return ".".join(name.split(".")[:2])


def test_the_top_level_holds_the_public_modules_and_the_subpackages_by_concern():
    top = {p.stem for p in ROOT.glob("*.py")}
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert top == TOP_LEVEL
    assert packages == SUBPACKAGES
    for name in packages:
        assert ast.get_docstring(ast.parse((ROOT / name / "__init__.py").read_text(encoding="utf-8"))), name


def test_no_module_imports_itself_round_a_circle():
    assert _cycles(GRAPH) == []


def test_no_subpackage_imports_itself_round_a_circle():
    packages: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        packages.setdefault(_package(name), set()).update(
            _package(t) for t in targets if _package(t) != _package(name) and t != "hearth")
    assert _cycles(packages) == []


@pytest.mark.parametrize("lower, upper", [
    ("hearth.backends", "hearth.convert"),  # the converter is handed in (backends.conversions.Converter)
    ("hearth.checkpoint", "hearth.model"),  # describing a checkpoint needs no torch
    ("hearth.platform", "hearth.backends"),
    ("hearth.generation", "hearth.runtime"),
    ("hearth.streaming", "hearth.runtime"),
    ("hearth.runtime", "hearth.serve"),
])
def test_a_lower_layer_never_imports_a_higher_one(lower, upper):
    offending = {n: sorted(t for t in ts if t.startswith(upper)) for n, ts in GRAPH.items() if n.startswith(lower)}
    assert {n: ts for n, ts in offending.items() if ts} == {}


def test_errors_are_imported_from_errors():
    """`InputError` and its kin come from hearth.errors, never through the engine or another module."""
    import hearth.errors

    names = {n for n in dir(hearth.errors) if n.endswith(("Error", "Unavailable"))}
    wrong = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module not in ("hearth.errors", None) and name != "hearth":
                wrong += [f"{name}: {a.name} from {node.module}" for a in node.names if a.name in names]
    assert wrong == []


def test_no_module_over_450_lines_and_no_function_over_80():
    long_modules, long_functions = [], []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 450:
            long_modules.append(f"{name}: {len(text.splitlines())}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long_functions.append(f"{name}.{node.name}: {lines}")
    assert long_modules == []
    assert long_functions == []


_OPEN_MODES = set("rwxabt+")


def _reads_or_writes_text_without_an_encoding(call: ast.Call) -> bool:
    """`read_text`, `write_text`, `open` or `Path.open` in text mode with no `encoding=`: the
    locale's encoding, which a library may switch to ASCII mid-run (docs/determinism.md)."""
    f = call.func
    if any(k.arg == "encoding" for k in call.keywords):
        return False
    if isinstance(f, ast.Attribute) and f.attr in ("read_text", "write_text"):
        return not (isinstance(f.value, ast.Name) and f.value.id == "arguments")  # (Hearth's own read_text)
    builtin = isinstance(f, ast.Name) and f.id == "open"
    if not (builtin or (isinstance(f, ast.Attribute) and f.attr == "open")):
        return False
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("av", "os", "wave"):
        return False  # (containers, descriptors and WAV files: not text)
    position = 1 if builtin else 0
    mode = next((k.value for k in call.keywords if k.arg == "mode"),
                call.args[position] if len(call.args) > position else None)
    if mode is None:
        return builtin or not call.args and not call.keywords and not isinstance(f.value, ast.Name)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) <= _OPEN_MODES \
        and "b" not in mode.value


def test_text_files_are_opened_with_their_encoding_named():
    unnamed = []
    for path in sorted([*ROOT.rglob("*.py"), *(ROOT.parent / "tests").rglob("*.py"),
                        *(ROOT.parent / "scripts").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _reads_or_writes_text_without_an_encoding(node):
                unnamed.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert unnamed == []
    # The check finds what it is for.
    for call in ("p.read_text()", "open(name)", "open(name, 'w')", "(d / 'x').open()", "p.open('a')"):
        assert _reads_or_writes_text_without_an_encoding(ast.parse(call).body[0].value), call
    for call in ("p.read_text(encoding='utf-8')", "open(name, 'rb')", "engine.open('ryan')", "av.open(f, mode='r')"):
        assert not _reads_or_writes_text_without_an_encoding(ast.parse(call).body[0].value), call


def test_the_python_api_s_old_module_paths_still_import_the_moved_modules():
    import importlib

    import hearth

    for old, new in hearth.MOVED.items():
        assert importlib.import_module(old) is importlib.import_module(new), old
    from hearth.scheduler import Scheduler
    from hearth.service import Service

    assert hearth.Scheduler is Scheduler and hearth.Service is Service
    assert "hearth.runtime.scheduler" in hearth._RUNTIME.values()


def _allowed_imports() -> dict[str, set[str]]:
    """docs/architecture.md's table: package -> the packages it may import."""
    import re

    doc = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    allowed: dict[str, set[str]] = {}
    for row in re.findall(r"^\| (`.+?) \| .+? \| (.+?) \|$", doc, re.M):
        names = re.findall(r"`([\w_]+)`", row[0])
        targets = set() if row[1] == "nothing" else {t.strip() for t in row[1].split(",")}
        for name in names:
            allowed["hearth" if name == "hearth" else f"hearth.{name}"] = {
                "hearth" if t == "hearth" else f"hearth.{t}" for t in targets}
    return allowed


def test_every_package_imports_only_what_the_architecture_page_allows():
    allowed = _allowed_imports()
    assert set(allowed) == {_package(n) for n in MODULES}  # the page names every package
    wrong = sorted(f"{n} imports {t}" for n, ts in GRAPH.items() for t in ts
                   if _package(t) != _package(n) and _package(t) not in allowed[_package(n)])
    assert wrong == []
