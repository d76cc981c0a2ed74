"""Reading configuration text safely: a YAML file, a ``--set`` value, a JSON file.

The loader is PyYAML's safe loader with four guards, each a one-line :class:`ConfigError` rather than a
surprise: files over :data:`MAX_FILE_BYTES`; a key given twice in one mapping (YAML would silently keep
the last); an integer with a leading zero (``dim: 010`` is 8 in YAML 1.1, 10 to a reader); and aliases
that expand to more than :data:`MAX_NODES` values (a "billion laughs" document of a few hundred bytes).
Text must be UTF-8. Numbers with colons are text, as in YAML 1.2: YAML 1.1 reads ``1:30`` as the base-60
number 90, where a reader of ``positions: 1:30`` means positions 1 to 29.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import sys
from typing import Any

from pecli.errors import ConfigError

#: Largest configuration file read (a YAML of options is a few hundred bytes).
MAX_FILE_BYTES = 1 << 20
#: Most values a document may hold once its aliases are expanded.
MAX_NODES = 100_000
#: Deepest nesting of lists and mappings.
MAX_DEPTH = 64

_LEADING_ZERO = re.compile(r"^[-+]?0[0-9_]+$")
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")


@functools.cache
def _strict_loader() -> type:
    """The safe loader, refusing duplicate keys and leading-zero integers (PyYAML is imported here, when
    a configuration is read: a run without one does not load it)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    # YAML 1.1 wants a dot and a signed exponent in a float (1.0e+6): 1e6 and 1.5e3 would be strings, which
    # a block (rope_scaling) then refuses as "not a number". Read them as YAML 1.2 and JSON do, as numbers.
    StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+.0123456789"))
    StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
    return StrictLoader


def _construct_float(loader: Any, node: Any) -> Any:
    """A float, except YAML 1.1's base-60 form (``1:30.5``), which is text (see the module)."""
    import yaml

    text = loader.construct_scalar(node)
    return str(text) if ":" in str(text) else yaml.SafeLoader.construct_yaml_float(loader, node)


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # << *anchor: its keys merged in, the mapping's own win
            continue
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, (list, dict)):  # YAML's complex key (? [a]): a key is a name
            raise ConfigError("config", f"the key at line {key_node.start_mark.line + 1} is a "
                                        f"{'list' if isinstance(key, list) else 'mapping'}; a key is a name")
        if key in seen:
            raise ConfigError(str(key), f"is given twice (line {key_node.start_mark.line + 1}); keep one")
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


class _LongInteger(Exception):
    """An integer with more digits than Python converts (``sys.get_int_max_str_digits``): (line, digits)."""


def _construct_int(loader: Any, node: Any) -> int:
    import yaml

    text = loader.construct_scalar(node)
    if ":" in str(text):  # YAML 1.1's base 60 (1:30 = 90): text, as YAML 1.2 reads it (see the module)
        return str(text)
    if _LEADING_ZERO.match(str(text)):
        raise ConfigError(
            "config", f"{text} at line {node.start_mark.line + 1} has a leading zero (YAML 1.1 reads it as octal); "
            "write it without the zero"
        )
    digits = sum(char.isdigit() for char in str(text))
    if digits > max_int_digits():
        raise _LongInteger(node.start_mark.line + 1, digits)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


def max_int_digits() -> int:
    """The most digits an integer in a document may have: Python's own limit on converting a string to an
    int (4,300 by default; 0 means none, and pecli keeps 4,300 then too)."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    return limit or 4300


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > max_int_digits():
        raise _LongInteger(None, len(text.lstrip("-")))
    return int(text)


def _long_integer(key: str, where: str, error: _LongInteger) -> ConfigError:
    line, digits = error.args
    at = f" (line {line})" if line is not None else ""
    return ConfigError(key, f"{where} holds an integer of {digits:,} digits{at}, more than the {max_int_digits():,} "
                            "Python reads; no value pecli takes is that long")


def _expanded_size(node: Any) -> int:
    """How many values ``node`` holds with every alias expanded, without expanding any (and its depth)."""
    import yaml

    sizes: dict[int, int] = {}

    def size(current: Any, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise ConfigError("config", f"values are nested more than {MAX_DEPTH} levels deep")
        if id(current) in sizes:
            return sizes[id(current)]
        sizes[id(current)] = 1  # a node that refers to itself counts once
        if isinstance(current, yaml.SequenceNode):
            total = 1 + sum(size(child, depth + 1) for child in current.value)
        elif isinstance(current, yaml.MappingNode):
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in current.value)
        else:
            total = 1
        sizes[id(current)] = min(total, MAX_NODES + 1)
        return sizes[id(current)]

    return size(node, 0)


def flow_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, counted on the raw characters (brackets inside
    quoted strings count too: an over-estimate, which only ever refuses text nested absurdly anyway)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def parse_yaml(text: str, where: str) -> Any:
    """The value of YAML ``text``; ``where`` names it in errors (a file name, ``--set dim``). Flow-style
    nesting deeper than :data:`MAX_DEPTH` is refused before YAML composes it (seconds, for 3,000 levels)."""
    import yaml

    if ("[" in text or "{" in text) and flow_depth(text) > MAX_DEPTH:
        raise ConfigError("config", f"{where} is nested too deeply: values are nested more than {MAX_DEPTH} levels deep")

    try:
        loader = _strict_loader()(text)
    except yaml.YAMLError:  # characters YAML does not allow (control characters)
        raise ConfigError("config", f"{where} holds characters YAML does not allow") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node) > MAX_NODES:
            raise ConfigError("config", f"{where} expands to more than {MAX_NODES:,} values (aliases); refused")
        return loader.construct_document(node)
    except RecursionError:
        raise ConfigError("config", f"{where} is nested too deeply") from None
    except _LongInteger as error:
        raise _long_integer("config", where, error) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError("config", f"{where} is not valid YAML{line}") from None
    finally:
        loader.dispose()


def read_text(path: str, key: str = "config") -> str:
    """The UTF-8 text of ``path`` (``-``: standard input), at most :data:`MAX_FILE_BYTES`; anything but a
    regular file is refused before it is opened."""
    if path == "":
        raise ConfigError(key, "the file name is empty")
    try:
        if path == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise ConfigError(key, "standard input is closed")
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read(MAX_FILE_BYTES + 1).encode()
        else:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block open() until a writer came
                raise ConfigError(key, f"{path} is not a regular file (a FIFO, a device or a directory); "
                                       "give a file, or - to read standard input")
            with open(path, "rb") as stream:
                data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ConfigError(key, f"cannot read {path}: {error.strerror or error}") from None
    except ValueError:  # a closed stream
        raise ConfigError(key, "standard input is closed") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(key, f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB; a configuration file is a few lines")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(key, f"{path} is not UTF-8 text (byte {error.start})") from None


def read_json(path: str, key: str) -> Any:
    """The value of the JSON file ``path`` (UTF-8, at most :data:`MAX_FILE_BYTES`, not nested absurdly); for
    ``hf_config``, a model's folder stands for its ``config.json``, as ``from_pretrained`` takes it."""
    if key == "hf_config" and path not in ("", "-") and os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise ConfigError(key, f"{path} is a folder without a config.json; give the model's folder or its config.json")
        path = os.path.join(path, "config.json")
    text = read_text(path, key)
    try:
        return json.loads(text, parse_int=_json_int)
    except _LongInteger as error:
        raise _long_integer(key, path, error) from None
    except RecursionError:
        raise ConfigError(key, f"{path} is nested too deeply") from None
    except ValueError as error:
        raise ConfigError(key, f"{path} is not valid JSON ({error})") from None


#: Suffixes of the files a list key (``inv_freq``) may be read from.
NUMBER_FILE_SUFFIXES = (".npy", ".txt", ".csv")


def names_number_file(value: Any) -> bool:
    """Whether ``value``, given to a list key, names a file of numbers rather than listing them."""
    text = str(value).strip()
    return text.lower().endswith(NUMBER_FILE_SUFFIXES) or (bool(text) and os.path.isfile(text))


def read_numbers(path: str, key: str) -> list[float]:
    """The numbers held by ``path``: a 1-D ``.npy`` array, or a text file of numbers separated by spaces,
    commas or new lines; for a key that takes a list (``inv_freq``)."""
    import numpy as np

    from pecli.errors import PecliError

    path = str(path).strip()
    if path.lower().endswith(".npy"):
        from pecli.io import load_array

        try:
            array = np.asarray(load_array(path, key=key, max_bytes=MAX_FILE_BYTES * 8), dtype=np.float64)
        except PecliError as error:
            raise ConfigError(key, str(error).removeprefix(f"{key}: ")) from None
    else:
        words = read_text(path, key).replace(",", " ").split()
        try:
            array = np.array([float(word) for word in words], dtype=np.float64)
        except ValueError:
            bad = next(word for word in words if not is_number_text(word))
            raise ConfigError(key, f"{path} holds {bad[:20]!r}, not a number") from None
    if array.size == 0:
        raise ConfigError(key, f"{path} holds no numbers")
    if array.ndim > 1 and array.size != max(array.shape):  # a 0-d array is one number
        raise ConfigError(key, f"{path} holds an array of shape {array.shape}; give a 1-D list of numbers")
    return [float(v) for v in array.reshape(-1)]


def is_number_text(word: str) -> bool:
    """Whether ``word`` is the text of a number, as ``float`` reads it (``"1e6"``, ``" 8192 "``, ``"nan"``)."""
    try:
        float(word)
    except ValueError:
        return False
    return True


def read_yaml_mapping(path: str) -> dict[str, Any]:
    """The mapping a ``--config`` file holds (``-`` reads standard input)."""
    data = parse_yaml(read_text(path), path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("config", f"{path} must hold a mapping of keys to values, got {type(data).__name__}")
    return data


__all__ = [
    "MAX_FILE_BYTES", "MAX_NODES", "is_number_text", "names_number_file", "parse_yaml", "read_json", "read_numbers",
    "read_text", "read_yaml_mapping",
]
