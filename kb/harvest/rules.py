"""Which threads become drafts, and which comment is the answer: rules a maintainer reads and sets.

A thread is chosen when:

- it is an issue closed as completed (never `not_planned` or `duplicate`, nor open), or a Discussion
  with an accepted answer;
- it asks how to do something, not for a feature or a release (its title, labels or description,
  `notes.is_request`: a request is taken only with an answer of how to do it today, never when the maintainers say
  it is coming), and neither a label nor a maintainer nor its asker says it repeats another ("Duplicate of #12",
  "This is a duplicate issue", "merging this issue into #41", a `duplicate` label: `notes.says_duplicate`,
  `notes.labelled_duplicate`);
- its answer is written by one of the repository's own people (author association OWNER, MEMBER or
  COLLABORATOR by default: `Rules.associations`, set by `KB_HARVEST_ASSOCIATIONS`), or is another user's answer
  the asker confirmed or the maintainers' last word says is right ("that is correct. Closing"), or a Discussion's
  accepted answer; never by a bot, never by the asker;
- it has `Rules.label` when one is set (a "FAQ" label), and closed after `Rules.closed_after` when set.

The answer is the accepted answer; else the comment a reply confirmed (the last one before the asker's "thanks, that
worked", `notes.confirms`: the one by whom the thanks names, else a maintainer's before another user's, the fullest of
one author's comments in a row; a reply that thanks and then reports a failure is a new problem, one that says the
fix came from elsewhere, "solved it myself", "solved with #142", confirms nothing; another user who had the problem
may confirm it too); else the last maintainer comment before the close that says enough, leaving out later replies
to other users (naming them, or quoting words not the asker's). A comment says enough when its own words, its
sentences about closing or about what will come later or is under way aside, reach `Rules.min_answer`
(`notes.size`: Latin characters, a Han character counting as 40/15 of one), or `Rules.min_confirmed` when a reply
confirmed it or a label says the thread was solved (`notes.labelled_solved`: a one-line command; any words when
both), or when it links to documentation. Never the answer: a closing note whatever its length
(`notes.closing_note`: "Closing for lack of activity", "用户未回复，视为已解决"), a promise ("will be explained in the
next report", "investigating"), a pull request named alone ("This is now supported: <link>", `notes.names_pr_alone`),
news of a fix no reply confirmed and nothing a user does about it ("just pushed new changes to fix it", "the error no
longer persists", "已在 <commit> 修复", `notes.announces_fix`),
a question back to the asker or an invitation to send a fix ("let me know if it works", "could you submit a PR?")
unless a reply confirms it. A thread is not harvested whose last maintainer word says nothing will be done or sends
the question elsewhere (`notes.wont_fix`: "won't fix", "not related to this repo", "在讨论区提出", "超纲"), whose
asker reports a new failure after the answer, asks again with no answer after (`notes.asks`) or gives the answer
himself ("我自己来回答一下", `notes.answers_self`), or where someone
says the answer did not help (another user's bare "same problem" is no such word); nor one the repository's people
opened, one whose asker said it was solved before anyone else spoke (`notes.says_solved`), or one whose last
maintainer word closes many threads at once (`notes.closes_in_bulk`). An asker's thanks while still trying ("多谢，我看下")
confirms nothing (`notes.confirms`). `Choice.signals` says which rule
picked it. With `Rules.confirmed_only` (`KB_HARVEST_EVIDENCE=confirmed`) only an answer someone confirmed is taken
(the asker's thanks, an accepted answer, the maintainers' "that is correct"), never the last word alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..associations import ASSOCIATIONS, MEMBERS, associations_of
from . import notes
from .replies import asks_back, only_me_too, says_still_failing
from .threads import Comment, Thread

__all__ = [
    "ANSWER_KINDS",
    "Rules",
    "Choice",
    "choose",
    "decide",
    "refusal",
    "MEMBERS",
    "ASSOCIATIONS",
    "associations_of",
    "asks_back",
]

# How a draft's answer was chosen (`Choice.signals["answer"]`), each named on /insights: a Discussion's accepted
# answer, the one the asker thanked, another user's the maintainers said is right, the maintainers' last word.
ANSWER_KINDS = ("accepted", "thanked", "endorsed", "last_before_close")
MIN_ANSWER = 40  # Latin characters a comment says (quotes, links, mentions and closing aside) to be an answer
REQUEST_ANSWER = 120  # Latin characters of an answer to a feature or release request: how to do it today
MIN_CONFIRMED = 12  # ... when the asker confirmed it worked: a one-line command, a short Chinese fix
# An answer pointing to something to use today.
_USE = re.compile(r"\b(?:use|using)\b|使用|请用|可以用|参考", re.IGNORECASE)
# A link to documentation or code: not to another thread, a pull request or a commit, nor to an image.
_DOC_LINK = re.compile(
    r"https?://(?!github\.com/[\w.-]{1,100}/[\w.-]{1,100}/(?:pull|issues|commit|discussions)/)"
    r"(?!(?:private-)?user-images\.githubusercontent\.com|github\.com/user-attachments/)\S{1,500}"
)


@dataclass(frozen=True)
class Rules:
    """What a thread needs to become a draft."""

    associations: tuple[str, ...] = MEMBERS
    label: str = ""  # a label the thread must have ("" for any)
    closed_after: float | None = None  # Unix seconds: only threads closed since
    min_answer: int = MIN_ANSWER
    min_confirmed: int = MIN_CONFIRMED
    # Only answers someone confirmed (the asker's thanks, an accepted answer, the maintainers' "that is correct"):
    # never the maintainers' last word alone (`KB_HARVEST_EVIDENCE=confirmed`).
    confirmed_only: bool = False


@dataclass(frozen=True)
class Choice:
    """A thread chosen, with the comment that answers it and why."""

    thread: Thread
    answer: Comment
    signals: dict[str, object] = field(default_factory=dict)


def _answers(comment: Comment, confirmed: bool, rules: Rules, solved: bool = False, thanked: bool = False) -> bool:
    """Whether a maintainer's comment answers: it says enough (less is enough when a reply `confirmed` it or a label
    says the thread was `solved`, anything when both the asker `thanked` it and a label says solved; a link to
    documentation alone is enough), is no closing note nor a pull request named alone, and asks nothing back unless
    a reply confirmed it."""
    words = notes.own_words(comment.body)
    minimum = rules.min_confirmed if confirmed or solved else rules.min_answer
    if notes.only_asks(words):
        return False
    if notes.closing_note(words, minimum) or notes.names_pr_alone(comment.body, rules.min_answer):
        return False
    if notes.checks_status(words) or (not confirmed and notes.announces_fix(words, minimum)):
        return False
    said = notes.size(notes.unclosed(words))
    enough = said >= (1 if thanked and solved else minimum) or _DOC_LINK.search(comment.body[: notes.READ]) is not None
    return enough and (confirmed or not asks_back(comment))


def _how_today(comment: Comment) -> bool:
    """Whether an answer to a request says how to do it today: at length (what will come aside), or by pointing to
    documentation or code to use ("please use <link to the script>")."""
    words = notes.own_words(comment.body)
    if notes.size(notes.unclosed(words)) >= REQUEST_ANSWER:
        return True
    return _DOC_LINK.search(comment.body[: notes.READ]) is not None and _USE.search(words) is not None


def _confirmed(comments: list[Comment], thread: Thread, rules: Rules) -> tuple[set[int], set[int]]:
    """The comments a later reply confirms (`notes.confirms`): by anyone but the repository's people (the asker, or
    another user who had the problem), and those the asker confirms; unless that reply answers a maintainer's "is it
    still a problem?"."""
    confirmed: set[int] = set()
    by_asker: set[int] = set()
    pending: list[int] = []
    speakers = {c.author.lower() for c in comments} | {thread.author.lower()}
    for i, comment in enumerate(comments):
        mine = [p for p in pending if comments[p].author != comment.author]
        if _maintainer(comment, thread, rules) or comment.bot or not mine or not notes.confirms(comment.body):
            pending.append(i)
            continue
        if comment.author == thread.author and notes.solved_elsewhere(comment.body, comments[mine[-1]].body):
            pending = []  # "solved it myself", "solved with #142": no answer here is confirmed
            continue
        if _thanks_elsewhere(comment, speakers):
            pending = []  # "@SkyAerope 谢谢你的方案": thanks to someone whose words are not in the thread
            continue
        if not notes.checks_status(notes.own_words(comments[mine[-1]].body)):
            confirmed.update(mine)  # not a "yes, solved" to "have you solved it?": that confirms no answer
            if comment.author == thread.author:
                by_asker.update(mine)
        pending = []
    return confirmed, by_asker


def _thanks_elsewhere(comment: Comment, speakers: set[str]) -> bool:
    """Whether a confirmation names people (outside the lines it quotes) none of whom spoke in the thread."""
    named = notes.mentions(notes.unquoted(comment.body))
    return bool(named) and not named & speakers


def _still_failing(comments: list[Comment], after: int, thread: Thread, rules: Rules) -> bool:
    """Whether, after comment `after`, someone other than the repository's people says it still fails, or the asker
    reports a new failure."""
    for c in comments[after + 1 :]:
        if c.author == thread.author and notes.new_problem(c.body):
            return True
        words = notes.own_words(c.body)[:2000]
        if _maintainer(c, thread, rules) or (c.author != thread.author and only_me_too(words)):
            continue  # another user's bare "same problem" says nothing of the answer
        if says_still_failing(words):
            return True
    return False


def _left_asking(comments: list[Comment], pick: int, thread: Thread, rules: Rules) -> bool:
    """Whether the asker's last word after answer `pick` asks again ("kvcache 大概会占用多少显存？") and no maintainer
    answered it (a closing note is no answer)."""
    later = [j for j in range(pick + 1, len(comments)) if comments[j].author == thread.author]
    if not later or notes.confirms(comments[later[-1]].body) or not notes.asks(comments[later[-1]].body):
        return False
    return not any(_maintainer(c, thread, rules) and _answers(c, False, rules) for c in comments[later[-1] + 1 :])


def _thanked(comments: list[Comment], before: list[int], thanks: Comment, thread: Thread, rules: Rules) -> Comment:
    """The answer the asker's `thanks` confirms, among the confirmed answers `before` it: the last by someone it names
    ("按照 JulyFinal 的方法解决了"), else the last maintainer's (before another user's), the one that says most of
    that author's comments in a row."""
    said = thanks.body[:2000].lower()
    named = [a for a in before if _names(said, comments[a].author.lower())]
    ours = [a for a in before if _maintainer(comments[a], thread, rules)]
    pick = (named or ours or before)[-1]
    run = [pick]
    while run[0] - 1 in before and comments[run[0] - 1].author == comments[pick].author:
        run.insert(0, run[0] - 1)
    return comments[max(run, key=lambda a: notes.size(notes.own_words(comments[a].body)))]


def _names(text: str, login: str) -> bool:
    """Whether `text` (lower case) names `login` (lower case, three characters or more) as a word of its own."""
    at = text.find(login) if len(login) >= 3 else -1
    while at >= 0:
        edges = (text[at - 1 : at] if at else " ", text[at + len(login) : at + len(login) + 1] or " ")
        if not any((ch.isascii() and ch.isalnum()) or ch in "-_" for ch in edges):
            return True
        at = text.find(login, at + 1)
    return False


def _to_the_asker(comments: list[Comment], answers: list[int], thread: Thread, rules: Rules) -> int:
    """The answer to the asker's question: the last, leaving out the later ones written to another user who spoke in
    the thread (naming them, not the asker) or quoting words that are not the asker's."""
    others = {c.author.lower() for c in comments if not _maintainer(c, thread, rules) and c.author != thread.author}
    asker_said = " ".join(
        notes.own_words(t) for t in [thread.body] + [c.body for c in comments if c.author == thread.author]
    )
    for a in reversed(answers[1:]):
        body = comments[a].body
        named = notes.mentions(body)
        if thread.author.lower() not in named and named & others:
            continue
        quoted = notes.own_words(notes.quoted(body))  # its links and mentions aside, as the asker's words are
        if quoted and quoted not in asker_said:
            continue
        return a
    return answers[0]


def _endorsed(comments: list[Comment], thread: Thread, rules: Rules) -> Comment | None:
    """Another user's answer the maintainers' last word says is right ("Thanks @x, that is correct. Closing"): the
    comment just before it, by neither the asker nor a bot, that says enough and asks nothing."""
    ours = [i for i, c in enumerate(comments) if _maintainer(c, thread, rules)]
    if not ours or ours[-1] == 0:
        return None
    words = notes.own_words(comments[ours[-1]].body)
    if not notes.endorses(words) or notes.size(notes.unclosed(words)) >= rules.min_answer:
        return None
    prev = comments[ours[-1] - 1]
    if prev.bot or prev.author == thread.author or _maintainer(prev, thread, rules) or asks_back(prev):
        return None
    return prev if notes.size(notes.own_words(prev.body)) >= rules.min_answer else None


def refusal(thread: Thread, rules: Rules) -> str:
    """Why `thread` is not harvested ("" when the thread itself qualifies; its answer is looked for next)."""
    if rules.label and rules.label.lower() not in {label.lower() for label in thread.labels}:
        return f"no label {rules.label!r}"
    if rules.closed_after is not None and (thread.closed_at or 0) < rules.closed_after:
        return "closed before the window" if thread.closed_at else "not closed"
    if thread.kind == "discussion":
        return "" if thread.accepted is not None else "no accepted answer"
    if thread.state != "closed":
        return "open"
    if thread.state_reason != "completed":
        return f"closed as {thread.state_reason or 'unknown reason'}"
    if any(notes.says_duplicate(c.body) for c in thread.comments if _own(c, thread, rules)):
        return "a duplicate (the thread says so)"
    if notes.labelled_duplicate(thread.labels):
        return "a duplicate (its label says so)"
    if any(c.author == thread.author and c.association in MEMBERS and not c.bot for c in thread.comments):
        return "opened by the maintainers"
    return ""


def _maintainer(comment: Comment, thread: Thread, rules: Rules) -> bool:
    return comment.association in rules.associations and not comment.bot and comment.author != thread.author


def _someone_else(comment: Comment, thread: Thread) -> bool:
    """Whether a comment is a person's other than the asker's: another user whose answer the asker may confirm."""
    return not comment.bot and comment.author != thread.author


def _own(comment: Comment, thread: Thread, rules: Rules) -> bool:
    """Whether a comment is the asker's or a maintainer's: those whose word on the thread counts."""
    return comment.author == thread.author or _maintainer(comment, thread, rules)


def _signals(thread: Thread, rules: Rules) -> dict[str, object]:
    signals: dict[str, object] = {"kind": thread.kind}
    if thread.state_reason:
        signals["state_reason"] = thread.state_reason
    if thread.linked_prs:
        signals["linked_prs"] = list(thread.linked_prs)
    if rules.label:
        signals["label"] = rules.label
    return signals


def choose(thread: Thread, rules: Rules = Rules()) -> Choice | None:
    """The thread's answer and the signals that chose it, or None when the thread is not one to harvest."""
    chosen = decide(thread, rules)
    return chosen if isinstance(chosen, Choice) else None


def decide(thread: Thread, rules: Rules = Rules()) -> Choice | str:
    """The thread's answer (`choose`'s), or why there is none: `refusal`'s reason, or one of the answer's."""
    why = refusal(thread, rules)
    if why:
        return why
    signals = _signals(thread, rules)
    if thread.accepted is not None:
        if thread.accepted.bot or not thread.accepted.body.strip():
            return "the accepted answer is a bot's or empty"
        return Choice(thread, thread.accepted, signals | {"answer": "accepted", "by": thread.accepted.association})
    comments = [c for c in thread.comments if thread.closed_at is None or (c.created_at or 0) <= thread.closed_at + 60]
    first = next((i for i, c in enumerate(comments) if _someone_else(c, thread)), len(comments))
    if any(notes.says_solved(c.body) for c in comments[:first] if not c.bot):
        return "the asker solved it before anyone answered"
    confirmed, by_asker = _confirmed(comments, thread, rules)
    solved = notes.labelled_solved(thread.labels)
    answers = [
        i
        for i, c in enumerate(comments)
        if (_maintainer(c, thread, rules) or (i in by_asker and _someone_else(c, thread) and not asks_back(c)))
        and _answers(c, i in confirmed, rules, solved, i in by_asker)
    ]
    if notes.is_request(thread.title, thread.labels, thread.body):  # answered at length only: how to do it today
        if any(_maintainer(c, thread, rules) and notes.promises(notes.own_words(c.body)) for c in comments):
            return "a request the maintainers say is coming"
        answers = [i for i in answers if _how_today(comments[i])]
        signals["request"] = True
    if not answers:
        endorsed = None if signals.get("request") else _endorsed(comments, thread, rules)
        if endorsed is not None:
            return Choice(thread, endorsed, signals | {"answer": "endorsed", "by": endorsed.association})
        return "a request with no answer of how to do it" if signals.get("request") else "no maintainer answer"
    return _answer_of(thread, comments, answers, confirmed, rules, signals)


def _answer_of(
    thread: Thread,
    comments: list[Comment],
    answers: list[int],
    confirmed: set[int],
    rules: Rules,
    signals: dict[str, object],
) -> Choice | str:
    """The answer among `answers`: the one the asker thanked, else the answer to the asker's question; or why none."""
    last = max([i for i, c in enumerate(comments) if _maintainer(c, thread, rules)] + answers)
    last_words = notes.own_words(comments[last].body)
    if notes.wont_fix(last_words):
        return "the maintainers' last word: nothing will be done"
    if notes.closes_in_bulk(last_words):
        return "the maintainers' last word closes many threads at once"
    for i in range(len(comments) - 1, 0, -1):  # the asker's last confirmation, and the answer it confirms
        if comments[i].author == thread.author and notes.confirms(comments[i].body):
            before = [a for a in answers if a < i and a in confirmed]
            if before:
                chosen = _thanked(comments, before, comments[i], thread, rules)
                return Choice(thread, chosen, signals | {"answer": "thanked", "by": chosen.association})
            break
    if asks_back(comments[last]) and last not in confirmed:
        return "the maintainers' last word asks back"
    pick = _to_the_asker(comments, answers, thread, rules)
    if _still_failing(comments, pick, thread, rules):
        return "the answer did not help (a later comment says it still fails)"
    if _left_asking(comments, pick, thread, rules):
        return "the asker's question after the answer went unanswered"
    if any(c.author == thread.author and notes.answers_self(c.body) for c in comments):
        return "the asker answered it himself"
    if rules.confirmed_only:
        return "nobody confirmed the answer (only confirmed answers are taken)"
    chosen = comments[pick]
    return Choice(thread, chosen, signals | {"answer": "last_before_close", "by": chosen.association})
