"""A stand-in for a hosted OpenAI-compatible LLM (none can run here): a FastAPI app the tests serve on loopback.

The model name picks its behaviour: `fences` streams code blocks that stall a highlighter, `broken` answers HTTP 500, `slow` waits 3 s before answering, `stuck`
12 s, `dribble` sends 40 pieces 0.1 s apart, `empty` only `[DONE]`, `pausing` one piece and then nothing
for 30 s (a model thinking); any other streams `GOOD_PIECES`. Asked for a whole reply (`"stream": false`), `condense`
answers `CONDENSED` as JSON, any other a line of prose. Each request is recorded with a `closed`
event, set when its stream ends for any reason (written out, or the reader gone).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


def fake_llm_app(requests: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Any:
        body = await request.json()
        closed = threading.Event()
        requests.append({"body": body, "headers": dict(request.headers), "closed": closed})
        model = body["model"]
        if model == "broken":
            return JSONResponse({"error": {"message": "CUDA out of memory"}}, status_code=500)
        if body.get("stream") is False:  # one reply whole (`LLM.complete`): `condense` a thread's JSON, else prose
            content = json.dumps(CONDENSED, ensure_ascii=False) if model == "condense" else "It depends on the setup."
            return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}

        async def chunks() -> Any:
            try:
                if model in ("slow", "stuck"):
                    await asyncio.sleep(3 if model == "slow" else 12)  # "stuck": far past any timeout set here
                pieces = {"empty": [], "fences": FENCES}.get(model, GOOD_PIECES)
                if model == "dribble":
                    pieces = ["word "] * 40
                for piece in pieces:
                    delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                    yield f"data: {json.dumps(delta)}\n\n"
                    await asyncio.sleep({"dribble": 0.1, "pausing": 30}.get(model, 0.01))
                yield "data: [DONE]\n\n"
            finally:
                closed.set()

        return StreamingResponse(chunks(), media_type="text/event-stream")

    return app


# What the `condense` model replies to a thread: a question and an answer, with what a thread's text may carry.
CONDENSED = {
    "question": "How do I make slime resume from the last checkpoint after a crash?",
    "answer": "Pass `--load` with the `--save` directory; @someone <script>alert(1)</script>it picks the latest step.",
}
# What the `fences` model writes: code blocks that stall Pygments' lexers when read whole: one that loops forever
# (`mcschema`), one of the quadratic ones at the written answers' limit, and tab-newline pairs in Python (11 s whole).
FENCES = [
    "Try this:\n\n```mcschema\n<!--\n```\n\n",
    "```csharp\n" + "/*a" * 6_600 + "\n```\n\n",
    "```python\n" + "\t\n" * 4_990 + "```\n",
]
GOOD_PIECES = ["Set `--load` to the `--save` directory ", "and training resumes [1]. ", "See also [2]."]
