"""Each engine module against the engine's own code: every case of ``tests/fixtures/engines/<engine>/cases.json``
(made by running vLLM's, SGLang's, MLX's own rotary modules and config code; see each ``generate.py``).

Per case, pecli's engine record on the same config, flags and environment must give the engine's answer:
accepted or refused (with the same exception type), the context served, and per layer group the rotated
components, the layout and the cos and sin at the probe positions (their angle and their magnitude, so
every factor the engine puts on them). And ``pecli diff --runtime E`` must say "same" exactly when the
engine's numbers are transformers' — pecli's own reading of the config, which the transformers fixtures
hold exact — at every probe position and the context the config declares: no silent "same", no false alarm.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pecli.engines import engine

ROOT = Path(__file__).parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "engines"


def _cases() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(FIXTURES.glob("*/cases.json")):
        document = json.loads(path.read_text())
        out += [(document["engine"], case) for case in document["cases"]]
    return out


CASES = _cases()


def config_of(case: dict) -> dict:
    """The config the engine's code ran: the case's, with the architecture its generator added where the case's
    notes say so (SGLang's generator gives a default config transformers' class of its model type, as a checkpoint's
    config.json names it; SGLang itself refuses a config naming none, ``as_given`` cases)."""
    given = case["config"]
    config = given if isinstance(given, dict) else json.loads(config_text(given, case.get("member")))
    added = re.search(r"config has no architectures; set to (\w+)", case.get("notes") or "")
    return {**config, "architectures": [added.group(1)]} if added else config


@functools.cache
def config_text(path: str, member: str | None) -> str:
    """The JSON text of the config file at ``path`` (of its ``member``), read once: each caller loads its own copy."""
    data = json.loads((ROOT / path).read_text())
    return json.dumps(data[member] if member else data)


@functools.cache
def reference_plan(path: str, member: str | None):
    """pecli's plan of a config file (transformers' numbers), worked out once per file and member."""
    from pecli.models.families.from_config import plan_of

    return plan_of(json.loads(config_text(path, member)), "config.json")


def reference_of(case: dict):
    """pecli's plan of the case's config (a ConfigError where pecli refuses it)."""
    from pecli.models.families.from_config import plan_of

    given = case["config"]
    if isinstance(given, dict):
        return plan_of(given, "config.json")
    return reference_plan(given, case.get("member"))


def probe_numbers(group, positions: list[int]) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """(angles, magnitudes) per probe position and rotated pair, the rotated components and the layout of a
    pecli rope group; a scheme that reads the sequence length is built for one token at each position (p + 1)."""
    from pecli.models.rope_facts import scheme_of

    scheme = scheme_of(group)
    angles, scales = [], []
    for position in positions:
        at = scheme_of(group, position + 1) if scheme.reads_context else scheme
        angles.append(position * at.sign * np.asarray(at.inv_freq, dtype=np.float64))  # nanochat's pairs turn by −pθ
        scales.append(np.full(len(at.inv_freq), float(at.attention_scaling)))
    return np.array(angles), np.array(scales), int(scheme.rotated_dim), scheme.layout == "half"


def rope_view(group):
    """An M-RoPE group as the 1-D RoPE its text positions take (t = h = w)."""
    if group.options is None or group.options.get("scheme") != "mrope":
        return group
    from dataclasses import replace

    options = {"scheme": "rope", "dim": group.options["dim"], "base": group.options["base"], "layout": "half"}
    return replace(group, options=options)


def matches(group, fixture: dict) -> str | None:
    """Why the pecli group's numbers are not the fixture group's (None: they are). Where the fixture says the
    engine's weight loader permutes q and k (``qk_permuted``, measured by its generator through the engine's own
    loader), its rotate-half layout computes the checkpoint's interleaved pairs."""
    kind = fixture["kind"]
    if kind in ("none",):
        return None if group.options is None else f"pecli applies {group.scheme}, the engine none"
    if kind not in ("rope", "mrope"):
        return None if group.scheme not in ("rope", "mrope", "none") else f"pecli applies {group.scheme}, the engine {kind}"
    if group.options is None or group.scheme not in ("rope", "mrope"):
        return f"pecli applies {group.scheme}, the engine {kind}"
    permuted = fixture.get("qk_permuted")
    if not isinstance(permuted, bool):
        return f"the generator could not tell whether the engine permutes q and k: {fixture.get('qk_permuted_how')}"
    group = rope_view(group)
    positions = fixture["probe_positions"]
    angles, scales, rotated, neox = probe_numbers(group, positions)
    if rotated != fixture["rotary_dim"]:
        return f"rotary dims {rotated}, the engine {fixture['rotary_dim']}"
    if neox != (fixture["neox"] != permuted):
        return f"neox {neox}, the engine {fixture['neox']}"
    cos, sin = np.asarray(fixture["cos"], dtype=np.float64), np.asarray(fixture["sin"], dtype=np.float64)
    if cos.shape != angles.shape:
        return f"{angles.shape[1]} pairs, the engine {cos.shape[1]}"
    theirs = np.arctan2(sin, cos)
    gap = np.abs(np.angle(np.exp(1j * (angles - theirs))))
    # float32 engines: p·θ rounded to float32 (a few ulps of the angle) and cos/sin of it
    allowed = 4 * np.abs(angles) * 2.0 ** -23 + 2e-4
    if np.any(gap > allowed):
        i, j = np.unravel_index(int(np.argmax(gap - allowed)), gap.shape)
        return f"pair {j} at position {positions[i]}: angle {angles[i, j]:.6g} vs the engine's {theirs[i, j]:.6g}"
    magnitude = np.hypot(cos, sin)
    if not np.allclose(scales, magnitude, rtol=2e-5, atol=0):
        return f"cos/sin scale {scales.flat[0]:.7g}, the engine {magnitude.flat[0]:.7g}"
    return softmax_gap(group, fixture)


def softmax_gap(group, fixture: dict) -> str | None:
    """Why the group's softmax factor (its attention's scale times the constant position part, DeepSeek's
    mscale²) is not the one the engine's attention layer holds (None: it is, or either is unknown)."""
    theirs = fixture.get("softmax_scale")
    if theirs is None or group.softmax is None or group.softmax.value is None or not group.attention_scale.constant:
        return None
    ours = group.softmax.value * group.attention_scale.factor
    return None if np.isclose(ours, theirs, rtol=1e-5, atol=0) else f"softmax scale {ours:.7g}, the engine {theirs:.7g}"


def groups_holding(plan, layers: list[int]):
    """The pecli groups holding ``layers``, once each (a stack's layers: the first group that holds them)."""
    out = []
    for layer in layers:
        group = next((g for g in plan.groups if layer in g.layers or not g.layers), None)
        if group is not None and all(group is not seen for seen in out):
            out.append(group)
    return out


def run_of(name: str, case: dict):
    return engine(name).run(config_of(case), case["args"], env=case.get("env") or {})


#: Fixture cases whose numbers are not what the engine applies, with the engine's code that says so (none now:
#: the vLLM generator runs each layer's forward to see whether it applies its rotary module).
ERRATA: dict[tuple[str, str], str] = {}


def measured(fixture: dict) -> bool:
    """Whether the generator measured the group's numbers (a cos/sin cache of millions of rows was not built)."""
    return fixture["kind"] not in ("rope", "mrope") or bool(fixture.get("cos"))


def refusal(config: dict) -> str | None:
    """pecli's own refusal of the config (None: it reads it); a model pecli refuses has no answer on any engine."""
    from pecli.errors import ConfigError
    from pecli.models.families.from_config import plan_of

    try:
        plan_of(config, "config.json")
    except ConfigError as error:
        return str(error)
    return None


#: Why pecli refuses configs of the fixtures that transformers reads, checked against transformers 5.24's code:
#: pecli limitations, each said at exit 2 (the skip names them; they are not an engine's behaviour).
PECLI_LIMITS: dict[str, str] = {}


def skip_refused(config: dict) -> None:
    why = refusal(config)
    known = next((text for key, text in PECLI_LIMITS.items() if key in why), why)
    # No model code of these in transformers: Hunyuan-Large's alpha (model_type hunyuan, remote code pecli has no reading
    # of), a word only an engine knows (telechat3-yarn, deepseek_yarn): diff has no reading of the model to hold the
    # engine against
    pytest.skip(f"pecli refuses the config: {known}")


def probe_rows(run, fixture: dict) -> dict:
    """The fixture group with its probe rows past the engine's cos/sin cache left out (null where the engine
    reads past its cache, other numbers where it extends it otherwise), after checking that pecli's run says
    where its cache ends."""
    if fixture["kind"] not in ("rope", "mrope"):
        return fixture
    missing = [p for p, row in zip(fixture["probe_positions"], fixture["cos"]) if row is None]
    if missing:
        assert run.cache_rows is not None and run.cache_rows <= min(missing), (run.cache_rows, missing)
    if run.cache_rows is None:
        return fixture
    assert any(d.what == "cos/sin cache" for d in run.departures) or max(fixture["probe_positions"]) < run.cache_rows
    keep = [i for i, (p, row) in enumerate(zip(fixture["probe_positions"], fixture["cos"]))
            if row is not None and p < run.cache_rows]
    return {**fixture, "probe_positions": [fixture["probe_positions"][i] for i in keep],
            "cos": [fixture["cos"][i] for i in keep], "sin": [fixture["sin"][i] for i in keep]}


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}:{c['id']}" for n, c in CASES])
def test_the_engine_module_computes_what_the_engine_does(name, case):
    from pecli.errors import ConfigError

    if (name, case["id"]) in ERRATA:
        pytest.skip(ERRATA[(name, case["id"])])
    try:
        run = run_of(name, case)
    except ConfigError:
        if case["accepted"] and refusal(config_of(case)) is not None:
            skip_refused(config_of(case))
        raise
    if not case["accepted"]:
        assert not run.accepted, f"the engine refuses: {case['error']}"
        assert run.refused.split(":")[0] == case["error"].split(":")[0], (run.refused, case["error"])
        return
    assert run.accepted, f"pecli says the engine refuses ({run.refused}); it serves {case['served']}"
    assert run.served == case["served"]
    problems = []
    for fixture in case["groups"]:
        if not measured(fixture):
            continue
        fixture = probe_rows(run, fixture)
        for group in groups_holding(run.plan, fixture["layers"]):
            why = matches(group, fixture)
            if why is not None:
                problems.append(f"layers {fixture['layers'][:4]}…: {why}")
    assert not problems, problems


def transformers_numbers_equal(case: dict, reference) -> bool:
    """Whether the engine's numbers (the fixture) are transformers' (pecli's reading of the config), group by group."""
    for fixture in case["groups"]:
        for group in groups_holding(reference, fixture["layers"]):
            if matches(group, fixture) is not None:
                return False
    return True


#: Rotary classes whose numbers depend on how the engine feeds the prompt, which one token at each probe position
#: does not show: mlx-lm's dynamic NTK takes its base from each 2,048-token prefill chunk's end (mlx RULES.md §1-2).
PROMPT_DEPENDENT = {"mlx": ("DynamicNTKScalingRoPE",)}


def prompt_dependent(name: str, case: dict) -> bool:
    """Whether a group of the case applies one of the engine's :data:`PROMPT_DEPENDENT` classes (the generator's notes
    name the class each group applies)."""
    return any(str(g.get("notes", "")).startswith(PROMPT_DEPENDENT.get(name, ())) for g in case["groups"])


def ran_transformers_backend(name: str, case: dict) -> bool:
    """Whether the engine ran the case's model through its Transformers backend, as its generator recorded it:
    vLLM's model class (``vllm.model_executor.models.transformers``), SGLang's ``backend``; MLX has none."""
    if name == "vllm":
        return ".models.transformers." in (case.get("model_class") or "")
    return case.get("backend") == "transformers"


@pytest.mark.parametrize("name, case", [(n, c) for n, c in CASES if c["accepted"]],
                         ids=[f"{n}:{c['id']}" for n, c in CASES if c["accepted"]])
def test_the_transformers_backend_is_where_the_engine_ran_it(name, case):
    """An engine module's ``transformers_backend`` (its rules skipped: transformers' numbers) says what the
    engine itself did with the model."""
    assert engine(name).transformers_backend(config_of(case)) == ran_transformers_backend(name, case)


def test_the_measured_model_types_are_the_fixtures():
    """Each engine module's ``MEASURED_TYPES`` (others are said "cannot be sure") is exactly the model types its
    fixtures hold accepted and run on the engine's own model files."""
    from pecli.engines.base import text_of

    found: dict[str, set] = {}
    for name, case in CASES:
        config = config_of(case)
        if case["accepted"] and not ran_transformers_backend(name, case):
            found.setdefault(name, set()).add(text_of(config)[1].get("model_type") or config.get("model_type"))
    for name, types in found.items():
        assert set(engine(name).measured) == types, name


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}:{c['id']}" for n, c in CASES])
def test_diff_says_same_exactly_when_the_engine_computes_the_model(name, case):
    from pecli.engines.base import declared_context, text_of
    from pecli.engines.compare import engine_diff
    from pecli.errors import ConfigError

    config = config_of(case)
    if (name, case["id"]) in ERRATA:
        pytest.skip(ERRATA[(name, case["id"])])
    if not all(measured(fixture) for fixture in case["groups"]):
        pytest.skip("the generator did not build this engine's cos/sin cache (too large): its numbers are unknown")
    try:
        reference = reference_of(case)
    except ConfigError as unread:
        said_unread(name, case, config, unread)
        return
    declared = declared_context(text_of(config)[1])
    served = case["served"]
    expected = case["accepted"] and (served is None or declared is None or served == declared) and \
        transformers_numbers_equal(case, reference) and not prompt_dependent(name, case) and \
        case.get("runner", "generate") == "generate"  # vLLM's embedding model (runner pooling) generates no text
    found = engine_diff(engine(name), config, case["args"], reference)
    assert found.same == expected, found.lines()
    if case["accepted"] and prompt_dependent(name, case):
        assert any("prefill" in line for line in found.lines()), found.lines()


def said_unread(name: str, case: dict, config: dict, unread: Exception) -> None:
    """A config pecli does not read as transformers does: where pecli's engine module reads it (its numbers held to
    the engine's by the test above), diff says "not read" with the engine's scaling, never "same"; else it is skipped
    as pecli's refusal."""
    from pecli.engines.compare import engine_diff_unread
    from pecli.errors import ConfigError

    try:
        found = engine_diff_unread(engine(name), config, case["args"], unread)
    except ConfigError:
        skip_refused(config)
    assert not found.same and found.found is None
    if case["accepted"]:
        assert all(d.what == "not read" for d in found.differences), found.lines()
    else:
        assert [d.what for d in found.differences] == ["accepted"], found.lines()


def test_the_engine_modules_permute_q_and_k_where_the_engines_loaders_do():
    """Each engine module's ``permutes_rotary_weights`` (the layout its rules give a model) is what the engine's own
    weight loader did to q and k in the fixtures (``qk_permuted`` of every rotary group its generator measured)."""
    wrong = []
    for name, case in CASES:
        measured_groups = [g for g in case["groups"] if g["kind"] in ("rope", "mrope") and "qk_permuted" in g]
        if not case["accepted"] or not measured_groups:
            continue
        loader = {g["qk_permuted"] for g in measured_groups}
        assert loader in ({True}, {False}), (name, case["id"], [g.get("qk_permuted_how") for g in measured_groups])
        if engine(name).permutes_rotary_weights(config_of(case)) != loader.pop():
            wrong.append((name, case["id"]))
    assert not wrong
