"""The knowledge base's public names are typed for mypy and imported lazily at run time: the table of homes
(``_HOMES``, read by ``__getattr__``) and the ``TYPE_CHECKING`` imports name the same things from the same
modules, so a lookup added to one and not the other fails here rather than as an ``Any`` or an AttributeError."""

from __future__ import annotations

import ast
import importlib
import pathlib
import subprocess
import sys

import gpudoctor.kb as kb

KB_INIT = str(kb.__file__)


def _type_checking_imports() -> dict[str, set[str]]:
    tree = ast.parse(pathlib.Path(KB_INIT).read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.module
                found.setdefault(item.module, set()).update(alias.name for alias in item.names)
    return found


def test_the_typed_names_and_the_lazy_table_agree() -> None:
    homes = {module: {name for name in names if not name.startswith("_")} for module, names in kb._HOMES.items()}
    assert _type_checking_imports() == {module: names for module, names in homes.items() if names}


def test_every_lazy_name_resolves_to_its_home_module() -> None:
    for module, names in kb._HOMES.items():
        home = importlib.import_module(module)
        for name in names:
            assert getattr(kb, name) is getattr(home, name)


def test_importing_the_kb_imports_none_of_its_tables() -> None:
    code = "import sys, gpudoctor.kb; print(sorted(m for m in sys.modules if m.startswith('gpudoctor.kb.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"
