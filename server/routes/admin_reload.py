"""`POST /admin/reload`: serve the index build `$KB_DATA_DIR/index` now points at, without waiting for the next check."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from kb.errors import BuildRefused

from ..deps import BearerDep, ReloaderDep
from ..schemas import ErrorOut

__all__ = ["router", "ReloadOut"]

router = APIRouter(prefix="/admin", tags=["admin"])


class ReloadOut(BaseModel):
    ok: bool = True
    reloaded: bool = Field(description="false when the linked build was already being served")
    build: str = Field(description="the build now served (as in the `X-KB-Index` header)")
    previous: str
    entries: int


@router.post(
    "/reload",
    response_model=ReloadOut,
    responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut}, 409: {"model": ErrorOut}},
)
async def reload(_: BearerDep, reloader: ReloaderDep) -> ReloadOut:
    """Load the newest index build now (needs `Authorization: Bearer <KB_ADMIN_TOKEN>`).

    A build that cannot be loaded (corrupt, another model) answers 409 with the reason, and
    the build served before keeps serving.
    """
    try:
        outcome = await reloader.reload()
    except BuildRefused as exc:
        raise HTTPException(409, str(exc)) from None
    return ReloadOut(reloaded=outcome.reloaded, build=outcome.build, previous=outcome.previous, entries=outcome.entries)
