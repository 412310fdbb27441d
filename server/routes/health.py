"""`GET /healthz`: is the index loaded, how many entries, which model, how old; questions and votes not yet
recorded; what the judge did; the query adapter served."""

from __future__ import annotations

from fastapi import APIRouter

from ..deps import ChatDep, InsightsDep, KBDep
from ..schemas import AdapterOut, HealthOut, JudgeOut

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut)
@router.head("/healthz", include_in_schema=False)  # for uptime monitors: the same headers, no body
async def healthz(kb: KBDep, chat: ChatDep, insights: InsightsDep) -> HealthOut:
    """Entry count, embedding model, the index build served and its age, records waiting and dropped."""
    return HealthOut(
        ok=True,
        entries=len(kb.entries),
        model=kb.meta.model,
        build=kb.path.name,
        built_at=kb.meta.built_at,
        index_age_seconds=round(kb.meta.age_seconds, 1),
        llm=chat.llm is not None,
        insights_waiting=insights.waiting,
        insights_dropped=insights.dropped,
        judge=JudgeOut.model_validate(kb.judging.stats()) if kb.judging is not None else None,
        adapter=AdapterOut.model_validate(adapter.summary()) if (adapter := kb.searcher.adapter) is not None else None,
    )
