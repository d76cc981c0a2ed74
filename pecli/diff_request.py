"""What a ``pecli diff`` request compares, and the difference: its doors, each to one plan difference.

- two configs (``--hf-config`` or ``--model``, twice): the first is the reference
  (:func:`pecli.models.plan_diff.diff_plans`, sides ``old`` and ``new``);
- a GGUF file against a config, two GGUF files, llama.cpp's flags on a GGUF file
  (:mod:`pecli.models.gguf_blame`);
- an engine's flags over a config (:func:`pecli.engines.compare.engine_diff`).

Any other combination is one :class:`~pecli.errors.ConfigError` line saying what to give.
"""

from __future__ import annotations

from typing import Any

from pecli.errors import ConfigError


def compared(configs: list[str], models: list[str], ggufs: list[str], runtime: str | None, args: str | None) -> Any:
    """The difference the request asks for: ``configs`` (paths) and ``models`` (ids) are read as
    references, in that order; ``ggufs`` the GGUF files; ``runtime`` and ``args`` an engine and its flags.
    A request of the wrong shape is refused before any file is read or any model fetched."""
    from pecli.models.plan_diff import diff_plans
    from pecli.models.reading import model_plan

    _check_shape(len(configs) + len(models), ggufs, runtime, args)
    if runtime is not None and not ggufs:
        from pecli.engines import engine

        engine(runtime).parse(args)  # a flag the engine refuses is exit 2 before any work
        if not configs:
            raise ConfigError("runtime", f"{runtime}'s flags are read over a config.json: give --hf-config FILE")
    try:
        references = [model_plan(path, None) for path in configs] + [model_plan(None, name) for name in models]
    except ConfigError as unread:
        if runtime is None or ggufs or not configs:
            raise
        return _engine_diff_unread(configs[0], runtime, args, unread)
    if ggufs:
        return _gguf_compared(ggufs, references, runtime, args)
    if runtime is not None or args is not None:
        return _engine_diff(configs, runtime, args, references[0])
    return diff_plans(references[1], references[0], "new", "old")


def _check_shape(count: int, ggufs: list[str], runtime: str | None, args: str | None) -> None:
    """Refuse a request that is none of diff's comparisons (``count`` models given as references)."""
    for path in ggufs:
        if not path:
            raise ConfigError("gguf", "expected the path of a GGUF file, got ''")
    if ggufs and (runtime is not None or args is not None):
        if runtime != "llama.cpp" or args is None or len(ggufs) != 1 or count > 1:
            raise ConfigError("runtime", "a GGUF file runs on llama.cpp: give one --gguf FILE, --runtime llama.cpp and "
                              "--args \"FLAGS\" (and --hf-config FILE to compare with the model's config)")
    elif ggufs:
        if not (len(ggufs) == 2 and count == 0) and not (len(ggufs) == 1 and count == 1):
            raise ConfigError("gguf", "is compared with one model: give one --hf-config FILE or --model ID beside it "
                              "(or two --gguf files, the first the reference)")
    elif runtime is not None or args is not None:
        if runtime is None or args is None or count != 1:
            raise ConfigError("runtime", "compares an engine's flags with one model: give --hf-config FILE (or --model ID), "
                              "--runtime NAME and --args \"FLAGS\"")
    elif count != 2:
        raise ConfigError("hf_config", f"diff compares two plans: give --hf-config and --gguf, or two --hf-config or "
                          f"--model, got {count} model{'s' if count != 1 else ''}")


def _engine_diff(configs: list[str], runtime: str, args: str, reference: Any) -> Any:
    """What the engine's own code computes under ``args`` against the model (:mod:`pecli.engines`)."""
    from pecli.engines import engine
    from pecli.engines.compare import engine_diff
    from pecli.models.sources.config_json import read_config

    record = engine(runtime)
    record.parse(args)  # a flag the engine refuses is exit 2 before any work
    if not configs:
        raise ConfigError("runtime", f"{runtime}'s flags are read over a config.json: give --hf-config FILE")
    return engine_diff(record, read_config(configs[0]), args, reference, configs[0])


def _engine_diff_unread(config: str, runtime: str, args: str, unread: ConfigError) -> Any:
    """An engine's run over a config pecli does not read as transformers does (``unread``): the engine's own
    reading, where it has one (:func:`pecli.engines.compare.engine_diff_unread`), else ``unread``."""
    from pecli.engines import engine
    from pecli.engines.compare import engine_diff_unread
    from pecli.models.sources.config_json import read_config

    try:
        data = read_config(config)
    except ConfigError:
        raise unread from None
    return engine_diff_unread(engine(runtime), data, args, unread, config)


def _gguf_compared(ggufs: list[str], references: list, runtime: str | None, args: str | None) -> Any:
    """The ``--gguf`` doors: a file against the model's config; llama.cpp's flags on a file (against the
    config, or the file as it is); two files, the first the reference (:mod:`pecli.models.gguf_blame`)."""
    from pecli.models import gguf_blame

    if runtime is not None or args is not None:
        return gguf_blame.diff_gguf_flags(ggufs[0], args, references[0] if references else None)
    if len(ggufs) == 2 and not references:
        return gguf_blame.diff_two_gguf(ggufs[0], ggufs[1])
    return gguf_blame.diff_gguf(ggufs[0], references[0])
