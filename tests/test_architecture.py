"""The package's shape, checked by parsing every module (ARCHITECTURE.md explains the layers).

Data flows one way: a subpackage (or top-level module) may import only those in lower layers;
nothing imports the CLI; no import cycles between modules; imports inside functions only for
optional heavy third-party packages; no module over 400 lines.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "transformers_lite"
# lowest first; a unit may import units of strictly lower layers (and itself)
LAYERS = [
    {"version", "errors", "numbers", "budget"},
    {"atomic", "progress"},
    {"optional"},
    {"validate", "devices"},
    {"tokenizers", "layers"},
    {"config", "settings", "data"},
    {"models"},
    {"summary", "backprop", "runs"},
    {"training", "generation"},
    {"evaluation"},
    {"tasks"},
    {"inspect", "interop"},
    {"family", "exercises"},
    {"pipeline"},
    {"families"},
    {"recipes"},
    {"server"},
    {"cli"},
    {"__main__"},
]
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
LAZY_OK = {
    "matplotlib",
    "sklearn",
    "sacrebleu",
    "tokenizers",
    "tqdm",
    "triton",
    "uvicorn",
    "ipywidgets",
    "wandb",
    "torch.utils.tensorboard",
}  # heavy or optional: imported where needed


def modules() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }


def resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(imported package module, line, inside a function) for every import of the package."""
    tree = ast.parse(path.read_text())
    in_function = {
        id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                full = ".".join(base + ([node.module] if node.module else []))
            else:
                full = node.module or ""
            names = [f"{full}.{a.name}" for a in node.names] + [full]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "transformers_lite":
                continue
            target = resolve(name, known)
            if target and target != module and target != "transformers_lite":
                out.append((target, node.lineno, id(node) in in_function))
                break
    return out


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: {t for t, _, _ in imports(m, p, known)} for m, p in known.items()}


def test_every_unit_has_a_layer():
    units = {unit(m) for m in modules()} - {"transformers_lite"}
    assert units <= set(RANK), f"add to LAYERS (and ARCHITECTURE.md): {sorted(units - set(RANK))}"


def test_imports_only_go_down_the_layers():
    known = modules()
    bad = []
    for m, path in known.items():
        if m == "transformers_lite":  # the public API re-exports from every layer
            continue
        for target, line, _ in imports(m, path, known):
            a, b = unit(m), unit(target)
            if a != b and RANK[b] >= RANK[a]:
                bad.append(f"{path.relative_to(PACKAGE)}:{line} {a} -> {b}")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_module_cycles():
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for x in sorted(edges.get(n, ())):
            if state.get(x) == 1:
                found.append(stack[stack.index(x) :] + [x])
            elif not state.get(x):
                visit(x)
        stack.pop()
        state[n] = 2

    for n in sorted(edges):
        if not state.get(n):
            visit(n)
    assert not found, f"import cycles: {found}"


def test_imports_inside_functions_are_only_for_heavy_optional_packages():
    known = modules()
    lazy = []
    for path in known.values():
        tree = ast.parse(path.read_text())
        for f in ast.walk(tree):
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(f):
                if isinstance(node, ast.ImportFrom) and node.level and (node.module or "").startswith("server."):
                    continue  # the web app (FastAPI, half a second to import): imported once `tlite serve` starts
                if isinstance(node, ast.ImportFrom) and node.level:
                    lazy.append(f"{path.relative_to(PACKAGE)}:{node.lineno} from {'.' * node.level}{node.module}")
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    if not any(name == m or name.startswith(m + ".") for m in LAZY_OK):
                        lazy.append(f"{path.relative_to(PACKAGE)}:{node.lineno} import {name}")
    assert not lazy, "move these imports to the top of the module:\n" + "\n".join(lazy)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    assert path.read_text().count("\n") <= 400, "split this module by concept"


def test_the_checker_catches_a_forbidden_edge(tmp_path):
    """The layer table really bites: a layer importing the CLI is reported."""
    fake = {"transformers_lite.layers.bad": tmp_path / "bad.py", "transformers_lite.cli.main": tmp_path / "m.py"}
    fake["transformers_lite.layers.bad"].write_text("from ..cli.main import main\n")
    [(target, line, lazy)] = imports("transformers_lite.layers.bad", fake["transformers_lite.layers.bad"], fake)
    assert target == "transformers_lite.cli.main" and RANK[unit(target)] > RANK["layers"] and not lazy


def test_only_the_registry_switches_on_a_familys_name():
    """What differs between families is a method or a field of their ``families`` class (a
    ``family.Family``); no other module tests a family's name ("family == 'generator'", "in (...)")."""
    named = re.compile(r"""\bfamily\b[^\n]*(?:==|!=|\bin\b)[^\n]*["'](?:generator|classifier|seq2seq|mlm)["']""")
    found = [
        f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}"
        for module, path in modules().items()
        if module != "transformers_lite.families"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if named.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, "a family switch outside families.py:\n" + "\n".join(found)
    assert named.search('if run.config.family == "generator":') and named.search("if family in ('mlm', 'x'):")
