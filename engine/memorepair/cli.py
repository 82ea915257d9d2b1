"""`memorepair`: the command line, one thin command per API call.

Errors of the package are caught once, in `main`, and printed as one line (exit 1; 2 for
bad input; 6 when the acting principal lacks the role); `--debug` shows the trace. Every
command that prints data takes `--json`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from memorepair.errors import (
    AccessDeniedError,
    ConfigError,
    EmbeddingError,
    InputError,
    MemoRepairError,
)
from memorepair.settings import Settings, load_settings

if TYPE_CHECKING:  # the API is imported when a command runs (`--help` stays fast)
    from memorepair.api import MemoryStore, OnStale, RepairReport, Resumed, SearchMode, Selector

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


def _emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
    else:
        human()


def _lines(lines: Iterable[str], empty: str = "") -> None:
    printed = False
    for line in lines:
        click.echo(line)
        printed = True
    if not printed and empty:
        click.echo(empty)


class _Progress:
    """Progress of long commands on stderr, never on stdout (so `--json` stays clean).

    A step that counts items (import, execute, validate, export) gets a bar with its rate
    and ETA on a terminal, or a plain line at most every half second otherwise (a pipe, a
    log file, CI); every step says when it is done and how long it took. Steps may nest
    (execution counts its items as `execute`). `--quiet` silences all of it.
    """

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.began: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.bars: Any = None
        self.tasks: dict[str, Any] = {}
        if not quiet and sys.stderr.isatty():
            self.bars = _bars()

    def __enter__(self) -> _Progress:
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.bars is not None:
            self.bars.stop()

    def __call__(self, step: str, done: int, total: int) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        began = self.began.setdefault(step, now)
        if done >= total:
            self.began.pop(step)
            self._done(step, total, now - began)
        elif total > 1:
            self._moving(step, done, total, now - began)

    def _moving(self, step: str, done: int, total: int, seconds: float) -> None:
        rate = f"{done / seconds:,.0f}/s" if seconds > 0.2 and done else ""
        if self.bars is not None:
            if step not in self.tasks:
                self.tasks[step] = self.bars.add_task(step, total=total, rate="")
            self.bars.update(self.tasks[step], completed=done, total=total, rate=rate)
            return
        now = time.monotonic()
        if now - self.last.get(step, 0.0) >= 0.5:
            self.last[step] = now
            click.echo(f"  {step:<11} {done}/{total}  {rate}".rstrip(), err=True)

    def _done(self, step: str, total: int, seconds: float) -> None:
        items = f"{total}/{total} " if total > 1 else ""
        line = f"  {step:<11} {items}done in {seconds:.2f}s"
        if self.bars is None:
            click.echo(line, err=True)
        elif step in self.tasks:
            self.bars.update(self.tasks.pop(step), completed=total, total=total)
        else:
            self.bars.console.print(line, highlight=False)


def _bars() -> Any:
    """rich's live progress bars on stderr: step, bar, count, percent, rate, time, ETA."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("  {task.description:<11}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )


QUIET_OPTION = click.option(
    "--quiet", "-q", is_flag=True, help="No progress on stderr (bars on a terminal, else lines)."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--ns",
    envvar="MEMOREPAIR_NAMESPACE",
    default=None,
    help="Namespace (tenant) to work in [env MEMOREPAIR_NAMESPACE; default 'default'].",
)
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Read settings from this file too [env MEMOREPAIR_ENV_FILE; no file by default: "
    "a .env in the working directory is ignored].",
)
@click.option(
    "--principal",
    "principal",
    default=None,
    help="Act as this principal (its grants apply) [env MEMOREPAIR_PRINCIPAL; default: "
    "the OS account, which owns every namespace].",
)
@click.option(
    "--session",
    envvar="MEMOREPAIR_SESSION",
    default=None,
    help="A session id kept on what reads serve, for `audit exposure` [env MEMOREPAIR_SESSION].",
)
@click.option("--debug", is_flag=True, help="Show the full trace on errors.")
@click.version_option(package_name="memorepair")
@click.pass_context
def cli(
    ctx: click.Context,
    ns: str | None,
    env_file: Path | None,
    principal: str | None,
    session: str | None,
    debug: bool,
) -> None:
    """Barrier-first cascade repair for agent memory stored in Neo4j.

    When a source artifact is deleted, corrected or invalidated by a tool migration,
    MemoRepair withdraws everything derived from it in one transaction, rebuilds what is
    worth rebuilding (chosen exactly by a min-cut), validates each successor and
    republishes only validated ones as new versions, leaving an audit trail in the graph.

    \b
    Typical session:
      memorepair neo4j start              # local Neo4j from Maven jars (no NEO4J_URI set)
      memorepair schema apply
      memorepair import memory.jsonl
      memorepair plan event.json --diff   # dry run: cascade, selection, content changes
      memorepair repair event.json
      memorepair audit event EVENT_ID     # what was withdrawn, published, removed, failed
      memorepair search "QUERY" -k 10     # best served matches: meaning + words
      memorepair show EVENT_ID            # the cascade as a page (HTML; mermaid, dot)
      memorepair retrieve --uid UID       # serving read: live artifacts only
      memorepair grants set agent-7 team-a reader,writer   # who may do what
      memorepair audit exposure EVENT_ID  # who read what this event withdrew

    Every command acts as a principal (--principal; the OS account by default, which
    owns every namespace) and needs a role in the namespace (`memorepair grants --help`);
    without it the command changes nothing and exits 6.

    Configuration comes from MEMOREPAIR_* variables, NEO4J_URI / NEO4J_USERNAME /
    NEO4J_PASSWORD / NEO4J_DATABASE, and an env file only if you name one (--env-file);
    `memorepair config show` prints what is in effect and where each value came from.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["ns"] = ns
    ctx.obj["env_file"] = env_file
    ctx.obj["principal"] = principal
    ctx.obj["session"] = session


def _env_file() -> Path | None:
    """The `--env-file` given to the command line, if any (else MEMOREPAIR_ENV_FILE)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj.get("env_file") if isinstance(obj, dict) else None


def _settings() -> Settings:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    chosen = obj.get("principal") if isinstance(obj, dict) else None
    overrides: dict[str, object] = {} if chosen is None else {"principal": chosen}
    return load_settings(env_file=_env_file(), **overrides)


# ---- configuration -----------------------------------------------------------------------
@cli.group()
def config() -> None:
    """The effective configuration."""


@config.command("show")
@JSON_OPTION
def config_show(as_json: bool) -> None:
    """Every setting, its value and where it came from (default, environment, env file).

    Secrets (passwords, API keys, credentials in a URI) are masked.
    """
    from memorepair.settings import chosen_env_file, describe

    env_file = chosen_env_file(_env_file())
    rows = [row.as_dict() for row in describe(load_settings(env_file=env_file), env_file)]
    ignored = Path(".env").is_file() and (
        env_file is None or env_file.resolve() != Path(".env").resolve()
    )
    data = {
        "env_file": str(env_file) if env_file else None,
        "ignored_env_file": str(Path(".env").resolve()) if ignored else None,
        "settings": rows,
    }

    def human() -> None:
        click.echo(f"env file: {env_file or 'none (name one with --env-file)'}")
        if ignored:
            click.echo("note: ./.env is not read; pass --env-file .env if you trust it")
        for row in rows:
            value = json.dumps(row["value"], default=str)
            unit = f"  [{row['unit']}]" if row["unit"] else ""
            click.echo(f"  {row['variable']:<34} {value:<30} {row['source']}{unit}")

    _emit(data, as_json, human)


def _await_vectors(memory: MemoryStore, progress: _Progress) -> EmbeddingError | None:
    """The republished successors are served already; their vectors (deferred embeddings)
    are written just after, and this process waits for them before it ends, showing it.
    A writer's failure is returned, to be raised once the report is out (`_finish`)."""

    def step(done: int, total: int) -> None:
        if total > 1:
            progress("vectors", done, total)

    try:
        memory.flush_embeddings(step)
    except EmbeddingError as exc:
        return exc
    return None


@contextmanager
def _memory(ctx: click.Context) -> Iterator[MemoryStore]:
    from memorepair.api import open_store

    memory = open_store(ns=ctx.obj.get("ns"), settings=_settings(), session=ctx.obj.get("session"))
    try:
        yield memory
    finally:
        memory.close()


# ---- the local server ----------------------------------------------------------------
@cli.group()
def neo4j() -> None:
    """Run the local Neo4j Community server (jars from Maven Central, no Docker).

    Used whenever NEO4J_URI is not set. Bolt listens on 127.0.0.1:MEMOREPAIR_BOLT_PORT
    (7687); data, logs and the generated password (mode 0600) live under
    MEMOREPAIR_STATE_DIR/neo4j, by default in the per-user data folder
    (~/.local/share/memorepair/neo4j on Linux), the same from every working folder.
    """


@neo4j.command("start")
@click.option(
    "--browser",
    is_flag=True,
    help="Also serve Neo4j Browser (and the HTTP API) on 127.0.0.1:MEMOREPAIR_HTTP_PORT "
    "(7474), for pasting the audit queries; fetches its jar once.",
)
@JSON_OPTION
def neo4j_start(browser: bool, as_json: bool) -> None:
    """Fetch the jars if needed, start the server and wait until Bolt answers.

    Runs MEMOREPAIR_NEO4J_VERSION (5.26.x on Java 17, or 2026.x on Java 25) and prints
    the heap, page cache and stop timeout it chose (MEMOREPAIR_HEAP/PAGECACHE `auto`:
    sized from the store on disk).
    """
    from memorepair.api import local_server

    server = local_server(_settings())
    status = server.start(progress=lambda m: click.echo(m, err=True), browser=browser)

    def human() -> None:
        click.echo(f"running at {status.uri} (pid {status.pid})")
        if status.browser:
            where = (
                f"the password is in {server.password_file}"
                if status.auth and server.settings.neo4j_password is None
                else "log in with NEO4J_PASSWORD"
            )
            click.echo(f"Neo4j Browser: {status.browser}  ({where})")

    _emit(status.as_dict(), as_json, human)


@neo4j.command("stop")
@JSON_OPTION
def neo4j_stop(as_json: bool) -> None:
    """Stop the local server cleanly (SIGTERM; SIGKILL after MEMOREPAIR_STOP_TIMEOUT_S).

    A clean stop writes a checkpoint, which after a large repair can take minutes (`auto`:
    300 s plus 120 s per GB of page cache); a killed server replays its transaction log
    at the next start (shown as progress).
    """
    from memorepair.api import local_server

    stopped = local_server(_settings()).stop(progress=lambda m: click.echo(m, err=True))
    _emit(
        {"stopped": stopped},
        as_json,
        lambda: click.echo("stopped" if stopped else "was not running"),
    )


@neo4j.command("status")
@JSON_OPTION
def neo4j_status(as_json: bool) -> None:
    """Whether the local server runs, its pid, URI and state folder (exit 3 if not).

    The state folder is MEMOREPAIR_STATE_DIR, by default the per-user data folder. When
    this folder has no server running but its port answers, says what answers instead of
    "stopped": the server of another state folder (named, with the setting that reaches
    it) or another process.
    """
    from memorepair.api import local_server

    status = local_server(_settings()).status()
    holder = status.port_holder

    def human() -> None:
        if holder is not None and holder.state_dir is not None:
            click.echo(f"no server runs in state folder {status.state_dir}; {holder.describe()}")
            return
        click.echo(
            f"{'running' if status.running else 'stopped'}  {status.uri}  Neo4j {status.version}  "
            f"state {status.state_dir}"
            + (f"  pid {status.pid}" if status.pid else "")
            + (f"\nNeo4j Browser: {status.browser}" if status.browser else "")
            + (f"\n{holder.describe()}" if holder else "")
        )

    _emit(status.as_dict(), as_json, human)
    if not status.running:
        sys.exit(3)


@neo4j.command("purge")
@click.option("--force", is_flag=True, help="Purge even while repair events are open.")
@JSON_OPTION
def neo4j_purge(force: bool, as_json: bool) -> None:
    """Make erased text leave the data directory's files (restarts the server twice).

    Neo4j keeps bytes the graph no longer holds: in transaction logs until they are rotated
    out and a checkpoint passes them, and in freed store records until they are reused.
    This writes filler that Neo4j puts on the freed records and that rotates the log,
    deletes it, and lets a clean stop checkpoint and delete the old logs. It scans every
    file under data/ and logs/ for the erasing events' fingerprints before and after;
    exit 4 if erased text is still found. Local server only (docs/erasure.md).
    """
    from memorepair.api import purge_local_server

    report = purge_local_server(
        _settings(), force=force, progress=lambda m: click.echo(m, err=True)
    )
    _emit(report.as_dict(), as_json, lambda: _lines(_purge_lines(report.as_dict())))
    if not report.ok:
        sys.exit(4)


def _purge_lines(report: dict[str, Any]) -> Iterator[str]:
    filler = report["filler"]
    yield (
        f"{report['erasing_events']} erasing events ({report['fingerprints']} fingerprints); "
        f"filler {filler['nodes']} nodes, {filler['bytes'] / 2**20:.1f} MiB; "
        f"{report['seconds']}s"
    )
    for when in ("before", "after"):
        state = report[when]
        free = ", ".join(f"{k} {v}" for k, v in state["free_records"].items())
        yield (
            f"{when}: {state['files']} files ({state['bytes'] / 2**20:.1f} MiB), "
            f"transaction logs {' '.join(state['tx_logs'])}; free records: {free}; "
            + (
                f"erased text in {len(state['copies'])} files"
                if state["copies"]
                else "no erased text"
            )
        )
        for name, runs in sorted(state["copies"].items()):
            yield f"  {'COPY in' if when == 'after' else 'was in'} {name} ({runs} runs)"


# ---- schema and data --------------------------------------------------------------------
@cli.group()
def schema() -> None:
    """Constraints and indexes (from cypher/schema/)."""


@schema.command("apply")
@JSON_OPTION
@click.pass_context
def schema_apply(ctx: click.Context, as_json: bool) -> None:
    """Create every constraint and index; safe to run again.

    The vector index is built with the HNSW shape of MEMOREPAIR_SEARCH_HNSW_M and
    _EF_CONSTRUCTION when it does not exist yet; an existing one keeps its own, and a
    warning (on stderr) says when that differs: `memorepair reindex --compact` builds it
    again with the configured shape."""
    with _memory(ctx) as memory:
        names = memory.apply_schema()
        drift = memory.vector_index_drift()
    _emit(names, as_json, lambda: click.echo(f"applied {len(names)} schema statements"))
    if drift:
        click.echo(f"warning: {drift}", err=True)


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@JSON_OPTION
@QUIET_OPTION
@click.pass_context
def import_(ctx: click.Context, file: Path, as_json: bool, quiet: bool) -> None:
    """Import a memory from JSON Lines (docs/interchange.md).

    The whole file is validated first (every line, duplicate uids, missing inputs,
    influence cycles); an error names the line and field and nothing is written. All
    or none across crashes too: a file larger than one transaction is written staged
    (never served) and published in one final transaction; if the process is killed,
    `memorepair resume` finishes or discards it. Running the same file again is safe:
    artifacts stored already, identical, are skipped; a different one is refused.
    """
    with _memory(ctx) as memory, _Progress(quiet) as progress:
        report = memory.import_file(file, progress=lambda d, t: progress("import", d, t))
    _emit(report.as_dict(), as_json, lambda: click.echo(_import_line(report.as_dict())))


def _import_line(report: Mapping[str, Any]) -> str:
    line = (
        f"imported {report['written']} artifacts ({report['live']} live, "
        f"{len(report['withdrawn_late'])} withdrawn: derived from withdrawn support), "
        f"{report['related_edges']} related edges"
    )
    if report["skipped"]:
        line += f"; skipped {report['skipped']} stored already (identical)"
    if report["discarded_interrupted"]:
        line += (
            f"; discarded {report['discarded_interrupted']} versions an interrupted run of "
            "this import had staged (written again)"
        )
    return line + _redacted_lines(report["redacted"])


def _redacted_lines(redacted: list[dict[str, str]], shown: int = 20) -> str:
    """The items written redacted, each with the erased input and the event."""
    if not redacted:
        return ""
    lines = [f"\n{len(redacted)} of them redacted (an input is erased; text not stored):"]
    lines += [f"  {r['uid']}: input {r['input']} erased by event {r['event']}" for r in redacted]
    more = [f"  ... and {len(redacted) - shown} more (--json lists all)"]
    return "\n".join(lines[: shown + 1] + (more if len(redacted) > shown else []))


@cli.command("record")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option(
    "--on-stale",
    type=click.Choice(["withdraw", "refuse"]),
    default="withdraw",
    show_default=True,
    help="A pinned input (uid@N) no longer served: record withdrawn (its text redacted "
    "if that input is erased by a delete), or refuse.",
)
@JSON_OPTION
@click.pass_context
def record_cmd(ctx: click.Context, source: Any, on_stale: str, as_json: bool) -> None:
    """Record one artifact from a JSON object (a memory line's fields; `-` reads stdin).

    \b
      echo '{"uid": "sum-2", "kind": "summary", "content": "...",
             "inputs": ["policy@3", "note-7"]}' | memorepair record -

    Inputs are uids (the versions served now) or uid@N, the version the agent read; an
    artifact derived from a version that is no longer served is never served itself.
    If that version is erased (by a delete, or a correct with erase: true, running or
    done), its content, meta and recipe are not stored either: it is recorded redacted
    (the output names the erased input and the event), or refused with --on-stale refuse.
    Changing an artifact that exists is `memorepair update`.
    """
    data = _json_object(source.read(), source.name)
    with _memory(ctx) as memory:
        row = memory.record(data, on_stale=cast("OnStale", on_stale))
    state = "served" if row["live"] else f"withdrawn (held by event {row['held_by']})"
    if row.get("redacted"):
        state += f"; text redacted: {row['redacted']['reason']}"
    _emit(row, as_json, lambda: click.echo(f"recorded {row['vid']}: {state}"))


@cli.command("update")
@click.argument("uid")
@click.option("--content", help="The new content (default: keep the served content).")
@click.option(
    "--content-file",
    type=click.File("r", encoding="utf-8"),
    help="Read the new content from a file (`-`: stdin).",
)
@click.option("--meta", "meta_json", help="The new meta, a JSON object (default: keep).")
@click.option(
    "--input",
    "inputs",
    multiple=True,
    help="An input uid or uid@N, repeatable; replaces the inputs (default: keep them).",
)
@click.option("--reason", default="", help="Why, for the audit trail.")
@click.option("--id", "event_id", help="The event id (default: generated).")
@click.option("--erase", is_flag=True, help="Also erase the old text everywhere, as delete does.")
@JSON_OPTION
@QUIET_OPTION
@click.pass_context
def update_cmd(
    ctx: click.Context,
    uid: str,
    content: str | None,
    content_file: Any,
    meta_json: str | None,
    inputs: tuple[str, ...],
    reason: str,
    event_id: str | None,
    erase: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Change a served artifact: a `correct` event with its cascade and barrier.

    Everything derived from the old version is withdrawn at once and repaired from the
    new one. Exits 5 if some of it could not be repaired (see `memorepair retry`).
    """
    if content is not None and content_file is not None:
        raise InputError("give --content or --content-file, not both")
    text = content_file.read() if content_file is not None else content
    meta = _json_object(meta_json, "--meta") if meta_json is not None else None
    with _memory(ctx) as memory, _Progress(quiet) as progress:
        report = memory.update(
            uid,
            content=text,
            meta=meta,
            inputs=list(inputs) if inputs else None,
            reason=reason,
            event_id=event_id,
            erase=erase,
            progress=progress,
        )
    _emit(report.as_dict(), as_json, lambda: _print_report(report.as_dict()))
    _finish([report], as_json)


def _json_object(text: str, where: str) -> dict[str, Any]:
    """A JSON object given on the command line or in a file, or a one-line error."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


@cli.command("export")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--force", is_flag=True, help="Overwrite an existing file (never through a symbolic link)."
)
@QUIET_OPTION
@click.pass_context
def export(ctx: click.Context, file: Path, force: bool, quiet: bool) -> None:
    """Export the served (live) memory as JSON Lines; FILE '-' writes to stdout.

    A new file is created with mode 0600; an existing one is refused without --force.
    """
    with _memory(ctx) as memory, _Progress(quiet) as progress:

        def step(done: int, total: int) -> None:
            progress("export", done, total)

        if str(file) == "-":
            count = memory.export_to(sys.stdout, progress=step)
            click.echo(f"exported {count} live artifacts to stdout", err=True)
            return
        count = memory.export_file(file, force=force, progress=step)
    click.echo(f"exported {count} live artifacts to {file}")


# ---- repair ----------------------------------------------------------------------------
_SELECTOR = click.option(
    "--selector",
    type=click.Choice(["mincut", "greedy", "all", "none"]),
    default=None,
    help="mincut (exact, default), greedy, all (Repair-all) or none (no cascade repair).",
)
_LAMBDA = click.option(
    "--lambda",
    "lam",
    type=float,
    default=None,
    help="Lambda in max sum(w - lambda*c), in reads per second of repair (w in reads, c in "
    "seconds; 1/lambda: seconds one read is worth). Overrides the event file's lambda, "
    "else MEMOREPAIR_LAMBDA (60).",
)


@cli.command("plan")
@click.argument("event", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_SELECTOR
@_LAMBDA
@click.option(
    "--diff",
    is_flag=True,
    help="Also build and validate the selected successors in memory and show each "
    "artifact's content change, and what would stay withdrawn and why.",
)
@click.option(
    "--frontier",
    is_flag=True,
    help="Show the exact trade-off over lambda instead of the candidate list: every "
    "selection the min-cut makes as lambda grows, where it changes, its value (reads) and "
    "cost (seconds) and what each step skips; the step the plan's lambda is in is marked.",
)
@JSON_OPTION
@click.pass_context
def plan_cmd(
    ctx: click.Context,
    event: Path,
    selector: Selector | None,
    lam: float | None,
    diff: bool,
    frontier: bool,
    as_json: bool,
) -> None:
    """Dry run: the cascade, each candidate's mode, the selection and its cost. Writes nothing.

    With --diff, like `terraform plan`: every successor the repair would publish is built
    and validated in memory (no event, no staged node) and shown as a diff of the current
    content against the successor's; the rest of the cascade is listed with the reason it
    would stay withdrawn or be removed.
    """
    with _memory(ctx) as memory:
        if diff:
            data = memory.plan_diff(event, lam=lam, selector=selector)
        else:
            planned = memory.plan(event, lam=lam, selector=selector)
            data = planned.as_dict()
            if frontier:
                data["frontier"] = planned.frontier()

    def human() -> None:
        if frontier and not diff:
            _print_frontier(data)
            return
        _print_plan(data)
        if diff:
            _print_diff(data["diff"])

    _emit(data, as_json, human)


def _print_plan(data: dict[str, Any]) -> None:
    click.echo(f"event {data['event']} ({data['type']}) roots {', '.join(data['roots'])}")
    click.echo(f"cascade: {len(data['cascade'])} artifacts would be withdrawn")
    for c in data["candidates"]:
        mark = "x" if c["selected"] else " "
        run = "" if c["executable"] else f"  (not executable: {c['reason']})"
        figures = (
            f"w={c['value']:<6.4g} ({c['value_source']:<8}) c={c['cost']:<6.4g} "
            f"({c['cost_source']:<8})"
        )
        click.echo(f"  [{mark}] {c['uid']:<32} {c['mode']:<9} {figures}{run}")
    click.echo(
        f"selection ({data['backend']}): value {data['repair_value']:g}, cost "
        f"{data['cost']:g}, objective {data['objective']:g}; Repair-all cost "
        f"{data['repair_all_cost']:g}"
    )


def _print_frontier(data: dict[str, Any]) -> None:
    front = data["frontier"]
    click.echo(f"event {data['event']} ({data['type']}) roots {', '.join(data['roots'])}")
    click.echo(
        f"cascade: {len(data['cascade'])} artifacts would be withdrawn; {front['runnable']} "
        f"candidates can run (Repair-all: value {front['repair_all_value']:.4g} reads, cost "
        f"{front['repair_all_cost']:.4g} s)"
    )
    click.echo(
        "frontier over lambda, in reads per second of repair (s/read = 1/lambda, the "
        "seconds of repair one read is worth);\neach step holds from its lambda up to the "
        "next step's:"
    )
    click.echo(
        f"    {'lambda':>10} {'s/read':>8} {'repairs':>9} {'recovered':>9} "
        f"{'value (reads)':>17} {'cost (s)':>17}  skips (besides the step above's)"
    )
    for step in front["steps"]:
        mark = "*" if step["default"] else " "
        lam = step["lambda_from"]
        per_read = f"{1 / lam:.3g}" if lam > 0 else "inf"
        value = f"{step['value']:.4g} ({_share(step['value_share'])})"
        cost = f"{step['cost']:.4g} ({_share(step['cost_share'])})"
        recovered = _share(step["recovered"])
        skips = _skipped(step["skips"])
        click.echo(
            f"  {mark} {lam:>10.4g} {per_read:>8} {step['selected']:>9} {recovered:>9} "
            f"{value:>17} {cost:>17}  {skips}"
        )
    click.echo(
        f"* the plan's lambda: {front['lambda']:g} ({1 / front['lambda']:.3g} s per read)"
        if front["lambda"] > 0
        else "* the plan's lambda: 0 (cost is no object)"
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _skipped(uids: list[str], shown: int = 3) -> str:
    if not uids:
        return "-"
    more = f" (+{len(uids) - shown})" if len(uids) > shown else ""
    return ", ".join(uids[:shown]) + more


#: How `plan --diff` marks each outcome, terraform-style, and its colour on a terminal.
_DIFF_MARKS = {
    "published": ("~", "yellow"),
    "root_replaced": ("~", "yellow"),
    "root_deleted": ("-", "red"),
    "removed": ("-", "red"),
    "failed": ("!", "red"),
    "blocked": ("!", "red"),
}


def _print_diff(changes: dict[str, Any]) -> None:
    """Each content change as a coloured unified diff, then what stays withdrawn."""
    for item in changes["changes"]:
        mark, colour = _DIFF_MARKS.get(item["outcome"], ("=", "white"))
        head = f"\n{mark} {item['uid']}  {item['versions']}  {item['kind']}"
        click.echo(click.style(head, fg=colour, bold=True) + f"  ({item['outcome']})")
        if item["erased"]:
            click.echo("    (the current content is erased)")
        for line in item["diff"]:
            click.echo("    " + _diff_line(line))
    if changes["withdrawn"]:
        click.echo("\nwould stay withdrawn or be removed:")
    for item in changes["withdrawn"]:
        mark, colour = _DIFF_MARKS.get(item["outcome"], ("=", "white"))
        click.echo(
            click.style(f"  {mark} {item['uid']:<32}", fg=colour)
            + f" {item['outcome']:<15} {item['reason']}"
        )
    summary = ", ".join(f"{o} {n}" for o, n in sorted(changes["counts"].items()))
    click.echo(f"\noutcomes if repaired now: {summary}; nothing was written")


def _diff_line(line: str) -> str:
    if line.startswith(("+++", "---")):
        return click.style(line, bold=True)
    if line.startswith("+"):
        return click.style(line, fg="green")
    if line.startswith("-"):
        return click.style(line, fg="red")
    if line.startswith("@@"):
        return click.style(line, fg="cyan")
    return line


@cli.command("show")
@click.argument("event")
@click.option(
    "--plan",
    "planned",
    is_flag=True,
    help="EVENT is an event file: draw what a repair would do now (nothing is written).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "mermaid", "dot"]),
    default="html",
    show_default=True,
    help="A self-contained HTML page, or Mermaid / Graphviz text for documents.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write ('-' for stdout) [html: cascade-EVENT.html; mermaid, dot: stdout].",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(1, 100_000),
    default=150,
    show_default=True,
    help="Past this many artifacts, group them by depth, kind and outcome (the page says so).",
)
@_SELECTOR
@_LAMBDA
@JSON_OPTION
@click.pass_context
def show_cmd(
    ctx: click.Context,
    event: str,
    planned: bool,
    fmt: str,
    output: Path | None,
    max_nodes: int,
    selector: Selector | None,
    lam: float | None,
    as_json: bool,
) -> None:
    """Draw an event's cascade: roots, then descendants by depth, coloured by outcome.

    \b
    memorepair show EVENT_ID                 # after a repair: the audit trail, drawn
    memorepair show --plan event.json        # before: what a repair would do now
    memorepair show EVENT_ID --format mermaid

    The HTML page needs no network: hover a box for its uid, versions, mode, value, cost
    and reason; click it for the content change (old against new; "erased" where the graph
    holds an erasure instead). --json prints the same facts instead of a drawing.
    --selector and --lambda apply to --plan only.
    """
    if not planned and (selector is not None or lam is not None):
        raise InputError("--selector and --lambda apply to `show --plan EVENT_FILE` only")
    with _memory(ctx) as memory:
        if planned:
            view = memory.plan_view(_event_file(event), lam=lam, selector=selector)
        else:
            view = memory.show(event)
    if as_json:
        click.echo(json.dumps(view.as_dict(), indent=2, sort_keys=True, default=str))
        return
    text = {"html": view.html, "mermaid": view.mermaid, "dot": view.dot}[fmt](max_nodes)
    if output is None and fmt == "html":
        output = Path(f"{'plan' if planned else 'cascade'}-{view.event}.html")
    if output is None or str(output) == "-":
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    counts = ", ".join(f"{o} {n}" for o, n in sorted(view.counts().items()))
    click.echo(f"wrote {output}: {len(view.nodes)} artifacts ({counts})")


def _event_file(name: str) -> Path:
    path = Path(name)
    if not path.is_file():
        raise InputError(f"--plan needs an event file; {name!r} is not a file")
    return path


#: Exit status of a repair that completed but left candidates failed or blocked: their
#: artifacts stay withdrawn until `memorepair retry EVENT` (or a new event) repairs them.
STRANDED_EXIT = 5
#: Exit status of an erasing event whose closing scan found a copy of the erased text
#: that no repair reaches (the same status `audit erasure` exits with).
COPIES_EXIT = 4


def _finish(reports: list[RepairReport], as_json: bool, late: EmbeddingError | None = None) -> None:
    """Exit COPIES_EXIT when an erasure found copies left, else STRANDED_EXIT when any
    report left candidates failed or blocked; both are named on stderr. Else raise the
    vectors' failure (`late`): the repair is done, search by meaning is not."""
    copies = _copies_left(reports, as_json)
    stranded = _stranded(reports, as_json)
    if late is not None:
        click.echo(f"error: the successors are served, their vectors are not: {late}", err=True)
    if copies or stranded:
        sys.exit(COPIES_EXIT if copies else STRANDED_EXIT)
    if late is not None:
        sys.exit(1)


def _copies_left(reports: list[RepairReport], as_json: bool) -> bool:
    """Name the copies of erased text each erasing event found and could not reach."""
    left = [r for r in reports if r.erasure is not None and not r.erasure["ok"]]
    if as_json:
        return bool(left)
    for report in left:
        proof = report.erasure or {}
        click.echo(
            f"event {report.event} stays open: its erasure scan found "
            f"{proof['erasure_copies']} copies of the erased text that no repair of it "
            "reaches (artifacts that quote the text without deriving from it):",
            err=True,
        )
        for copy in proof["copies"]:
            click.echo(f"  {copy['where']} ({copy['labels']}): {copy['property']}", err=True)
        if proof["erasure_copies"] > len(proof["copies"]):
            click.echo(f"  ... (`memorepair audit erasure {report.event}` lists all)", err=True)
        click.echo(
            "delete them (a delete event) or correct them with `memorepair update UID "
            f"--content ... --erase`, then: memorepair resume {report.event}",
            err=True,
        )
    return bool(left)


def _stranded(reports: list[RepairReport], as_json: bool) -> bool:
    """Name the candidates any report left failed or blocked (True: there are some)."""
    stranded = [
        (report.event, s["outcome"], s["uid"], s["detail"])
        for report in reports
        for s in report.stranded
    ]
    if stranded and not as_json:
        click.echo(f"{len(stranded)} artifact(s) stay withdrawn, not repaired:", err=True)
        for event, outcome, uid, why in stranded[:20]:
            click.echo(f"  {uid} ({outcome} in {event}): {why}", err=True)
        if len(stranded) > 20:
            click.echo(f"  ... and {len(stranded) - 20} more (`memorepair status`)", err=True)
        events = ", ".join(sorted({e for e, *_ in stranded}))
        click.echo(f"fix the cause, then: memorepair retry {events}", err=True)
    return bool(stranded)


def _print_report(data: dict[str, Any]) -> None:
    click.echo(
        f"event {data['event']} ({data['type']}): {data['status']}"
        + (f" (resumed from {data['resumed_from']})" if data.get("resumed_from") else "")
    )
    click.echo(f"  withdrawn at the barrier: {data['withdrawn']}")
    for outcome, uids in data["outcomes"].items():
        if uids:
            shown = ", ".join(uids[:8]) + (f", ... (+{len(uids) - 8})" if len(uids) > 8 else "")
            click.echo(f"  {outcome:<16} {len(uids):>5}  {shown}")
    norm = data.get("normalised_cost")
    click.echo(
        f"  selector {data['selector']} (lambda {data['lambda']:g}, {data['backend']}): "
        f"value {data['repair_value']:g}, cost {data['cost']:g}"
        + (f" = {norm:.2f} of Repair-all's {data['repair_all_cost']:g}" if norm else "")
    )


@cli.command("repair")
@click.argument("event", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_SELECTOR
@_LAMBDA
@JSON_OPTION
@QUIET_OPTION
@click.pass_context
def repair_cmd(
    ctx: click.Context,
    event: Path,
    selector: Selector | None,
    lam: float | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run a repair event: withdraw, select, execute, validate, republish.

    Idempotent by event id: running the same event again after a crash resumes it.
    Exits 5 when it completed but left candidates failed or blocked (they stay withdrawn;
    `memorepair retry EVENT_ID` re-attempts them once the cause is fixed).
    """
    with _memory(ctx) as memory, _Progress(quiet) as progress:
        report = memory.repair(event, selector=selector, lam=lam, progress=progress)
        late = _await_vectors(memory, progress)
    _emit(report.as_dict(), as_json, lambda: _print_report(report.as_dict()))
    _finish([report], as_json, late)


@cli.command("retry")
@click.argument("event_id")
@JSON_OPTION
@QUIET_OPTION
@click.pass_context
def retry_cmd(ctx: click.Context, event_id: str, as_json: bool, quiet: bool) -> None:
    """Re-attempt what an event left failed or blocked, as a follow-up event.

    For a repair that exited 5: fix the cause first (install the tool back-end a
    migration needs, say), then retry. The follow-up event EVENT_ID.retry-N takes the
    stranded artifacts over at its barrier and repairs them under the same rules; exits 5
    again if some still fail.
    """
    with _memory(ctx) as memory, _Progress(quiet) as progress:
        report = memory.retry(event_id, progress=progress)
        late = _await_vectors(memory, progress)
    _emit(report.as_dict(), as_json, lambda: _print_report(report.as_dict()))
    _finish([report], as_json, late)


@cli.command("resume")
@click.argument("event_id", required=False)
@click.option(
    "--import",
    "import_id",
    metavar="ID",
    help="Only this interrupted import (also one started on another host).",
)
@click.option(
    "--discard",
    is_flag=True,
    help="Discard interrupted imports even if every item was written (not publish them).",
)
@JSON_OPTION
@QUIET_OPTION
@click.pass_context
def resume_cmd(
    ctx: click.Context,
    event_id: str | None,
    import_id: str | None,
    discard: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Complete an interrupted event (or every open event of the namespace), after
    finishing or discarding the imports a killed process left open.

    An import whose items were all written (only its final publication was missed) is
    published; any other is discarded, nothing of it served: run the same file (or
    batch) again to write it, skipping what is stored already. `--import ID` handles
    that import alone, events untouched.
    """
    with _memory(ctx) as memory, _Progress(quiet) as progress:
        imports = [] if event_id else _resume_imports(memory, import_id, discard)
        reports = [] if import_id else memory.resume(event_id, progress=progress)
        late = _await_vectors(memory, progress)
    data = [r.as_dict() for r in reports]
    done = [i.as_dict() for i in imports]

    def human() -> None:
        for item in done:
            click.echo(
                f"import {item['import']}: {item['action']} ({item['staged']} of "
                f"{item['count']} items staged; {item['detail']})"
            )
        if not data and not import_id:
            click.echo("no open events")
        for item in data:
            _print_report(item)

    _emit({"imports": done, "events": data} if done else data, as_json, human)
    _finish(reports, as_json, late)


def _resume_imports(memory: MemoryStore, import_id: str | None, discard: bool) -> list[Resumed]:
    """The imports to finish or discard; a principal who may resume events but not
    import (a curator) resumes the events alone, unless it names an import."""
    try:
        return memory.resume_imports(import_id, discard=discard)
    except AccessDeniedError:
        if import_id is not None:
            raise
        return []


@cli.command("status")
@JSON_OPTION
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Artifacts by visibility, open events and imports, and what is still withdrawn and why."""
    with _memory(ctx) as memory:
        data = memory.status()
    counts, open_events = data["artifacts"], data["open_events"]

    def human() -> None:
        click.echo(
            f"namespace {data['namespace']} on {data['server']}\n  "
            + "  ".join(f"{k} {v}" for k, v in counts.items())
            + f"\n  acting as {data['principal']}"
            + "\n  open events: "
            + (
                ", ".join(f"{e['id']} ({e['phase']}) by {e['by'] or '?'}" for e in open_events)
                or "none"
            )
        )
        for item in data["open_imports"]:
            click.echo(
                f"  open import {item['id']}: {item['staged']} of {item['count']} items staged "
                f"(not served), by {item['by']} (process {item['pid']} on {item['host']}); "
                "`memorepair resume` finishes or discards it once that process is gone"
            )
        withdrawn = data["withdrawn"]
        click.echo(f"  still withdrawn: {len(withdrawn) or 'nothing'}")
        for row in withdrawn[:20]:
            click.echo(
                f"    {row['uid']}@{row['version']}  {row['outcome']} in {row['event']}"
                + (f": {row['reason']}" if row["reason"] else "")
            )
        if len(withdrawn) > 20:
            click.echo(f"    ... and {len(withdrawn) - 20} more (--json lists all)")

    _emit(data, as_json, human)


def _gist(content: str, width: int) -> str:
    """The first line of a content, cut to `width`, saying what it leaves out (--json has all)."""
    lines = content.splitlines() or [""]
    first = lines[0] if len(lines[0]) <= width else lines[0][: width - 1] + "…"
    more = len(lines) - 1
    return first + (f"  (+{more} line{'s' if more > 1 else ''})" if more else "")


@cli.command("retrieve")
@click.option("--uid", help="One artifact by uid.")
@click.option(
    "--kind", type=click.Choice(["record", "cache", "summary", "skill"]), help="Only this kind."
)
@click.option("--text", help="Case-insensitive substring of the content.")
@click.option("--related", is_flag=True, help="Live artifacts joined to --uid by RELATED edges.")
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=20,
    show_default=True,
    help="At most this many artifacts.",
)
@JSON_OPTION
@click.pass_context
def retrieve_cmd(
    ctx: click.Context,
    uid: str | None,
    kind: str | None,
    text: str | None,
    related: bool,
    limit: int,
    as_json: bool,
) -> None:
    """The serving read: live artifacts only (never withdrawn, staged or superseded)."""
    with _memory(ctx) as memory:
        found = memory.retrieve(uid=uid, kind=kind, text=text, related=related, limit=limit)
    data = [a.model_dump(mode="json") for a in found]

    def human() -> None:
        for a in found:
            click.echo(f"{a.pin}  {a.kind.value:<8} {_gist(a.content, 90)}")
        if not found:
            click.echo("nothing live matches")

    _emit(data, as_json, human)


def _meta_pairs(pairs: tuple[str, ...]) -> dict[str, str]:
    meta: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--meta wants key=value, got {pair!r}")
        meta[key] = value
    return meta


@cli.command("search")
@click.argument("query")
@click.option(
    "-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="Hits wanted."
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["record", "cache", "summary", "skill"]),
    help="Only these kinds (repeatable).",
)
@click.option(
    "--meta",
    "meta",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only versions whose meta has this value (repeatable; fields named in "
    "MEMOREPAIR_SEARCH_META_FIELDS).",
)
@click.option("--since", help="Published (or created) at or after this ISO 8601 time.")
@click.option("--until", help="Published (or created) before this ISO 8601 time.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "vector", "text"]),
    default="hybrid",
    show_default=True,
    help="vector (meaning), text (words, BM25) or hybrid (both, rank-fused).",
)
@click.option("--related", is_flag=True, help="Also the served RELATED neighbours of the hits.")
@JSON_OPTION
@click.pass_context
def search_cmd(
    ctx: click.Context,
    query: str,
    k: int,
    kinds: tuple[str, ...],
    meta: tuple[str, ...],
    since: str | None,
    until: str | None,
    mode: str,
    related: bool,
    as_json: bool,
) -> None:
    """The k best served matches for QUERY: never withdrawn, staged or superseded.

    Use `search` to find memory by meaning or words; `retrieve` reads one uid, a kind, or
    a substring. Each hit names the version it ranked (uid@version) and its rank per mode.
    """
    with _memory(ctx) as memory:
        hits = memory.search(
            query,
            k,
            kinds=list(kinds) or None,
            meta=_meta_pairs(meta),
            since=since,
            until=until,
            mode=cast("SearchMode", mode),
            related=related,
        )
    data = [hit.as_dict() for hit in hits]

    def human() -> None:
        if not hits:
            click.echo("nothing served matches")
            return
        width = max(len("uid@version"), *(len(h.pin) for h in hits))
        click.echo(
            f"{'#':>3}  {'uid@version':<{width}}  {'kind':<8} {'score':>7}  ranks      content"
        )
        for n, hit in enumerate(hits, start=1):
            ranks = " ".join(f"{m[0]}{r or '-'}" for m, r in sorted(hit.ranks.items()))
            score = "" if hit.score is None else f"{hit.score:.4f}"
            pinned = hit.pin
            if hit.related_to:  # a neighbour: say whose
                ranks = f"~{hit.related_to}"
            gist = _gist(hit.content, 60)
            click.echo(f"{n:>3}  {pinned:<{width}}  {hit.kind:<8} {score:>7}  {ranks:<10} {gist}")

    _emit(data, as_json, human)


@cli.command("reindex")
@click.option("--force", is_flag=True, help="Re-embed every version, even of the same model.")
@click.option(
    "--compact",
    is_flag=True,
    help="Only rebuild the vector index in one bulk population (after bulk writes, e.g. an "
    "import: queries get faster), with the configured HNSW shape "
    "(MEMOREPAIR_SEARCH_HNSW_M, _EF_CONSTRUCTION); nothing is re-embedded. The index is "
    "shared, so every namespace's; vector search stays exact meanwhile, only slower.",
)
@JSON_OPTION
@click.pass_context
def reindex_cmd(ctx: click.Context, force: bool, compact: bool, as_json: bool) -> None:
    """Re-embed the namespace with the configured embedder (after changing the model) and
    rewrite its searchable meta terms; search refuses meanwhile. With --compact, rebuild
    the vector index instead."""
    if compact:
        with _memory(ctx) as memory:
            seconds = memory.compact_vector_index()
            shape = memory.vector_shape
        _emit(
            {"compacted": "artifact_embedding", "seconds": seconds, **shape.params()},
            as_json,
            lambda: click.echo(f"rebuilt the vector index ({shape}) in {seconds:.1f}s"),
        )
        return
    progress = _Progress(quiet=as_json)
    with _memory(ctx) as memory:
        report = memory.reindex(force=force, progress=lambda d, t: progress("reindex", d, t))
    _emit(
        report.as_dict(),
        as_json,
        lambda: click.echo(
            f"reindexed {report.versions} versions with {report.model} "
            f"(dimension {report.dimension}): {report.embedded} embedded in "
            f"{report.seconds:.1f}s"
        ),
    )


# ---- audit --------------------------------------------------------------------------------
@cli.group()
def audit() -> None:
    """Read the audit trail (the same Cypher as cypher/audit/, for Neo4j Browser)."""


@audit.command("events")
@JSON_OPTION
@click.pass_context
def audit_events(ctx: click.Context, as_json: bool) -> None:
    """Repair events of the namespace, newest first."""
    with _memory(ctx) as memory:
        rows = memory.audit_events()
    _emit(
        rows,
        as_json,
        lambda: _lines(
            f"{r['event']:<24} {r['type']:<8} {r['status']:<10} phase {r['phase']:<10} "
            f"withdrawn {r['withdrawn'] or 0} published {r['published'] or 0}"
            f"  by {r['by'] or '?'}"
            for r in rows
        ),
    )


@audit.command("event")
@click.argument("event_id")
@JSON_OPTION
@click.pass_context
def audit_event(ctx: click.Context, event_id: str, as_json: bool) -> None:
    """One event's cascade by outcome: published, removed, failed, blocked, unselected, ..."""
    with _memory(ctx) as memory:
        sets = memory.audit_event(event_id)
        record = memory.event_record(event_id)

    def human() -> None:
        click.echo(
            f"event {record['id']} ({record['type']}, {record['status']}) asked by "
            f"{record['by'] or '?'} at {record['created_at']}"
            + (f": {record['reason']}" if record["reason"] else "")
        )
        for outcome, items in sets.items():
            click.echo(f"{outcome} ({len(items)})")
            for item in items:
                why = f"  -- {item['reason']}" if item.get("reason") else ""
                succ = f" -> v{item['successor']}" if item.get("successor") else ""
                click.echo(
                    f"  {item['uid']}@{item['version']}{succ} {item.get('mode') or ''}"
                    f"{_figures(item)}{why}"
                )

    _emit({**sets, "event": record}, as_json, human)


def _figures(item: dict[str, Any]) -> str:
    """` w=.. (source) c=.. (source)` for a candidate's recorded facts (roots have none)."""
    if item.get("value") is None:
        return ""
    work = f", built in {item['work_s']:.3g}s" if item.get("work_s") is not None else ""
    return (
        f"  w={item['value']:.4g} ({item.get('value_source') or 'prior'}) "
        f"c={item['cost']:.4g} ({item.get('cost_source') or 'prior'}){work}"
    )


@audit.command("lineage")
@click.argument("uid")
@JSON_OPTION
@click.pass_context
def audit_lineage(ctx: click.Context, uid: str, as_json: bool) -> None:
    """Every version of one artifact, its inputs and the events that touched it."""
    with _memory(ctx) as memory:
        rows = memory.lineage(uid)
    _emit(
        rows,
        as_json,
        lambda: _lines(
            f"v{r['version']} {r['visibility']:<10} inputs {', '.join(r['inputs']) or '-'}"
            + f"  by {r['by'] or '?'}"
            + (f"  published by {r['published_by']}" if r["published_by"] else "")
            for r in rows
        ),
    )


@audit.command("withdrawn")
@JSON_OPTION
@click.pass_context
def audit_withdrawn(ctx: click.Context, as_json: bool) -> None:
    """Current versions still withheld from serving, with the event and reason."""
    with _memory(ctx) as memory:
        rows = memory.still_withdrawn()
    _emit(
        rows,
        as_json,
        lambda: _lines(
            (
                f"{r['uid']}@{r['version']}  {r['event']}  {r['outcome']}  {r['reason'] or ''}"
                for r in rows
            ),
            empty="nothing is withdrawn",
        ),
    )


@audit.command("erasure")
@click.argument("event_id")
@JSON_OPTION
@click.pass_context
def audit_erasure(ctx: click.Context, event_id: str, as_json: bool) -> None:
    """What a delete (or a correct with erase) erased, and the proof that no copy is left.

    Scans every property of every node and relationship in the namespace for the erased
    text's fingerprints (hashes of its phrases and identifiers: the text itself is not
    kept). Exit 4 when a copy is found, naming where. Late writes (artifacts recorded
    from an erased version while the event ran or after it completed) are redacted too
    and counted; --json lists them.
    """
    with _memory(ctx) as memory:
        record = memory.audit_erasure(event_id)

    def human() -> None:
        scanned = record["scanned"]
        click.echo(
            f"event {record['event']} ({record['type']}, {record['status']}): erased at "
            f"{record['erased_at'] or '(in progress)'}, {record['versions']} versions redacted"
            f" ({record['late_write_count']} of them late writes: recorded from an erased "
            "version while the event ran or after)"
        )
        for root in record["roots"] or []:
            click.echo(f"  erased {root.rsplit(':', 1)[0]}  sha256 {root.rsplit(':', 1)[1]}")
        click.echo(
            f"  scanned {scanned['nodes']} nodes and {scanned['relationships']} relationships "
            f"for {record['fingerprints']} fingerprints: "
            + ("no copy left" if record["ok"] else f"{len(record['copies'])} copies found")
        )
        for copy in record["copies"][:20]:
            click.echo(f"  COPY in {copy['where']} ({copy['labels']}).{copy['property']}")

    _emit(record, as_json, human)
    if not record["ok"]:
        sys.exit(4)


def _stale_line(row: dict[str, Any]) -> str:
    if row["support"] is None:
        return f"STALE {row['uid']}@{row['version']} ({row['support_visibility']})"
    return (
        f"STALE {row['uid']}@{row['version']} <- {row['support']}@{row['support_version']} "
        f"({row['support_visibility']})"
    )


@audit.command("check")
@JSON_OPTION
@click.pass_context
def audit_check(ctx: click.Context, as_json: bool) -> None:
    """Check the barrier invariant (exit 4 when broken).

    No live artifact has support that is not live, and no live version is an old one.
    """
    with _memory(ctx) as memory:
        rows = memory.stale_served()
    _emit(
        rows,
        as_json,
        lambda: click.echo(
            "ok: no served artifact depends on withdrawn support"
            if not rows
            else "\n".join(_stale_line(r) for r in rows)
        ),
    )
    if rows:
        sys.exit(4)


@audit.command("exposure")
@click.argument("event_id")
@click.option(
    "--limit",
    type=click.IntRange(1, 1_000_000),
    default=50,
    show_default=True,
    help="Rows printed (most read first); --json lists all.",
)
@JSON_OPTION
@click.pass_context
def audit_exposure(ctx: click.Context, event_id: str, limit: int, as_json: bool) -> None:
    """Who was served what an event withdrew, before its barrier took it out.

    For every withdrawn version that was read: which principal, in which session (an MCP
    session, a LangGraph thread, --session), how many reads, first and last time, most
    read first; then the totals per principal. Ids and times only, never content. The
    reads are matched by version: a withdrawn version is never served again, so whoever
    read it read it before the barrier. Needs the auditor role.
    """
    with _memory(ctx) as memory:
        report = memory.exposure(event_id)

    def human() -> None:
        click.echo(
            f"event {report['event']} ({report['type']}) asked by {report['by'] or '?'}, "
            f"barrier at {report['barrier_at']}: {report['withdrawn']} versions withdrawn, "
            f"{report['exposed_versions']} of them read {report['reads']} times"
        )
        if not report["exposures"]:
            click.echo("  nobody was served any of them")
            return
        click.echo("  per principal (most exposed first):")
        for row in report["principals"]:
            click.echo(
                f"    {row['principal']:<24} {row['reads']:>6} reads  {len(row['versions'])} "
                f"versions  {len(row['sessions'])} sessions  {row['first_at']} .. {row['last_at']}"
            )
        click.echo("  per version, principal and session:")
        for row in report["exposures"][:limit]:
            click.echo(
                f"    {row['uid']}@{row['version']:<4} {row['outcome']:<14} "
                f"{row['principal']:<20} {row['session'] or '-':<38} {row['reads']:>5} reads  "
                f"{row['first_at']} .. {row['last_at']}"
            )
        if len(report["exposures"]) > limit:
            click.echo(f"    ... and {len(report['exposures']) - limit} more (--json lists all)")

    _emit(report, as_json, human)


# ---- sharing: grants and principals --------------------------------------------------------
@cli.group()
def grants() -> None:
    """Who may do what, per namespace: roles granted to principals.

    \b
    Roles: reader   search, get, lineage, export
           writer   record, update, import
           curator  delete (forget), correct, migrate, repair, retry, resume, reindex
           auditor  audit, show, plan, status, exposure
           admin    grants, clear, schema, reindex --compact (and every role above)
    A pattern is a namespace (team-a), a prefix (team-*) or * (all). The owner
    (MEMOREPAIR_OWNER, default the OS account) holds admin everywhere from the CLI,
    stdio MCP and Python; over HTTP a principal holds only what is granted here.
    """


def _roles(text: str) -> list[str]:
    return [r.strip() for r in text.split(",") if r.strip()]


@grants.command("show")
@click.argument("principal", required=False)
@JSON_OPTION
@click.pass_context
def grants_show(ctx: click.Context, principal: str | None, as_json: bool) -> None:
    """The grants you may see (all for the owner), or one principal's; and who you are."""
    with _memory(ctx) as memory:
        rows = memory.grants(principal)
        me = memory.whoami()
    data = {"you": me, "grants": rows}

    def human() -> None:
        click.echo(
            f"you are {me['principal']} ({me['via']}"
            + (", owner: admin everywhere" if me["owner"] else "")
            + f"); roles in {me['namespace']}: {', '.join(me['roles']) or 'none'}"
        )
        _lines(
            (
                f"  {r['principal']:<24} {r['pattern']:<20} {','.join(r['roles']):<32} "
                f"by {r['granted_by']} at {r['granted_at']}"
                for r in rows
            ),
            empty="  no grants",
        )

    _emit(data, as_json, human)


@grants.command("set")
@click.argument("principal")
@click.argument("pattern")
@click.argument("roles")
@JSON_OPTION
@click.pass_context
def grants_set(ctx: click.Context, principal: str, pattern: str, roles: str, as_json: bool) -> None:
    """Give PRINCIPAL exactly ROLES (comma-separated) on namespace PATTERN.

    \b
    memorepair grants set agent-7 team-a reader,writer
    memorepair grants set auditor-bot '*' auditor
    Replaces the roles PRINCIPAL held on PATTERN. Needs admin on a pattern covering it.
    """
    with _memory(ctx) as memory:
        grant = memory.set_grant(principal, pattern, _roles(roles))
    _emit(
        grant,
        as_json,
        lambda: click.echo(
            f"{grant['principal']} holds {','.join(grant['roles'])} on {grant['pattern']}"
        ),
    )


@grants.command("revoke")
@click.argument("principal")
@click.argument("pattern")
@click.argument("roles", required=False)
@JSON_OPTION
@click.pass_context
def grants_revoke(
    ctx: click.Context, principal: str, pattern: str, roles: str | None, as_json: bool
) -> None:
    """Take ROLES (comma-separated; all when omitted) back from PRINCIPAL on PATTERN."""
    with _memory(ctx) as memory:
        left = memory.revoke_grant(principal, pattern, None if roles is None else _roles(roles))
    _emit(
        left,
        as_json,
        lambda: click.echo(
            f"{principal} now holds {','.join(left['roles']) or 'nothing'} on {pattern}"
        ),
    )


@cli.group()
def principals() -> None:
    """API keys for `memorepair mcp --http` (small deployments; JWTs need none of this).

    Keys are kept only as salted Argon2id hashes in MEMOREPAIR_PRINCIPALS_FILE
    (<state>/principals.json, mode 0600). A key is printed once, when it is made.
    Revoking a principal refuses its keys and its JWTs from the next request on.
    Roles come from `memorepair grants`, not from here.
    """


@principals.command("add")
@click.argument("name")
@click.option("--another-key", is_flag=True, help="Give an existing principal one more key.")
@JSON_OPTION
def principals_add(name: str, another_key: bool, as_json: bool) -> None:
    """Make an API key for principal NAME and print it (once: it is not kept)."""
    from memorepair.api import check_principal, key_file, local_principal

    settings = _settings()
    check_principal(name)
    keys = key_file(settings)
    key_id, key = keys.add(name, by=local_principal(settings).name, another_key=another_key)
    data = {"principal": name, "key_id": key_id, "key": key, "file": str(keys.path)}

    def human() -> None:
        click.echo(f"principal {name}: key {key_id} added to {keys.path}")
        click.echo(f"  {key}")
        click.echo("this key is shown once; clients send it as 'Authorization: Bearer <key>'")
        click.echo(f"grant roles with: memorepair grants set {name} NAMESPACE reader,writer")

    _emit(data, as_json, human)


@principals.command("list")
@JSON_OPTION
def principals_list(as_json: bool) -> None:
    """Principals of the principals file: key ids, when added, whether revoked."""
    from memorepair.api import key_file

    rows = [p.as_dict() for p in key_file(_settings()).principals()]
    _emit(
        rows,
        as_json,
        lambda: _lines(
            (
                f"{r['name']:<24} "
                + (f"REVOKED at {r['revoked_at']}" if r["revoked_at"] else "active")
                + f"  keys {', '.join(k['id'] for k in r['keys']) or '-'}  added {r['added_at']}"
                for r in rows
            ),
            empty="no principals (memorepair principals add NAME)",
        ),
    )


@principals.command("revoke")
@click.argument("name")
@click.option("--key", "key_id", help="Revoke only this key (its id), not the principal.")
@JSON_OPTION
def principals_revoke(name: str, key_id: str | None, as_json: bool) -> None:
    """Revoke principal NAME: its keys and its JWTs get 401 from the next request on."""
    from memorepair.api import check_principal, key_file

    check_principal(name)
    info = key_file(_settings()).revoke(name, key_id=key_id).as_dict()
    what = f"key {key_id} of {name}" if key_id else f"principal {name}"
    _emit(info, as_json, lambda: click.echo(f"revoked {what}"))


# ---- agents ------------------------------------------------------------------------------
@cli.command("mcp")
@click.option("--http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on with --http; other than loopback needs --tls-cert/--tls-key.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8765,
    show_default=True,
    help="The port --http listens on.",
)
@click.option(
    "--dev-no-auth",
    is_flag=True,
    help="Development only: serve --http without authentication, on loopback only, as "
    "the local principal (any local user can then act as you).",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PEM certificate for --http over TLS (needed off loopback).",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PEM private key of --tls-cert.",
)
@click.option(
    "--print-config",
    is_flag=True,
    help="Print the `mcpServers` entry a host needs to start this server from any folder "
    "(absolute command, --ns, and the settings of this environment), and exit.",
)
@click.pass_context
def mcp_cmd(
    ctx: click.Context,
    http: bool,
    host: str,
    port: int,
    dev_no_auth: bool,
    tls_cert: Path | None,
    tls_key: Path | None,
    print_config: bool,
) -> None:
    """Serve the memory to MCP clients: stdio, or --http at http://HOST:PORT/mcp.

    stdio acts as the local principal (--principal, default the OS account). --http is
    an OAuth 2.1 resource server: every request needs a bearer token, an API key
    (`memorepair principals add`) or a JWT of MEMOREPAIR_AUTH_ISSUER, and acts as its
    principal with the roles `memorepair grants` gave it; a bad, expired or revoked
    token gets 401. Per-principal request rate, result size, content size and sessions
    are limited (MEMOREPAIR_HTTP_*). README "Sharing memory" sets it up.

    Tools: memory_search, memory_get, memory_record, memory_update, memory_forget,
    memory_correct, tool_register, tool_migrated, repair_plan, repair_status,
    memory_lineage, audit_check, audit_exposure, whoami; each takes a namespace
    (default --ns). Needs the mcp extra (pip install 'memorepair[mcp]').
    docs/agents.md shows an agent using it.

    \b
    memorepair --ns team-a mcp --print-config   # paste into the host's configuration
    """
    if print_config:
        _print_mcp_config(ctx.obj.get("ns"))
        return
    try:
        from memorepair.integrations import mcp as server
    except ImportError as exc:
        raise ConfigError(
            f"`memorepair mcp` needs the mcp extra ({exc}): pip install 'memorepair[mcp]'"
        ) from exc
    if not http and (dev_no_auth or tls_cert or tls_key or host != "127.0.0.1"):
        raise InputError("--host, --dev-no-auth and --tls-* apply to `mcp --http` only")
    options = server.HttpOptions(
        host=host, port=port, dev_no_auth=dev_no_auth, tls_cert=tls_cert, tls_key=tls_key
    )
    server.serve(_settings(), ns=ctx.obj.get("ns"), http=http, options=options)


def _print_mcp_config(ns: str | None) -> None:
    """An MCP host's `mcpServers` entry that starts this very server, wherever it runs."""
    from memorepair.settings import chosen_env_file, connection_env

    env_file = chosen_env_file(_env_file())
    settings = load_settings(env_file=env_file)
    env, notes = connection_env(settings, env_file)
    if settings.uses_local_server:  # no server here, but one answers on the port: that one
        from memorepair.api import local_server

        holder = local_server(settings).port_holder()
        if holder is not None and holder.state_dir is not None:
            env["MEMOREPAIR_STATE_DIR"] = str(holder.state_dir)
            notes.append(
                f"no server runs in {settings.state_dir}; the entry names the one that "
                f"answers on port {holder.port}, in {holder.state_dir}"
            )
    command, *prefix = this_command()
    entry = {
        "command": command,
        "args": [*prefix, "--ns", ns or settings.namespace, "mcp"],
        "env": env,
    }
    click.echo(json.dumps({"mcpServers": {"memory": entry}}, indent=2))
    for note in notes:
        click.echo(f"note: {note}", err=True)


def this_command() -> list[str]:
    """How another process starts this `memorepair`, from any folder: the absolute path
    of the installed script (a host does not share this shell's PATH or virtualenv)."""
    script = Path(sys.argv[0])
    if script.name == "memorepair" and script.is_file():
        return [str(script.absolute())]
    beside = Path(sys.executable).parent / "memorepair"
    if beside.is_file():
        return [str(beside.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "memorepair.cli"]


# ---- the demo ----------------------------------------------------------------------------
class _DemoNarrator:
    """The demo's running commentary (silent under --json, where only the result prints)."""

    def __init__(self, memory: MemoryStore, quiet: bool) -> None:
        self.memory, self.quiet = memory, quiet

    def imported(self, report: Any) -> None:
        if not self.quiet:
            click.echo(
                f"sample memory: {report.written} artifacts in namespace '{self.memory.ns}' "
                f"on {self.memory.store.uri}\n"
            )

    def before(self, name: str, spec: Any) -> None:
        if not self.quiet:
            click.echo(f"$ memorepair repair {name}   # {spec.reason}")

    def after(self, report: Any, erasure: dict[str, Any] | None) -> None:
        if self.quiet:
            return
        _print_report(report.as_dict())
        if erasure is not None:
            scanned = erasure["scanned"]
            click.echo(
                f"  erasure: {erasure['versions']} versions redacted; "
                f"`memorepair audit erasure {report.event}` scanned {scanned['nodes']} "
                f"nodes and {scanned['relationships']} relationships: "
                + ("no copy of the deleted text left" if erasure["ok"] else "COPIES LEFT")
            )
        click.echo("")


@cli.command("demo")
@click.option(
    "--clear", is_flag=True, help="Clear the namespace afterwards (default: keep it to look at)."
)
@JSON_OPTION
@click.pass_context
def demo(ctx: click.Context, clear: bool, as_json: bool) -> None:
    """Repair the included sample memory: one delete, one correct, one migrate event.

    Loads a small travel agent's memory (records, tool-call caches, summaries, prompt,
    chain and neural skills) into the namespace 'demo' (or --ns, which must be empty or
    hold a previous demo's memory: the demo clears its namespace first), then fires the
    three sample events in turn and prints what each withdrew, republished and removed,
    and its cost against Repair-all. Ends with the barrier check over the whole namespace
    and the exact commands that show the result (the audit trail, the erasure proof, the
    cascade as a page); the memory stays in the namespace until the next demo run.
    """
    from memorepair.api import DEMO_NAMESPACE

    ctx.obj["ns"] = ctx.obj.get("ns") or DEMO_NAMESPACE
    with _memory(ctx) as memory:
        narrator = _DemoNarrator(memory, quiet=as_json)
        result = memory.demo(
            clear_after=clear,
            imported=narrator.imported,
            before=narrator.before,
            after=narrator.after,
        )
        ns, settings = memory.ns, memory.settings
    stale, counts = result.stale_served, result.artifacts
    steps = [] if clear else _demo_next_steps(settings, ns)
    data = {
        "namespace": ns,
        "events": [r.as_dict() for r in result.reports],
        "erasures": result.erasures,
        "stale_served": stale,
        "artifacts": counts,
        "next_steps": [command for command, _ in steps],
    }

    def human() -> None:
        click.echo("artifacts by visibility: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        click.echo(
            "barrier check: "
            + (
                "ok, nothing served depends on invalidated support"
                if not stale
                else f"FAILED: {len(stale)} stale artifacts"
            )
        )
        if steps:
            click.echo(
                f"\nThe demo's memory stays in namespace '{ns}' until the next demo. "
                "Look at it (each command runs from any folder):"
            )
            for command, why in steps:
                click.echo(f"  {command}\n      # {why}")

    _emit(data, as_json, human)
    if stale:
        sys.exit(4)


def _demo_next_steps(settings: Settings, ns: str) -> list[tuple[str, str]]:
    """The commands that show what the demo did, exactly as a shell runs them: the
    absolute command, the settings that reach this server (when they differ from a bare
    shell's) and the demo's namespace."""
    import shlex

    from memorepair.settings import chosen_env_file, connection_env, default_state_dir

    env, _ = connection_env(settings, chosen_env_file(_env_file()))
    bare = {
        "MEMOREPAIR_STATE_DIR": str(default_state_dir().absolute()),
        "MEMOREPAIR_BOLT_PORT": str(Settings.model_fields["bolt_port"].default),
    }
    prefix = [
        f"{key}={shlex.quote(value)}"
        for key, value in env.items()
        if bare.get(key) != value and not value.startswith("<your ")
    ]
    run = " ".join([*prefix, *map(shlex.quote, this_command()), "--ns", shlex.quote(ns)])
    page = Path.cwd() / "cascade-sample-delete-hotel.html"
    return [
        (
            f"{run} audit erasure sample-delete-hotel",
            "the delete's erasure record, and the proof that no copy of the deleted text is left",
        ),
        (
            f"{run} show sample-delete-hotel -o {shlex.quote(str(page))}",
            f"the delete's cascade as a page; then open {page.as_uri()}",
        ),
        (
            f"{run} audit lineage sum-zurich",
            "every version of the Zurich summary and the events that rebuilt it",
        ),
        (
            f"{run} search 'hotel in Zurich' -k 3",
            "what an agent finds now: served versions only",
        ),
    ]


#: Exit status when the acting principal lacks the role an operation needs.
DENIED_EXIT = 6


def _exit_code(exc: MemoRepairError) -> int:
    if isinstance(exc, AccessDeniedError):
        return DENIED_EXIT
    return 2 if isinstance(exc, InputError) else 1


def main() -> None:
    debug = "--debug" in sys.argv
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except MemoRepairError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(_exit_code(exc))
    except SystemExit:
        raise


if __name__ == "__main__":
    main()
