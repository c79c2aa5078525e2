"""Tampered run folders (issue 22 item 4): every field of real run.json files made wrong in each way.

``tests/data/runs/*.json`` are run.json files of every kind, written by the verbs themselves
(``tests/data/runs/make_runs.py`` writes them again). :func:`cases` walks every key path of
one of them (dicts, lists, leaves, at every depth) and yields the file's text with that key
tampered: a value of the wrong type, a 2 MB string, nesting 5,000 levels deep, the key
removed, or null. :func:`run_cli` runs ``edgebench ARGS`` in this process as a user would
(the console entry point: error lines and exit codes), and :func:`verdict` says whether an
outcome is acceptable: an exit code of 0, 1 or 2, no traceback and no "unexpected" error.
Used by tests/test_run_schema.py and benchmarks/tampered_runs.py.
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "runs"
HUGE = 2_000_000          # characters of the huge string
DEEP = 5_000              # levels of the deep nesting
_MARK = "\u0000tamper\u0000"


def fixtures() -> dict:
    """name -> run.json document of every fixture run."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))}


def samples_of(name: str) -> Path | None:
    """The (small) samples.parquet written beside a fixture, if it has one."""
    p = DATA / f"{name}.samples.parquet"
    return p if p.exists() else None


def key_paths(doc, prefix=()) -> list:
    """Every key path of a JSON document: ``("latency", "e2e", "median_s")``, list items by index."""
    out = []
    if isinstance(doc, dict):
        items = doc.items()
    elif isinstance(doc, list):
        items = enumerate(doc)
    else:
        return out
    for key, value in items:
        path = prefix + (key,)
        out.append(path)
        out.extend(key_paths(value, path))
    return out


def _wrong_type(value):
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "12.5 ms"
    if isinstance(value, str):
        return {"value": value}
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return [1, "two", None]
    return 42


TAMPERS = ("wrong-type", "huge-string", "deep-nesting", "missing", "null")


def tamper(doc, path: tuple, how: str) -> str:
    """The JSON text of ``doc`` with the value at ``path`` tampered ``how``."""
    d = copy.deepcopy(doc)
    parent = d
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "missing":
        if isinstance(parent, list):
            parent.pop(last)
        else:
            parent.pop(last)
        return json.dumps(d)
    if how == "wrong-type":
        parent[last] = _wrong_type(parent[last])
    elif how == "huge-string":
        parent[last] = "x" * HUGE
    elif how == "null":
        parent[last] = None
    elif how == "deep-nesting":
        parent[last] = _MARK
        return json.dumps(d).replace(json.dumps(_MARK), "[" * DEEP + "]" * DEEP)
    else:
        raise ValueError(how)
    return json.dumps(d)


def cases(doc, hows=TAMPERS):
    """``(path, how, text)`` for every key path of ``doc`` and every way of tampering it."""
    for path in key_paths(doc):
        for how in hows:
            yield path, how, tamper(doc, path, how)


def write_run(root: Path, name: str, text: str, samples: Path | None = None) -> Path:
    """A run folder ``root/name`` holding ``text`` as its run.json (and a copy of ``samples``)."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text(text)
    if samples is not None:
        shutil.copyfile(samples, d / "samples.parquet")
    return d


def run_cli(*args) -> tuple:
    """``edgebench ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    from edgebench.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # an exception out of main itself is the worst outcome
            err.write(f"Traceback (escaped main): {type(exc).__name__}: {exc}\n")
            code = -1
    return code, out.getvalue(), err.getvalue()


def verdict(code: int, err: str) -> str | None:
    """None when an outcome is what a user should see; else what is wrong with it."""
    if "Traceback" in err:
        return "traceback"
    if "unexpected" in err:
        line = next((ln for ln in err.splitlines() if "unexpected" in ln), "")
        return line[:200]
    if code not in (0, 1, 2):
        return f"exit code {code}"
    return None


def load_runs_verdict(root: Path, good_dir: Path | None = None) -> str | None:
    """``edgebench.load_runs(root)`` must return a table (warning about a bad run), never raise, and
    keep the good run ``good_dir``."""
    import warnings

    from edgebench import load_runs  # through the runs folder's index (edgebench.store.embedded)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = load_runs(root)
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is the finding
        return f"load_runs raised {type(exc).__name__}: {str(exc)[:150]}"
    if good_dir is not None and str(good_dir) not in set(frame["path"]):
        return "load_runs lost the good run"
    return None


def one_case(root: Path, name: str, text: str, good: tuple | None = None) -> list:
    """``[(command, problem)]`` for one tampered run of fixture ``name`` (empty when all behaved).

    The runs folder holds the tampered run and a good one (``good``: ``(name, document)``; default
    the untampered original, so ``compare`` gets past its same-conditions check): ``runs``,
    ``runs RUN``, ``report RUN --md``, ``check RUN``, ``compare GOOD RUN`` and ``load_runs``."""
    good_name, good_doc = good or (name, json.loads((DATA / f"{name}.json").read_text()))
    good_dir = write_run(root, "00-good", json.dumps(good_doc), samples_of(good_name))
    bad_dir = write_run(root, "01-bad", text, samples_of(name))
    findings = []
    commands = {
        "runs": ["runs", "--runs-dir", root],
        "runs RUN": ["runs", bad_dir, "--runs-dir", root],
        "report": ["report", bad_dir, "--md", "-o", root / "report.md", "--runs-dir", root],
        "check": ["check", bad_dir, "--runs-dir", root],
        "compare": ["compare", good_dir, bad_dir, "--runs-dir", root],
    }
    for what, args in commands.items():
        code, out, err = run_cli(*args)
        problem = verdict(code, err)
        if problem:
            findings.append((what, problem))
    problem = load_runs_verdict(root, good_dir)
    if problem:
        findings.append(("load_runs", problem))
    return findings


def read_paths(docs: dict) -> dict:
    """fixture name -> the key paths (list items collapsed to the first) that runs, report (Markdown
    and HTML), check, compare and load_runs read from it."""
    out = {}
    for name, doc in docs.items():
        seen: set = set()
        with tempfile.TemporaryDirectory() as tmp, reads(seen):
            root = Path(tmp)
            orig = write_run(root, "00-good", json.dumps(doc), samples_of(name))
            run = write_run(root, "01-run", json.dumps(doc), samples_of(name))
            for args in (["runs", "--runs-dir", root], ["runs", run, "--runs-dir", root],
                         ["report", run, "--md", "-o", root / "r.md", "--runs-dir", root],
                         ["report", run, "-o", root / "r.html", "--runs-dir", root],
                         ["check", run, "--runs-dir", root], ["compare", orig, run, "--runs-dir", root]):
                run_cli(*args)
            load_runs_verdict(root)
        paths = {collapse(p) for p in key_paths(doc)}
        out[name] = sorted(({collapse(p) for p in seen} & paths), key=lambda p: tuple(map(str, p)))
    return out


def accepted_cases(docs: dict, paths: dict, hows=TAMPERS) -> list:
    """``(name, path, how)`` of every tamper of ``paths`` (each path once, in the first fixture that has
    it) that the schema accepts: what the readers themselves must cope with."""
    from edgebench.errors import ResultError
    from edgebench.results.model import RunResult

    out, done = [], set()
    for name, plist in paths.items():
        for path in plist:
            if path in done:
                continue
            done.add(path)
            for how in hows:
                if how == "deep-nesting":   # refused before validation (tests/test_run_schema.py)
                    continue
                try:
                    RunResult.from_dict(json.loads(tamper(docs[name], path, how)))
                except ResultError:
                    continue
                out.append((name, path, how))
    return out


# ---------------------------------------------------------------- which keys the commands read

def _track(value, path: tuple, seen: set):
    from edgebench.results.types import Figure

    if isinstance(value, Figure):
        _track_figure(value, path, seen)
        return value
    if isinstance(value, dict) and not isinstance(value, _TrackedDict):
        return _TrackedDict(value, path, seen)
    if isinstance(value, list) and not isinstance(value, _TrackedList):
        return _TrackedList(value, path, seen)
    return value


#: id(figure) -> (figure, its key path, seen): the sections of the runs read inside :func:`reads`
_FIGURES: dict = {}


def _track_figure(fig, path: tuple, seen: set) -> None:
    """Record the key paths read from a typed section (attributes, ``other``): its values are tracked in place
    (dicts and lists replaced by their tracked copies, bypassing validation; sub-sections in turn)."""
    _FIGURES[id(fig)] = (fig, path, seen)
    for name in type(fig).model_fields:
        fig.__dict__[name] = _track(fig.__dict__[name], path + (name,), seen)
    extra = fig.__pydantic_extra__ or {}
    for name in list(extra):
        extra[name] = _track(extra[name], path + (name,), seen)


@contextlib.contextmanager
def _figure_reads():
    """While inside, an attribute of a tracked section, or ``other(key)``, records its key path."""
    from edgebench.results.types import Figure

    get, other = Figure.__getattribute__, Figure.other

    def getattribute(self, name):
        value = get(self, name)
        if not name.startswith("_"):
            entry = _FIGURES.get(id(self))
            if entry is not None and entry[0] is self and name in type(self).model_fields:
                entry[2].add(entry[1] + (name,))
        return value

    def read_other(self, key, default=None):
        entry = _FIGURES.get(id(self))
        if entry is not None and entry[0] is self:
            entry[2].add(entry[1] + (key,))
        return other(self, key, default)

    Figure.__getattribute__, Figure.other = getattribute, read_other
    try:
        yield
    finally:
        Figure.__getattribute__, Figure.other = get, other
        _FIGURES.clear()


class _TrackedDict(dict):
    """A dict that records the key paths read from it (``get``, ``[]``, ``in``, iteration)."""

    def __init__(self, data, path, seen):
        super().__init__(data)
        self._path, self._seen = path, seen

    def _at(self, key):
        self._seen.add(self._path + (key,))
        return _track(dict.__getitem__(self, key), self._path + (key,), self._seen)

    def __getitem__(self, key):
        self._seen.add(self._path + (key,))
        return self._at(key)

    def get(self, key, default=None):
        self._seen.add(self._path + (key,))
        return self._at(key) if dict.__contains__(self, key) else default

    def __contains__(self, key):
        self._seen.add(self._path + (key,))
        return dict.__contains__(self, key)

    def __iter__(self):
        keys = list(dict.__iter__(self))
        self._seen.update(self._path + (k,) for k in keys)
        return iter(keys)

    def keys(self):
        return list(self.__iter__())

    def items(self):
        return [(k, self._at(k)) for k in self.__iter__()]

    def values(self):
        return [self._at(k) for k in self.__iter__()]

    def copy(self):
        return {k: self._at(k) for k in self.__iter__()}


class _TrackedList(list):
    """A list that records the indexes read from it (every index when iterated)."""

    def __init__(self, data, path, seen):
        super().__init__(data)
        self._path, self._seen = path, seen

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        i = index if index >= 0 else len(self) + index
        self._seen.add(self._path + (i,))
        return _track(list.__getitem__(self, index), self._path + (i,), self._seen)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


@contextlib.contextmanager
def reads(seen: set):
    """While inside, every RunResult read from disk records the key paths read from it into ``seen``."""
    import dataclasses

    from edgebench.results.model import RunResult

    original = RunResult.from_dict.__func__

    def from_dict(cls, d, source="<dict>"):
        result = original(cls, d, source)
        for f in dataclasses.fields(result):
            seen.add((f.name,))
            value = getattr(result, f.name)
            if f.name == "latency" and isinstance(value, dict):   # stage -> LatencyFigure: each stage tracked
                for stage, fig in value.items():
                    _track(fig, (f.name, stage), seen)
            object.__setattr__(result, f.name, _track(value, (f.name,), seen))
        return result

    RunResult.from_dict = classmethod(from_dict)
    try:
        with _figure_reads():
            yield seen
    finally:
        RunResult.from_dict = classmethod(original)


def collapse(path: tuple) -> tuple:
    """A key path with every list index made 0 (the first item stands for its siblings)."""
    return tuple(0 if isinstance(k, int) else k for k in path)


if __name__ == "__main__":   # a quick look: how many cases each fixture gives
    for name, doc in fixtures().items():
        print(name, len(key_paths(doc)), "key paths", file=sys.stderr)
