"""JSON Schema (draft 2020-12) generated from TypedDicts, so a document and its schema have one source.

Type forms: ``str``, ``int``, ``float``, ``bool``, ``None``; unions (``Optional``, ``Union``, ``X | Y``);
``list[X]``; ``dict[str, X]`` (an object with any keys); ``Literal[...]``; Enum subclasses (their values);
nested TypedDicts (under ``$defs``, by ``$ref``), whose required keys follow ``total``, ``Required`` and
``NotRequired`` and which are closed (``additionalProperties: false``) unless marked open; ``Any`` for
anything at all.  ``Annotated`` metadata, as :mod:`gpudoctor.report_json` defines it: ``Schema(...)``
adds keywords, ``OPEN`` opens a TypedDict, an Enum class limits a str or int to that enum's values.

It runs on Python 3.9, gpudoctor's oldest: newer typing names are looked up, never required.
"""

from __future__ import annotations

import enum
import re
import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from gpudoctor.report_json import OpenObject, Schema

JsonSchema = dict[str, object]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
# X | Y is types.UnionType from 3.10; Required / NotRequired are typing's from 3.11.
_UNIONS: tuple[object, ...] = tuple(u for u in (Union, getattr(types, "UnionType", None)) if u is not None)
_REQUIRED: object = getattr(typing, "Required", None)
_NOT_REQUIRED: object = getattr(typing, "NotRequired", None)


def json_schema(root: type, *, schema_id: str, title: str, description: str) -> JsonSchema:
    """The schema of documents shaped as the TypedDict ``root`` (closed), its nested types under ``$defs``."""
    if not is_typeddict(root):
        raise TypeError(f"{root!r} is not a TypedDict")
    builder = _Builder()
    body = builder.typed_dict(root, open_object=False)
    schema: JsonSchema = {"$schema": DRAFT_2020_12, "$id": schema_id, "title": title, "description": description}
    schema.update(body)
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema


def is_typeddict(hint: object) -> bool:
    # typing.is_typeddict is 3.10+; every TypedDict class is a dict subclass that knows its required keys.
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def def_name(hint: type) -> str:
    """The ``$defs`` key of a TypedDict or Enum: its name in snake case, less a trailing ``Json``."""
    name = hint.__name__
    if name.endswith("Json") and name != "Json":
        name = name[: -len("Json")]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class _Builder:
    """One schema's walk: the ``$defs`` it has filled so far, and which type owns each name."""

    def __init__(self) -> None:
        self.defs: dict[str, JsonSchema] = {}
        self._owners: dict[str, tuple[type, bool]] = {}

    def of(self, hint: object) -> JsonSchema:
        """The schema of one annotation."""
        origin = get_origin(hint)
        if origin is Annotated:
            return self._annotated(hint)
        if origin is not None and origin in (_REQUIRED, _NOT_REQUIRED):
            return self.of(get_args(hint)[0])
        if hint is Any or hint is object:
            return {}
        if hint is None:
            hint = type(None)
        if isinstance(hint, type) and hint in _SCALARS:
            return {"type": _SCALARS[hint]}
        if origin in _UNIONS:
            return self._union(get_args(hint))
        if origin is Literal:
            values = [v.value if isinstance(v, enum.Enum) else v for v in get_args(hint)]
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin is list:
            (item,) = get_args(hint)
            return {"type": "array", "items": self.of(item)}
        if origin is dict:
            key, value = get_args(hint)
            if key is not str:
                raise TypeError(f"JSON object keys are strings, not {key!r}")
            values_schema = self.of(value)
            return {"type": "object", "additionalProperties": values_schema} if values_schema else {"type": "object"}
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return self._enum(hint)
        if is_typeddict(hint):
            assert isinstance(hint, type)
            return self._ref(hint, open_object=False)
        raise TypeError(f"no JSON Schema for {hint!r}")

    def typed_dict(self, hint: type, *, open_object: bool) -> JsonSchema:
        """An object schema with the TypedDict's keys, in declaration order (base classes first)."""
        hints = typing.get_type_hints(hint, include_extras=True)
        required = set(getattr(hint, "__required_keys__", ()))
        for key, annotation in hints.items():
            # Explicit markers win: typing cannot see them in postponed annotations when it makes the class.
            marker = get_origin(annotation)
            if marker is not None and marker is _REQUIRED:
                required.add(key)
            elif marker is not None and marker is _NOT_REQUIRED:
                required.discard(key)
        schema: JsonSchema = {"type": "object"}
        if any(key in required for key in hints):
            schema["required"] = [key for key in hints if key in required]
        schema["additionalProperties"] = open_object
        schema["properties"] = {key: self.of(annotation) for key, annotation in hints.items()}
        return schema

    def _annotated(self, hint: object) -> JsonSchema:
        base, *metadata = get_args(hint)
        enums = [m for m in metadata if isinstance(m, type) and issubclass(m, enum.Enum)]
        if any(isinstance(m, OpenObject) for m in metadata):
            if not is_typeddict(base):
                raise TypeError(f"only a TypedDict can be marked open, not {base!r}")
            schema = self._ref(base, open_object=True)
        elif enums:
            (values_of,) = enums
            if not all(type(member.value) is base for member in values_of):
                raise TypeError(f"{values_of.__name__}'s values are not all {base!r}")
            schema = self._enum(values_of)
        else:
            schema = self.of(base)
        keywords: JsonSchema = {}
        for meta in metadata:
            if isinstance(meta, Schema):
                keywords.update(meta.keywords)
        # The description first, as a reader of the schema looks for it.
        described: JsonSchema = {"description": keywords.pop("description")} if "description" in keywords else {}
        return {**described, **schema, **keywords}

    def _union(self, members: tuple[object, ...]) -> JsonSchema:
        schemas = [self.of(member) for member in members]
        if all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            return {"type": [s["type"] for s in schemas]}
        return {"anyOf": schemas}

    def _enum(self, hint: type[enum.Enum]) -> JsonSchema:
        name = self._claim(hint, open_object=False)
        if name not in self.defs:
            self.defs[name] = {"enum": [member.value for member in hint]}
        return {"$ref": f"#/$defs/{name}"}

    def _ref(self, hint: type, *, open_object: bool) -> JsonSchema:
        name = self._claim(hint, open_object=open_object)
        if name not in self.defs:
            self.defs[name] = {}  # taken before the walk, so a type that contains itself ends
            self.defs[name] = self.typed_dict(hint, open_object=open_object)
        return {"$ref": f"#/$defs/{name}"}

    def _claim(self, hint: type, *, open_object: bool) -> str:
        name = def_name(hint)
        owner = self._owners.setdefault(name, (hint, open_object))
        if owner != (hint, open_object):
            raise TypeError(f"$defs/{name}: {owner[0]!r} (open={owner[1]}) and {hint!r} (open={open_object})")
        return name
