"""The modules of a package found on disk, without importing them."""
import sys

from uqkit.execution.sources import package_modules


def test_a_package_lists_every_module_at_any_depth_and_imports_none(tmp_path, monkeypatch):
    for path in ("proj_s/__init__.py", "proj_s/b.py", "proj_s/a.py", "proj_s/sub/__init__.py",
                 "proj_s/sub/deep.py", "proj_s/_private/x.py", "proj_s/notes.txt",
                 "lone_s.py", "neighbour_s.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_modules("proj_s") == ["proj_s", "proj_s.a", "proj_s.b", "proj_s.sub",
                                         "proj_s.sub.deep"]
    assert package_modules("proj_s.sub") == ["proj_s.sub", "proj_s.sub.deep"]
    # a module of one file is itself; its folder's other modules are not its own (the walk
    # of a top-level module's folder took every module beside it)
    assert package_modules("lone_s") == ["lone_s"]
    assert not {"proj_s", "lone_s", "neighbour_s"} & set(sys.modules)
