"""The package's layout, measured: import circles, imports inside functions, module sizes.

- An *import circle* is a strongly connected component of the graph of module-level imports between cinqmille
  modules (an edge ``a -> b`` when ``a`` imports ``b`` at module level; ``from pkg import name`` is an edge to
  the submodule ``pkg.name`` when there is one, else to ``pkg``; importing ``pkg.sub`` from outside ``pkg`` is an
  edge to ``pkg`` too, whose ``__init__`` runs first). Imports under ``if TYPE_CHECKING:`` are edges too: a circle of annotations is still a circle a
  reader must follow, so none is allowed.
- An *import inside a function* is counted unless its line (or a comment line just above) says why with ``# lazy:``: a
  start-up cost of the command line or an optional dependency (Click, Numba, matplotlib, Dask, pyarrow,
  Starlette...) loaded only where used. An import inside a function that dodges a circle is not allowed.
- No module is over `MAX_LINES` lines.

``python tests/test_layout.py`` prints every count.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "cinqmille"
PACKAGE = "cinqmille"
#: The longest module allowed (lines).
MAX_LINES = 600
#: The mark that explains an import inside a function.
LAZY = "# lazy:"
#: The layers of the package, lowest first: a module imports only from its own layer and those below (docs/design.md).
LAYERS = (
    ("errors", "files", "parsing", "words", "work", "json_values", "address_space"),
    ("rules",),
    ("dice",),
    ("solver",),  # knows rules and dice: not the table's position, nor the command line
    ("table",),  # reads the solved tables
    ("engine",),
    ("policies",),
    ("simulation",),
    ("fair",),
    ("app",),  # advice, export, play, players, review
    ("research",),
    ("notebook", "web", "cli", "__main__"),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the cinqmille module imported (or the third-party name)
    line: int
    level: str  # "module", "type" (under TYPE_CHECKING) or "function"
    lazy: bool  # marked `# lazy:` (an import inside a function)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(known: dict[str, Path] | None = None) -> list[Import]:
    """Every import of every cinqmille module, cinqmille targets resolved to modules."""
    known = modules() if known is None else known
    out: list[Import] = []
    for module, path in known.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        is_package = path.name == "__init__.py"

        def visit(node: ast.AST, level: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    visit(child, "function")
                elif isinstance(child, ast.If) and _is_type_checking(child) and level == "module":
                    for sub in child.body:
                        visit_one(sub, "type")
                    for sub in child.orelse:
                        visit_one(sub, level)
                else:
                    visit_one(child, level)

        def visit_one(node: ast.AST, level: str) -> None:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                line = node.lineno
                above = lines[line - 2].strip() if line >= 2 else ""
                said = lines[line - 1] + (above if above.startswith("#") else "")
                lazy = LAZY in said
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                else:
                    base = _resolve(module, is_package, node)
                    targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
                for target in dict.fromkeys(targets):
                    if target.split(".")[0] == PACKAGE:
                        while target not in known and "." in target:
                            target = target.rsplit(".", 1)[0]
                        # importing pkg.sub from outside pkg runs pkg/__init__ first: an edge to it too
                        for parent in _parents(target):
                            if not (module == parent or module.startswith(parent + ".")) and parent in known:
                                out.append(Import(module, parent, line, level, lazy))
                    out.append(Import(module, target, line, level, lazy))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(node, "function")
            else:
                visit(node, level)

        visit(tree, "module")
    return out


def circles(edges: list[Import], levels: tuple[str, ...] = ("module", "type")) -> list[list[str]]:
    """The strongly connected components (more than one module, or a module importing itself) of the import
    graph of `levels`."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.level in levels and e.target.startswith(PACKAGE) and e.target != e.source:
            graph.setdefault(e.source, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(found)


def long_modules(limit: int = MAX_LINES) -> dict[str, int]:
    out = {}
    for module, path in modules().items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out[module] = n
    return out


def in_function(edges: list[Import]) -> list[Import]:
    """The import statements inside functions (one per statement: the first name a statement imports)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for e in edges:
        if e.level == "function" and (e.source, e.line) not in seen:
            seen.add((e.source, e.line))
            out.append(e)
    return out


def counts() -> dict[str, object]:
    edges = imports()
    inner = in_function(edges)
    return {"modules": len(modules()),
            "circles": circles(edges),
            "circles (module level only)": circles(edges, ("module",)),
            "imports in functions": len(inner),
            "  of cinqmille modules": sum(e.target.startswith(PACKAGE) for e in inner),
            "  marked lazy": sum(e.lazy for e in inner),
            "  unmarked": sum(not e.lazy for e in inner),
            "modules over 600 lines": long_modules(),
            "imports up the layers": upward(edges),
            "largest module": max((len(p.read_text(encoding="utf-8").splitlines()), m) for m, p in modules().items())}


# -- the checks -------------------------------------------------------------------------------------------------
def test_no_import_circle() -> None:
    found = circles(imports())
    assert found == [], f"import circles: {found}"


def test_every_import_in_a_function_says_why() -> None:
    unmarked = [f"{e.source}:{e.line} {e.target}" for e in in_function(imports()) if not e.lazy]
    assert unmarked == [], f"{len(unmarked)} imports inside functions without '{LAZY}': {unmarked}"


def test_no_module_over_the_limit() -> None:
    assert long_modules() == {}


def layer_of(module: str) -> int:
    """The layer of a cinqmille module (`LAYERS`; the package's own ``__init__`` is above all)."""
    top = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return len(LAYERS)


def upward(edges: list[Import]) -> list[str]:
    """Imports (at any level, in functions too) of a module of a higher layer than the importer's."""
    return sorted({f"{e.source} -> {e.target}" for e in edges
                   if e.target.startswith(PACKAGE + ".") and layer_of(e.target) > layer_of(e.source)})


def test_every_import_goes_down_the_layers() -> None:
    """The solver imports rules and dice (and the small helpers), never a table reader, the engine or the command
    line; the table readers never an application; and so on up `LAYERS`."""
    assert upward(imports()) == []


def test_the_checker_finds_a_circle_and_an_import_in_a_function(tmp_path: Path) -> None:
    """The checker itself can fail: a made-up package with a circle (one edge under TYPE_CHECKING) and an
    unmarked import in a function."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\n")
    (pkg / "c.py").write_text("def f():\n    from . import a  # lazy: start-up time\n    import json\n")
    global ROOT
    old, ROOT = ROOT, pkg
    try:
        edges = imports()
        assert circles(edges) == [["cinqmille.a", "cinqmille.sub.b"]]
        assert circles(edges, ("module",)) == []
        inner = in_function(edges)
        assert [(e.target, e.lazy) for e in inner] == [("cinqmille.a", True), ("json", False)]
    finally:
        ROOT = old


if __name__ == "__main__":
    for name, value in counts().items():
        print(f"{name}: {value}")
    for e in in_function(imports()):
        if not e.lazy:
            print(f"  {e.source}:{e.line} -> {e.target}")
