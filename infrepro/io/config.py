"""Start-up checks of the config as a whole, before the experiment is read and any job runs.

The Snakefile runs :func:`check_config` first: the config files hold no duplicate keys, every key
is text, every number is finite, and the schema (infrepro/assets/config.schema.yaml) holds, with
an error that names the option (``analyses.bootstrap.samples is 10000000000000; it must be at most
1000000``) rather than the schema's path. Checks that need the experiment (facets, systems,
properties) follow in :mod:`infrepro.io.options`.
"""

from __future__ import annotations

import copy
import datetime
import difflib
import functools
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from infrepro.io.errors import InputError
from infrepro.io.options import check_config_size
from infrepro.io.text import decode_utf8, require_file

TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "null": "empty",
}
KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list"}
RAW_MODE = ("testset", "runs")  # the options that make a config raw mode, or scores mode
SCORES_MODE = ("scores", "columns")
BOUNDS = {
    "minimum": "at least",
    "exclusiveMinimum": "more than",
    "maximum": "at most",
    "exclusiveMaximum": "less than",
}


def check_config(config: dict[str, Any], files: Iterable[str | Path] = ()) -> None:
    """Refuse a config that is not what the schema allows; ``files`` are the config files read.
    Fills in the schema's defaults, nested ones included, as Snakemake's ``validate`` does (one
    pass: the workflow's parse, a run with nothing to do included, validates once, with the
    schema already parsed).

    A YAML date in ``report.date`` becomes its ISO text (as the report shows it).
    """
    check_config_size(config)  # first: the checks below walk the config
    for path in files:
        check_config_file(path)
    _check_values(config, ())
    _check_mode(config)
    report = config.get("report")
    if isinstance(report, dict) and isinstance(report.get("date"), datetime.date):
        report["date"] = report["date"].isoformat()
    from jsonschema.exceptions import best_match

    from infrepro.core.schema import schema

    error = best_match(_filling_validator()(schema()).iter_errors(config))
    if error is not None:
        raise InputError(None, _message(error))


@functools.cache
def _filling_validator() -> Any:
    """Draft 2020-12 with a ``properties`` keyword that first sets each missing property's
    default (a copy: the schema stays as loaded), the jsonschema FAQ's recipe that Snakemake's
    ``validate(..., set_default=True)`` uses."""
    from jsonschema import Draft202012Validator, validators

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, dict):
            for name, child in properties.items():
                if "default" in child:
                    instance.setdefault(name, copy.deepcopy(child["default"]))
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": set_defaults})


def option_name(path: Iterable[object]) -> str:
    """``analyses.bootstrap.samples``, ``property_options.bins.length[1]``."""
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "the config"


def kind_of(value: object) -> str:
    """``a number``, ``text``, ``a mapping``: what a value is, in a message."""
    if isinstance(value, Mapping):
        return "a mapping"
    return KINDS.get(type(value), f"a {type(value).__name__}")


def _check_values(value: object, path: tuple[object, ...]) -> None:
    """Every mapping key is text; every number is finite."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            if not isinstance(key, str):
                raise InputError(
                    None,
                    f"{option_name(path)} has the key {key!r}, which YAML reads as "
                    f"{kind_of(key)}; quote it ('{key}'): keys are names",
                )
            _check_values(child, (*path, key))
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            _check_values(child, (*path, index))
    elif isinstance(value, float) and not math.isfinite(value):
        raise InputError(None, f"{option_name(path)} is {value}; it must be a finite number")


def _check_mode(config: Mapping[str, Any]) -> None:
    """Scores mode's ``columns`` in a raw-mode config is refused naming the mode (the schema
    ignored it when complete and asked for ``columns.segment`` when not); ``columns.look`` is
    pointed to ``look_column``, raw mode's look column."""
    if "columns" not in config or "scores" in config:
        return
    if "testset" not in config and "runs" not in config:
        return
    columns = config["columns"]
    look = columns.get("look") if isinstance(columns, Mapping) else None
    fix = (
        f"in raw mode the runs sheet's look column is named by look_column (look_column: {look})"
        if look is not None
        else "remove it"
    )
    raise InputError(
        None,
        "columns is an option of scores mode (which columns of the scores file play which "
        f"role), but this config gives {' and '.join(_given(config, RAW_MODE))} (raw mode); " + fix,
    )


def _message(error: Any) -> str:
    """One line naming the option and what it must be."""
    option = option_name(error.absolute_path)
    kind, value, expected = error.validator, error.instance, error.validator_value
    why = error.schema.get("$comment") if isinstance(error.schema, Mapping) else None
    reason = f" ({why})" if why else ""
    if kind == "type":
        wanted = [expected] if isinstance(expected, str) else list(expected)
        words = " or ".join(TYPE_WORDS.get(t, t) for t in wanted)
        return f"{option} is {kind_of(value)} ({value!r}); it must be {words}"
    if kind in BOUNDS:
        return f"{option} is {value!r}; it must be {BOUNDS[kind]} {expected}{reason}"
    if kind == "enum":
        meant = _close(value, [str(e) for e in expected]) if isinstance(value, str) else None
        hint = f" (did you mean {meant}?)" if meant else ""
        return f"{option} is {value!r}; choose one of {', '.join(map(str, expected))}{hint}"
    if kind == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = [key for key in value if key not in known]
        where = f"{option}." if error.absolute_path else ""
        meant = _meant(str(unknown[0]), tuple(error.absolute_path), known)
        hint = f" (did you mean {meant}?)" if meant else ""
        return f"unknown option {where}{unknown[0]}{hint}; the options here are {', '.join(known)}"
    if kind == "required":
        missing = next((name for name in expected if name not in value), expected[0])
        where = f"{option}." if error.absolute_path else ""
        return f"option {where}{missing} is required but not given"
    if kind in {"minLength", "pattern"}:
        return f"{option} is {value!r}; it must not be empty{reason}"
    if kind == "uniqueItems":
        return f"{option} is {value!r}; its entries must differ"
    if kind == "oneOf" and not error.absolute_path:
        return _mode_message(value)
    if kind in {"oneOf", "anyOf"}:
        return _forms_message(error)
    return f"{option}: {error.message}"


def _mode_message(config: Mapping[str, Any]) -> str:
    """Which of the two modes' options the config lacks or mixes."""
    raw, scores = _given(config, RAW_MODE), _given(config, SCORES_MODE)
    if raw and "scores" in config:
        return (
            "give either testset and runs (raw mode) or scores and columns (scores mode), not "
            f"both: this config gives {', '.join(raw + scores)}"
        )
    for mode, names, given in (("raw", RAW_MODE, raw), ("scores", SCORES_MODE, scores)):
        if given:
            missing = next(n for n in names if n not in given)
            return f"{mode} mode needs {' and '.join(names)}; {missing} is not given"
    return "give either testset and runs (raw mode) or scores and columns (scores mode)"


def _given(config: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    return [name for name in names if name in config]


def _forms_message(error: Any) -> str:
    """An option that takes one of several forms (``oneOf``): the error of the one form whose
    type the value has, or else every form (jsonschema's own message names none)."""
    from jsonschema.exceptions import best_match

    option, value = option_name(error.absolute_path), error.instance
    forms = list(error.validator_value)
    fitting = [index for index, form in enumerate(forms) if _fits(value, form)]
    if len(fitting) == 1:
        inner = [e for e in error.context if e.relative_schema_path[0] == fitting[0]]
        if inner:
            return _message(best_match(inner))
    return f"{option} is {kind_of(value)} ({value!r}); it must be {_either(map(_form, forms))}"


PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "array": (list, tuple),
    "object": (Mapping,),
}
PLURAL_WORDS = {"string": "text", "integer": "whole numbers", "number": "numbers"}


def _fits(value: object, form: Mapping[str, Any]) -> bool:
    """Whether ``value`` has the type ``form`` asks for (an enum: the type of its choices)."""
    if "type" in form:
        wanted = [form["type"]] if isinstance(form["type"], str) else form["type"]
    elif "enum" in form:
        kinds = [t for t in PYTHON_TYPES if t != "integer"]  # a number enum takes any number
        wanted = [t for t in kinds if any(_of_type(e, t) for e in form["enum"])]
    else:
        return True
    return any(_of_type(value, t) for t in wanted)


def _of_type(value: object, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, PYTHON_TYPES.get(kind, ()))


def _form(form: Mapping[str, Any]) -> str:
    """One form of an option in words: ``a whole number from 2 to 100000``, ``one of fraction,
    points``, ``a mapping with raw``, ``a list of text``."""
    if "enum" in form:
        return f"one of {', '.join(map(str, form['enum']))}"
    kind = form.get("type")
    if kind == "object":
        if form.get("required"):
            return f"a mapping with {', '.join(form['required'])}"
        values = form.get("additionalProperties")
        if isinstance(values, Mapping):
            return f"a mapping from each {form.get('x-names', 'name')} to {_form(values)}"
        return "a mapping"
    if kind == "array":
        items = form.get("items", {})
        words = PLURAL_WORDS.get(items.get("type")) if isinstance(items, Mapping) else None
        return f"a list of {words}" if words else "a list"
    if not isinstance(kind, str):
        return "something else"
    word = TYPE_WORDS.get(kind, kind)
    low, high = form.get("minimum"), form.get("maximum")
    if low is not None and high is not None:
        return f"{word} from {low} to {high}"
    bounds = [f"{BOUNDS[b]} {form[b]}" for b in BOUNDS if b in form]
    return f"{word} {' and '.join(bounds)}" if bounds else word


def _either(words: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b, or c``."""
    items = list(words)
    if len(items) < 3:
        return " or ".join(items)
    return f"{', '.join(items[:-1])}, or {items[-1]}"


def _close(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` (difflib's ratio at least 0.6), if any."""
    found = difflib.get_close_matches(word, list(choices), n=1)
    return found[0] if found else None


def _meant(key: str, path: tuple[object, ...], known: list[str]) -> str | None:
    """The option an unknown ``key`` at ``path`` most likely means: options of that name
    elsewhere in the schema (``analyses.alpha``: report.alpha), else the closest name at that
    level, else the options elsewhere whose name is closest."""
    names = _option_paths()
    elsewhere = [p for p in names.get(key, []) if p[:-1] != path]
    if not elsewhere:
        near = _close(key, known)
        if near is not None:
            return option_name((*path, near))
        near = _close(key, names)
        elsewhere = names.get(near, []) if near is not None else []
    return _either(option_name(p) for p in elsewhere) if elsewhere else None


@functools.cache
def _option_paths() -> dict[str, list[tuple[str, ...]]]:
    """Every option the schema names (``properties``, nested), by its last name."""
    from infrepro.core.schema import schema

    found: dict[str, list[tuple[str, ...]]] = {}

    def walk(node: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for name, child in (node.get("properties") or {}).items():
            found.setdefault(name, []).append((*path, name))
            if isinstance(child, Mapping):
                walk(child, (*path, name))

    walk(schema(), ())
    return found


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (YAML keeps the last)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if isinstance(key, str | int | float | bool) and key in seen:
            raise _Duplicate(key, seen[key], line)
        seen[key] = line
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _Duplicate(Exception):
    def __init__(self, key: object, first: int, line: int) -> None:
        super().__init__(key, first, line)
        self.key, self.first, self.line = key, first, line


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise _Duplicate(key, 0, 0)
    return dict(pairs)


def check_config_file(path: str | Path) -> None:
    """Refuse a config file that is no file, not UTF-8, not JSON or YAML (naming the line), or
    gives one key twice in a mapping (JSON and YAML keep the last; Snakemake says nothing)."""
    require_file(path, "config file")
    text = decode_utf8(Path(path).read_bytes(), path)
    try:
        try:
            json.loads(text, object_pairs_hook=_json_pairs)
        except ValueError:
            yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except _Duplicate as dup:
        where = f" (first on line {dup.first})" if dup.first else ""
        raise InputError(
            path,
            f"the key '{dup.key}' is given twice in one mapping{where}; YAML and JSON keep "
            "only the last, so remove or merge one",
            line=dup.line or None,
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise InputError(
            path,
            f"not valid YAML: {problem}",
            line=None if mark is None else mark.line + 1,
        ) from None
