"""The registry a store repairs with: the built-in operators, executors and plugins.

Plugin operators (entry points) come first, so a deployment can take over the artifacts
its plugins accept; then LLM regen when configured; then the built-ins. Every operator
gets the same `OperatorConfig`, built once from the settings.
"""

from __future__ import annotations

from memorepair.settings import OperatorConfig

from .base import Operator
from .chain import ChainOperator
from .executors import builtin_executors
from .llm import LLMRegenOperator
from .param import ParamOperator
from .recompute import RecomputeOperator
from .regen import RegenOperator
from .registry import OperatorRegistry, load_plugins


def build_registry(config: OperatorConfig, *, plugins: bool = True) -> OperatorRegistry:
    """Built-ins plus (unless ``plugins=False``) every entry-point plugin."""
    registry = OperatorRegistry()
    executors = builtin_executors(
        registry.backend, timeout_s=config.chain_timeout_s, memory_mb=config.chain_memory_mb
    )
    for name, executor in executors.items():
        registry.register_executor(name, executor)
    operators: list[Operator] = load_plugins(registry) if plugins else []
    if config.llm is not None:
        operators.append(LLMRegenOperator(config.llm, max_content_chars=config.max_content_chars))
    operators += [
        RecomputeOperator(registry),
        RegenOperator(config),
        ChainOperator(registry, config),
        ParamOperator(config),
    ]
    for operator in operators:
        registry.register_operator(operator)
    return registry
