"""Whether a run's own files say Inductor's caches were off or on, and which file says it.

torch reads two settings (torch/_inductor/config.py, torch/compiler/config.py):
* `force_disable_caches` (env TORCHINDUCTOR_FORCE_DISABLE_CACHES or TORCH_COMPILE_FORCE_DISABLE_CACHES):
  every cache off. From about 2.8 it is an alias of torch.compiler.config's, which get_config_copy
  leaves out: compilation_metrics' `inductor_config` stops carrying it, `compiler_config` carries it;
* `fx_graph_cache` (env TORCHINDUCTOR_FX_GRAPH_CACHE): the FX graph cache, on which AOTAutograd's
  cache depends.
An env value is read as torch reads a forced one: "1" true, "0" false, anything else unset.
Where they are written: the manifest (`caches: off|on`, as `iwh capture` writes it), compilation_metrics'
inductor_config (2.6+) and compiler_config, fx_graph_runnable's `os.environ[...]` lines (2.7+) and
`torch._inductor.config.<option> = <value>` lines (the options set away from their default), and the
`inductor_meta` of each Triton kernel in the output code. `on` needs the FX graph cache said on and
nothing saying off; a run where any file says off reads off (a setting only ever turns caches off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

OFF, ON = "off", "on"
# (OFF | ON, what said it: "<file>: <setting>")
CacheSaid = tuple[str, str]

_FORCE_ENV = ("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES")
_FX_ENV = "TORCHINDUCTOR_FX_GRAPH_CACHE"
_TRUE = {True, "True", "true", "1"}
_FALSE = {False, "False", "false", "0"}
# a Triton kernel's inductor_meta entry, as the output code prints the dict
_META = re.compile(r"""['"]force_disable_caches['"]: (True|False)""")


def settle(*said: CacheSaid | None) -> CacheSaid | None:
    """Of what several files say, the first that says off, else the first that says on."""
    found = [s for s in said if s is not None]
    return next((s for s in found if s[0] == OFF), found[0] if found else None)


def from_env(env: Mapping[str, str], where: str) -> CacheSaid | None:
    """What `os.environ` lines (name -> value text) say."""
    for name in _FORCE_ENV:
        if env.get(name) == "1":
            return OFF, f"{where}: {name}=1"
    fx = env.get(_FX_ENV)
    if fx == "0":
        return OFF, f"{where}: {_FX_ENV}=0"
    if fx == "1":
        return ON, f"{where}: {_FX_ENV}=1"
    return None


def from_config(config: object, where: str) -> CacheSaid | None:
    """What a config says: a JSON object (compilation_metrics' inductor_config or compiler_config) or
    fx_graph_runnable's option -> value text."""
    if not isinstance(config, Mapping):
        return None
    force = config.get("force_disable_caches")
    if _hashable(force) and force in _TRUE:
        return OFF, f"{where}: force_disable_caches=True"
    fx = config.get("fx_graph_cache")
    if _hashable(fx) and fx in _FALSE:
        return OFF, f"{where}: fx_graph_cache=False"
    if _hashable(fx) and fx in _TRUE:
        return ON, f"{where}: fx_graph_cache=True"
    return None


def from_manifest(caches: object) -> CacheSaid | None:
    """The manifest's `caches` key."""
    value = str(caches).strip().lower() if caches is not None else None
    return (value, f"manifest: caches={value}") if value in (OFF, ON) else None


def from_output_code(text: str, where: str) -> CacheSaid | None:
    """A Triton kernel's inductor_meta in generated code (the first; every kernel of a compile
    carries the same config)."""
    at = text.find("force_disable_caches")
    if at < 0:
        return None
    m = _META.match(text, max(at - 1, 0))
    if m is None:
        return None
    return (OFF, f"{where}: inductor_meta force_disable_caches=True") if m[1] == "True" else None


def _hashable(value: object) -> bool:
    return isinstance(value, (bool, int, str))


def note(facts: dict[str, Any], said: CacheSaid | None, prefix: str = "") -> None:
    """Keep `said` in a parse's facts["caches_said"] by settle's rule (`prefix` names where its file lay)."""
    if said is not None:
        facts["caches_said"] = settle(facts.get("caches_said"), (said[0], prefix + said[1]))
