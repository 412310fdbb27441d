"""Harvesting the tracker: closed issues and answered Discussions made draft FAQ entries a maintainer accepts.

`kb harvest` (kbcli/harvest.py) reads threads from a file of `gh`'s JSON (`threads`) or from a tracker's API
through the `Tracker` protocol (`tracker`; the trackers themselves live in `trackers/`, outside the library), keeps
those the rules choose (`rules`, reading what each comment says: `notes`), cleans the maintainer's answer (`clean`),
and groups the drafts (`drafts`); `run` does one harvest. The drafts wait in the insights database for a
maintainer on `/insights`, who accepts one as a written answer (`kb.written`), edits or dismisses it.
"""

from .drafts import Draft, ThreadQuestion, draft_of, group, match_entries, question_of_thread, same_framework
from .rules import MEMBERS, Choice, Rules, choose, decide, refusal
from .run import Harvest, harvest, last_harvest, remember_harvest
from .threads import MAX_TEXT, Comment, HarvestError, Thread, from_rest, read_thread, read_threads

__all__ = [
    "ThreadQuestion",
    "Choice",
    "Comment",
    "Draft",
    "Harvest",
    "HarvestError",
    "MAX_TEXT",
    "MEMBERS",
    "Rules",
    "Thread",
    "choose",
    "decide",
    "draft_of",
    "from_rest",
    "group",
    "harvest",
    "last_harvest",
    "match_entries",
    "question_of_thread",
    "read_thread",
    "read_threads",
    "refusal",
    "remember_harvest",
    "same_framework",
]
