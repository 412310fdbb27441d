"""`GET /metrics`: the process's metrics in Prometheus's text format (server/metrics.py), for operators.

Not under the rate limit (a scraper calls often, from one address); with `KB_METRICS_TOKEN`
set it needs `Authorization: Bearer <token>` (401 without it).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from ..bearer import bearer_matches
from ..deps import SettingsDep
from ..metrics import CONTENT_TYPE

__all__ = ["router"]

router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, settings: SettingsDep) -> Response:
    """The metrics in Prometheus's text format."""
    token = settings.metrics_token
    if token and not bearer_matches((token,), request.headers.get("authorization", "")):
        raise HTTPException(
            401,
            "this needs the metrics token: send the header `Authorization: Bearer <KB_METRICS_TOKEN>`",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE)
