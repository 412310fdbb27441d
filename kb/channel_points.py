"""The precision a tracker's bot answers at when no setting names one, where both the app's channels and `kb eval`
(which does not load the app) read it.

A bot commenting in public answers only when 9 answers in 10 at its point were right; in suggest mode its answers
wait for a maintainer on /insights (a click, not a public mistake), so it drafts from a lower point.
`KB_CHANNEL_PRECISION` (`github=0.95`) sets the channel's own point; suggest mode takes the lower of the two.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["PUBLIC_COMMENT_PRECISION", "DRAFT_PRECISION", "tracker_points"]

PUBLIC_COMMENT_PRECISION = 0.9  # a comment on an issue is public: answer only when 9 in 10 such answers are right
DRAFT_PRECISION = 0.7  # a draft waits for a maintainer: right 7 times in 10 is worth a click


def tracker_points(channel_precisions: Mapping[str, float], channel: str) -> dict[str, float]:
    """A tracker bot's two points, comment mode's and suggest mode's, given KB_CHANNEL_PRECISION's by channel."""
    comment = channel_precisions.get(channel, PUBLIC_COMMENT_PRECISION)
    return {f"{channel} comment mode": comment, f"{channel} suggest mode": min(comment, DRAFT_PRECISION)}
