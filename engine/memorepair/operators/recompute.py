"""``recompute``: replay an artifact's recipe on the post-event support.

Validation is replay consistency: a second, independent replay on exactly the inputs the
successor claims must give the same bytes. Since the replay sees only ``ctx.support``, a
consistent successor cannot draw on invalidated support.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memorepair.errors import some
from memorepair.model import Artifact, EventType, Interface, Mode, Recipe

from .base import Executor, RepairContext, Successor, Support, Tools, Validation
from .common import OperatorError, migrate_call, schema_dict, unknown_inputs
from .sandbox import check_call


def migrate_recipe(recipe: Recipe, interface: Interface | None) -> Recipe:
    """A ``tool.call`` recipe rewritten through a migration's rename maps (others as is)."""
    if recipe.executor != "tool.call" or interface is None:
        return recipe
    if recipe.args.get("backend") != interface.tool:
        return recipe
    function, args = recipe.args.get("function"), recipe.args.get("args", {})
    if not isinstance(function, str) or not isinstance(args, dict):
        raise OperatorError("tool.call recipe needs a string 'function' and an object 'args'")
    new_function, new_args = migrate_call(interface, function, args)
    return Recipe(
        executor=recipe.executor, args={**recipe.args, "function": new_function, "args": new_args}
    )


def recipe_interface_problem(recipe: Recipe, interface: Interface | None) -> str | None:
    """Why a (rewritten) ``tool.call`` recipe does not fit the new interface, if it does not.

    ``$input:`` references are typed only at replay time, so their types are not checked.
    """
    if recipe.executor != "tool.call" or interface is None:
        return None
    if recipe.args.get("backend") != interface.tool:
        return None
    return check_call(
        schema_dict(interface),
        str(recipe.args.get("function")),
        recipe.args.get("args", {}),
        skip_value=lambda v: isinstance(v, str) and v.startswith("$input:"),
    )


class RecomputeOperator:
    name = "recompute"
    mode = Mode.RECOMPUTE

    def __init__(self, tools: Tools) -> None:
        self._tools = tools

    def accepts(self, artifact: Artifact) -> bool:
        return (
            artifact.recipe is not None
            and self._tools.executor(artifact.recipe.executor) is not None
        )

    def _executor(self, recipe: Recipe) -> Executor:
        executor = self._tools.executor(recipe.executor)
        if executor is None:
            raise OperatorError(f"no executor {recipe.executor!r} is registered")
        return executor

    def build(self, ctx: RepairContext) -> Successor:
        artifact = ctx.artifact
        if artifact.recipe is None:
            raise OperatorError(f"{artifact.uid}: no recipe to replay")
        recipe = artifact.recipe
        interface = ctx.interface if ctx.event_type is EventType.MIGRATE else None
        recipe = migrate_recipe(recipe, interface)
        problem = recipe_interface_problem(recipe, interface)
        if problem:
            raise OperatorError(f"{artifact.uid}: recipe does not fit the new interface: {problem}")
        executor = self._executor(recipe)
        present = [s.uid for s in ctx.support]
        if getattr(executor, "positional", False):
            missing = [uid for uid in artifact.inputs if uid not in present]
            if missing:
                raise OperatorError(
                    f"{artifact.uid}: {recipe.executor} addresses inputs by position and "
                    f"{some(missing, 'input')} gone; a replay would read the wrong item"
                )
        content = executor(ctx.support, recipe.args, ctx.interface)
        return Successor(content=content, inputs=tuple(present), recipe=recipe)

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        recipe = successor.recipe or ctx.artifact.recipe
        if recipe is None:
            return Validation(False, "no recipe to replay")
        executor = self._tools.executor(recipe.executor)
        if executor is None:
            return Validation(False, f"executor {recipe.executor!r} is not registered")
        stray = unknown_inputs(ctx, successor.inputs)
        if stray:
            return Validation(
                False, f"{some(stray, 'input')} not retained support (invalidated or unknown)"
            )
        if ctx.event_type is EventType.MIGRATE:
            problem = recipe_interface_problem(recipe, ctx.interface)
            if problem:
                return Validation(False, f"recipe does not fit the new interface: {problem}")
        used = set(successor.inputs)
        replay_support: Sequence[Support] = [s for s in ctx.support if s.uid in used]
        try:
            replay = executor(replay_support, recipe.args, ctx.interface)
        except Exception as exc:
            return Validation(False, f"replay failed: {exc}")
        if replay.encode("utf-8") != successor.content.encode("utf-8"):
            return Validation(
                False,
                "replay inconsistent: a second replay of the recipe gave different output "
                f"({_preview(replay)} vs successor {_preview(successor.content)})",
            )
        return Validation(True)


def _preview(text: Any, n: int = 60) -> str:
    s = str(text)
    return repr(s if len(s) <= n else s[:n] + "...")
