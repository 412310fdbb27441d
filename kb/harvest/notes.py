"""What a comment says, as the harvest's rules read it: its size in either language, a closing note, news of a fix,
a duplicate, a won't-fix, a pull request named alone, an asker's confirmation, new problem, question, own answer or
fix found elsewhere, a maintainer's word that another's reply is right; and whether a thread is a request.

A comment's own words are its text without the lines it quotes, its links and its mentions (`own_words`). Its size
counts a Han character as `HAN_WEIGHT` Latin ones: 15 Chinese characters say about what 40 English ones do, so one
minimum (`Rules.min_answer`, in Latin characters) fits both languages.

A closing note is a comment whose sentences, once those about closing are set aside ("Closing for lack of activity",
"Seems the issue is fixed. Closing", "Glad that you find it! I will close the issue", "如果还有问题请重新打开",
"feel free to reopen"), say less than an answer's minimum: it is never taken as the answer, whatever its length.
Every pattern runs on one sentence or one paragraph of text already cut, with bounded repeats only.
"""

from __future__ import annotations

import re

__all__ = [
    "HAN_WEIGHT",
    "own_words",
    "unquoted",
    "mentions",
    "quoted",
    "size",
    "sentences",
    "closing_note",
    "announces_fix",
    "promises",
    "unclosed",
    "says_duplicate",
    "wont_fix",
    "names_pr_alone",
    "confirms",
    "checks_status",
    "asks",
    "solved_elsewhere",
    "answers_self",
    "endorses",
    "new_problem",
    "is_request",
    "labelled_duplicate",
    "closes_in_bulk",
    "says_solved",
    "labelled_solved",
    "denies",
    "only_asks",
]

HAN_WEIGHT = 40 / 15  # Latin characters one Han character counts as: 15 of them say what 40 Latin ones do
READ = 5_000  # characters of a comment read
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LINKS = re.compile(r"https?://\S{1,500}")
_MENTIONS = re.compile(r"@[\w-]{1,39}")
_CLAUSE_END = re.compile(r"[，：:]")  # within a sentence: "脚本有问题，已修复：然后按照 README 重新测试能跑通"
_SENTENCE_END = re.compile(r"(?:[.!?;](?:\s|$)|[。！？；\n])+")  # a period inside a link or a version is none
# A sentence about closing the thread, or the courtesies around a close.
_CLOSING = re.compile(
    r"\bclosing\b|^\s*close[sd]?\b|\b(?:i'?ll|i will|we'?ll|we will|let me|let'?s|will|to|can|could|please|so) close\b"
    r"|\bclose (?:this|the issue|it|now|for now|as|since|because)\b|\bre-?open\b|\bfeel free to (?:re-?open|ask|comment|open|reach|let|ping)\b"
    r"|\b(?:as|is|was|marked|being) stale\b|\bstale (?:issue|thread)\b|\b(?:due to|for|of|after) inactivity\b"
    r"|\b(?:lack of|no|without) (?:activity|response|further (?:activity|response|discussion))"
    r"|\bglad\b|\bhappy to (?:hear|help)\b|\bgreat to hear\b|\bgood to (?:hear|know)\b"
    r"|\bseems? (?:like )?(?:the issue |this |it |that )?(?:is |has been |was |got )?(?:fixed|resolved|solved)\b"
    r"|\bthanks? (?:you )?(?:so much |very much |a lot )?for (?:the |your )?(?:\w{1,20} )?(?:report|feedback|flagging|confirm"
    r"|update|letting|reaching|supports?|interest|attention|patience|recognition)"
    r"|\b(?:no|without) (?:reply|response|feedback) from\b|\bhaven'?t heard back\b|\bdid(?:n'?t| not) (?:reply|respond)\b"
    r"|关闭|关掉|关了|重新打开|重开|视为(?:已)?解决|(?:未|没有?)(?:回复|回应|反馈)|长时间(?:没有|未|无)|如果?还有(?:其他|其它)?问题|有问题(?:可以)?(?:再|随时)|欢迎(?:再)?(?:提|反馈)|不客气",
    re.IGNORECASE,
)
# A sentence about what will come ("will be explained in the next report", "we will add it", "后续会支持"): no answer yet.
_LATER = re.compile(
    r"\b(?:will|'ll) be (?:added|supported|released|explained|implemented|fixed|open-?sourced|published|available)\b"
    r"|\b(?:we|i)(?: will|'ll) (?:add|support|release|explain|implement|fix|open-?source|publish|look into|consider)\b"
    r"|\b(?:to-?do|todo) list\b|\bstay tuned\b|\bcoming soon\b|\bin (?:the|a) (?:next|future|later|coming) "
    r"(?:release|version|update|report)\b|\binvestigating\b|\b(?:i'?m|i am|we'?re|we are) (?:now |still |currently )?"
    r"(?:looking into|working on|implement\w{0,6}|investigating)\b|\bin the next (?:few |couple of )?(?:days?|weeks?|months?)\b"
    r"|\bhop(?:e|ing) to (?:get|have|release|add|publish|put)\b|\b(?:we|i) (?:have not|haven't|havent) (?:yet )?(?:tried|tested|compared|checked)\b|\bnote to self\b|\b(?:in|on) (?:our|the) (?:plan|roadmap|to-?do)\b|\b(?:we|i)(?:'re| are| am|'m) working with\b|加到需求列表|后续(?:会|将)|之后(?:会|将)|即将|敬请期待|计划中|(?:我们|我)(?:会|将)(?:尽快)?(?:进行)?(?:修复|支持|添加|更新|实现|开源|发布)|正在(?:排查|调查|修复|开发|实现)",
    re.IGNORECASE,
)
# A sentence saying a fix or support has shipped, or that the problem went away ("just pushed new changes to fix it",
# "the error no longer persists", "已在 ee7dfe7 修复", "支持了"): news of a change, not what a user does about it.
_FIXED_NOTE = re.compile(
    r"\bpushed (?:a |the |new |some )?(?:fix|fixes|changes|commits?|update)\b|\bno longer (?:persists|occurs|happens"
    r"|reproduces|appears|exists|an issue|a problem)\b|\b(?:should|must) (?:be )?(?:fixed|work|resolved) now\b"
    r"|\bhopefully (?:it |this )?(?:works|is fixed|fixed)\b|\b(?:is|has been|was|got) (?:now |already )?(?:fixed|supported)\b"
    r"|已(?:经)?(?:在.{0,60})?(?:修复|支持)|(?:都|已经?)?支持了|修复了|不再(?:出现|复现)",
    re.IGNORECASE,
)
_WONT_FIX = re.compile(
    r"\b(?:can|could) do nothing\b|\bnothing (?:we|i) can do\b|\bnothing (?:can|could) be done\b|\bwon'?t fix\b"
    r"|\bnot (?:going|planning) to (?:fix|support|add|share|release)\b|\bno plans? (?:to|for)\b|\bdo(?:n'?t| not) plan to\b"
    r"|\bout of (?:the )?scope\b"
    r"|\b(?:not related to|unrelated to) (?:the development of )?(?:this|the|our) (?:repo|repository|project|codebase|library)\b"
    r"|\b(?:ask|post|raise|open) (?:it |this |that )?(?:in|on) (?:the |our )?(?:discussions?|forum)\b"
    r"|不会修复|无法修复|暂不支持|不打算支持|(?:暂时|目前)?没有.{0,20}计划|超纲|超出(?:了)?(?:我们|我)?的?(?:能力|范围)|不属于.{0,6}(?:bug|范围)|(?:在|去|到)讨论区"
    r"|(?:到|去|在)\s{0,3}(?:这里|那里|那边|上游|官方)?\s{0,3}提\s{0,3}(?:个|一个)?\s{0,3}issues?|移步.{0,30}?(?:反馈|提问|询问|咨询|提\s{0,3}issue)"
    r"|\b(?:open|raise|file|report|post) (?:an |the |this |it |a new )?(?:issue )?(?:in|on|at|to|with) (?:the )?(?:\S{1,40} )?"
    r"(?:repo|repository|upstream|tracker)\b",
    re.IGNORECASE,
)
# A note sent to many threads at once ("We're closing all old Windows issues", "批量关闭").
_BULK_CLOSE = re.compile(
    r"\bclos(?:e|ing) (?:all|every|many|these|a (?:lot|number) of) (?:the |of the )?(?:old|older|open|stale|inactive"
    r"|outdated|remaining|existing|previous)?\s?(?:\w{1,20} )?(?:issues|tickets|threads)\b|批量关闭|统一关闭",
    re.IGNORECASE,
)
# The asker saying it is solved ("问题已解决", "figured it out"), whoever solved it.
_SOLVED = re.compile(
    r"\b(?:solved|resolved|fixed it|figured (?:it )?out|works now|it works)\b|解决了|已解决|搞定|跑通了",
    re.IGNORECASE,
)
_REF = r"(?:#\d{1,9}|https://github\.com/[\w.-]{1,100}/[\w.-]{1,100}/(?:issues|pull|discussions)/\d{1,9})"
_DUPLICATE = re.compile(
    rf"(?<!not a )(?<!not )(?<!n't a )\bdup(?:e|licate)?d? (?:of|to) {_REF}|\bduplication of\s{{0,3}}(?:#\d|https?://)|\bclos(?:e|ing|ed)\b[^.\n]{{0,40}}\b(?:in favou?r of|because of|as (?:a )?"
    rf"dup(?:e|licate)?(?: of)?) {_REF}|\bsame (?:issue|problem|question|bug) as {_REF}"
    r"|(?<!not )\b(?:is|as) a duplicate\b|\bduplicate (?:issue|question)\b"
    rf"|\bmerg(?:e|ed|ing) (?:this|it)(?: issue| thread)? (?:with|into) <?{_REF}|\b(?:tracked|tracking|track (?:it|this)"
    rf"|continue (?:the discussion |this )?)(?:in|at|on|under) <?{_REF}|(?:合并到|移步(?:到)?)\s{{0,3}}{_REF}"
    rf"|\b(?:discussed|answered|addressed|covered|tracked) (?:here|in|at|under)\s{{0,3}}:?\s{{0,3}}<?{_REF}"
    rf"|与\s{{0,3}}{_REF}\s{{0,3}}重复|重复(?:了)?(?:的)?(?:问题|issue)|\bduplicated?\s{{0,3}}$",
    re.IGNORECASE,
)
_PR_LINK = re.compile(r"https://github\.com/[\w.-]{1,100}/[\w.-]{1,100}/(?:pull|commit)/\w{1,40}|#\d{1,9}\b")
_SHIPPED = re.compile(
    r"\b(?:supported|implemented|fixed|merged|added|landed|resolved|done|released|addressed)\b|支持|修复|合入|合并|已加|发布",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"\b(?:thanks?|thx|ty|works? (?:now|for me|well|fine)|it works|(?:then|and) it works|solved|resolved|fixed it"
    r"|that did it|got it|gotcha|appreciate|that'?s what i (?:want|need)(?:ed)?)\b"
    r"|谢谢|感谢|多谢|解决了|可以了|好了|成功了|明白了|懂了|搞定|跑通了|厉害|解决[^，。,.!?！？\s]{1,12}问题了|问题(?:已经?)?解决了",
    re.IGNORECASE,
)
# A reply opening by saying the answer missed ("应该不是", "不是这个问题", "No, that's not it"): it confirms nothing.
_DENIES = re.compile(
    r"(?:no(?! problem| worries)\b|nope\b|not (?:that|this|the (?:issue|problem|cause|reason))\b"
    r"|that'?s not (?:it|the (?:issue|problem|cause|reason))\b|(?:应该|好像|似乎)?(?:不是|并不是)(?:这个|那个)?(?:问题|原因)?"
    r"|(?:加了|改了|试了|换了)(?:也|还是)一样)",
    re.IGNORECASE,
)
# The asker still trying what was suggested, or about to ("I'll try it", "我看下", "正在尝试用源码编译").
_TRYING = re.compile(
    r"\b(?:i'?ll|i will|will|let me|going to|gonna) (?:try|test|check|look)\b|\b(?:i'?m|i am) (?:trying|testing|checking)\b"
    r"|我(?:先|再)?(?:看下|看看|试试|试一下|去试|再试|研究一下)|正在(?:尝试|试)|稍后(?:试|尝试)",
    re.IGNORECASE,
)
# The asker, after an answer, reporting what still fails or a failure the answer led to.
_FAILURE = re.compile(
    r"\b(?:error|exception|fails?|failed|failure|crash(?:es|ed)?|hangs?|oom|out of memory|traceback|still|another"
    r"|new (?:issue|problem|error)|but now|now (?:i )?(?:get|got|see|have|meet))\b|\b(?:does|did|do)n'?t (?:work|help)\b"
    r"|\bnot work(?:ing)?\b|报错|错误|失败|还是|又出现|新的问题|另一个问题|不行|没用",
    re.IGNORECASE,
)
# A later paragraph of the asker's thanks reporting a new failure.
_FOLLOW_UP = re.compile(
    r"\bfollow-?up\b|\bbut now\b|\bnow,? (?:the \w{1,20} |it |i )?(?:fails?|failed|crash(?:es|ed)?|throws?|hangs?|get|got)\b"
    r"|\b(?:another|a new) (?:issue|problem|error|bug)\b|又出现|又报错|新的问题|另一个问题|现在又|但是现在",
    re.IGNORECASE,
)
_REQUEST_TITLE = re.compile(
    r"^\s{0,5}[\[【(]?\s{0,3}(?:feature(?: request)?|feat|rfc|roadmap|proposal|model request|new model|功能请求|需求"
    r"|新功能)\s{0,3}[\]】):：]|\b(?:new|next|stable) (?:release|version)\b|\brelease request\b"
    r"|\brequest (?:for )?(?:a )?(?:new )?(?:stable )?release\b|\btag a (?:new )?(?:stable )?release\b|发布新版本|发新版"
    r"|\breleas(?:e|ing) (?:the |your |of )?(?:final |trained |pretrained |full )?(?:model )?(?:weights|checkpoints?|models?"
    r"|code|datasets?)\b|\b(?:model |weights? |checkpoints? |code )release\b|(?:啥|什么)时候(?:发布|开源)|何时(?:发布|开源)"
    r"|是否(?:会)?开源|\b(?:time-?line|eta)\b.{0,30}?\b(?:release|code|weights?|checkpoints?|models?)\b",
    re.IGNORECASE,
)
# A maintainer asking whether it is still a problem: never an answer, and the asker's "yes, solved" to it confirms none.
_STATUS = re.compile(
    r"\b(?:is|was) (?:this|it|that|the issue) (?:still|now|fixed|resolved|solved)\b|\bstill (?:an? )?(?:issue|problem)\b"
    r"|\bhave you (?:resolved|solved|fixed)\b|\b(?:does|did) (?:it|this) still\b|\bany (?:update|progress)s?\b"
    r"|是否(?:已经)?解决|还有问题吗|解决了吗|还存在吗",
    re.IGNORECASE,
)
# A question in a reply, by its words rather than its mark: "kvcache 大概会占用多少显存", "how do I set it then".
_QUESTION = re.compile(
    r"多少|怎么|怎样|如何|为什么|为啥|什么原因|哪里|哪个|是否|有没有|能不能|可不可以"
    r"|(?:^|[.!;] )(?:how (?:do|does|can|should|to|much|many)|why (?:do|does|is|are)|is there|are there|can i|could i"
    r"|should i|do i|does it)\b",
    re.IGNORECASE,
)
# The asker saying the fix came from elsewhere: their own doing, or another thread.
_ELSEWHERE = re.compile(
    r"\bby myself\b|\b(?:solved|fixed|resolved|figured out) (?:it |this |the (?:problem|issue) )?(?:myself|on my own)\b"
    r"|自己解决|自行解决|自己搞定|自己找到|自己弄好"
    r"|https://github\.com/[\w.-]{1,100}/[\w.-]{1,100}/(?:issues|pull|discussions)/\d{1,9}|#\d{2,9}\b",
    re.IGNORECASE,
)
# The asker giving the answer himself ("我自己来回答一下", "answering my own question").
_OWN_ANSWER = re.compile(
    r"\banswer(?:ing)? my own question\b|\bi (?:found|figured out|worked out) (?:the|a) (?:solution|fix|way|cause)\b"
    r"|\bi (?:solved|fixed) it (?:by|with)\b|(?:我)?自己(?:来)?回答|自问自答|(?:我)?(?:自己)?找到了?(?:解决)?(?:办法|方法|原因)",
    re.IGNORECASE,
)
# A maintainer saying another's reply is right ("Thanks @x, that is correct. Closing", "他说得对").
_ENDORSES = re.compile(
    r"\b(?:that'?s|that is|this is|it'?s|is|are) (?:correct|right)\b|\bexactly\b"
    r"|\bas (?:\w{1,30} )?(?:said|mentioned|suggested|pointed out)\b|说得对|说的对|是对的|正确|没错",
    re.IGNORECASE,
)
# A thread's description asking for something that is not there yet ("Are there any plans for ...", "是否有计划支持").
_REQUEST_BODY = re.compile(
    r"\b(?:are there|is there|do you have|any) (?:any )?plans? (?:to|for|on)\b|\bwill you (?:support|add)\b"
    r"|\bplease (?:add|support)\b|\bwould be (?:nice|great) (?:to|if you could) (?:add|support)\b"
    r"|\bwhen (?:will|can|would) (?:\S{1,30} ){1,6}be (?:supported|added|available|released)\b"
    r"|(?:是否|有没有)(?:有)?计划|(?:能否|可否|能不能|是否可以|[希期]望(?:能够?|可以)?)(?:支持|增加|添加)|[希期]望(?:能够?|可以)?提供|什么时候.{0,8}支持",
    re.IGNORECASE,
)
DUPLICATE_LABELS = ("duplicate", "duplicated", "重复")
SOLVED_LABELS = ("solved", "resolved", "answered", "已解决")  # a maintainer's word that the thread was answered
REQUEST_LABELS = ("feature request", "feature", "new-model", "new model", "rfc", "roadmap", "release")


def own_words(body: str) -> str:
    """`body` without the lines it quotes, its links and its mentions, each line's spaces squeezed (its first
    `READ` characters); each paragraph on one line, paragraphs apart by a blank line."""
    text = _MENTIONS.sub("", _LINKS.sub("", unquoted(body)))
    paragraphs = (" ".join(p.split()) for p in text.replace("\r", "").split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)


def unquoted(body: str) -> str:
    """`body`'s first `READ` characters without the lines it quotes ("> ...")."""
    return "\n".join(line for line in body[:READ].split("\n") if not line.lstrip().startswith(">"))


def mentions(body: str) -> set[str]:
    """The logins `body` mentions ("@name"), lower case."""
    return {m.group()[1:].lower() for m in _MENTIONS.finditer(body[:READ])}


def quoted(body: str) -> str:
    """The first line `body` quotes ("> ..."), its spaces squeezed, when it says something (8 characters or more)."""
    for line in body[:READ].split("\n"):
        said = " ".join(line.lstrip(" >").split()) if line.lstrip().startswith(">") else ""
        if len(said) >= 8:
            return said
    return ""


def size(text: str) -> float:
    """How much `text` says: its characters but spaces, a Han character counted as `HAN_WEIGHT` Latin ones."""
    han = len(_HAN.findall(text))
    return len(text) - text.count(" ") - han + han * HAN_WEIGHT


def sentences(text: str) -> list[str]:
    """`text`'s sentences (split at . ! ? ; before a space or the end, at their Chinese forms, and at line ends),
    stripped, none empty."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def unclosed(words: str) -> str:
    """`words` without their sentences about closing the thread or about what will come later."""
    return " ".join(s for s in sentences(words) if not _set_aside(s))


def _set_aside(sentence: str) -> bool:
    return _CLOSING.search(sentence) is not None or _LATER.search(sentence) is not None


def promises(words: str) -> bool:
    """Whether a comment says something will come or is under way ("we will add it", "I'm implementing it today")."""
    return any(_LATER.search(s) for s in sentences(words[:READ]))


def closing_note(words: str, minimum: float) -> bool:
    """Whether `words` (a comment's own words) close the thread and, their closing sentences aside, say less than
    `minimum`: "Closing for lack of activity. Feel free to reopen", "Glad that you find it! I will close the issue"."""
    said = sentences(words)
    if not any(_set_aside(s) for s in said):
        return False
    return size(unclosed(words)) < minimum


def announces_fix(words: str, minimum: float) -> bool:
    """Whether `words` (a comment's own words) bring news of a fix and little else: "Apologies - just pushed new
    changes to fix it! Hopefully it works now!", "Upon testing with the current release, the error no longer
    persists. Closing", "支持了 llm和lvlm都支持了". Their sentences (and Chinese clauses) of news, closing and what will
    come aside, they say less than `minimum`: nothing a user does about it."""
    said = [part for s in sentences(words[:READ]) for part in _CLAUSE_END.split(s)]
    if not any(_FIXED_NOTE.search(s) for s in said):
        return False
    return size(" ".join(s for s in said if not _FIXED_NOTE.search(s) and not _set_aside(s))) < minimum


def wont_fix(words: str) -> bool:
    """Whether a comment says nothing will be done ("Closing since we can do nothing about it", "won't fix")."""
    return _WONT_FIX.search(words[:READ]) is not None


def closes_in_bulk(words: str) -> bool:
    """Whether a comment is a note closing many threads at once ("We're closing all old Windows issues")."""
    return _BULK_CLOSE.search(words[:READ]) is not None


def says_solved(body: str) -> bool:
    """Whether a reply says the problem is solved ("问题已解决", "I figured it out"), asking nothing, no new failure."""
    words = own_words(body)[:2000]
    return _SOLVED.search(words) is not None and not asks(body) and not new_problem(body)


def says_duplicate(body: str) -> bool:
    """Whether a comment says its thread repeats another ("Duplicate of #12", "Closing in favor of #6537",
    "与 #3 重复"), read sentence by sentence."""
    return any(_DUPLICATE.search(s) for s in sentences(body[:READ]))


def names_pr_alone(body: str, minimum: float) -> bool:
    """Whether a comment names a pull request (or a commit, or #N) as shipped and says little else: "This is now
    supported: https://github.com/o/r/pull/5", "Fixed in #12". Its words but the reference under `minimum`."""
    if _PR_LINK.search(body[:READ]) is None:
        return False
    words = _PR_LINK.sub("", own_words(body))
    return _SHIPPED.search(words) is not None and size(words) < minimum


def confirms(body: str) -> bool:
    """Whether the asker's reply confirms what it answers: its first paragraph thanks or says it works, is not still
    trying ("多谢，我看下") unless it says it is solved, and nothing failing follows that ("Ok, but it's not installed by
    default; after installing it, then it works" does; "thanks, but now I get a CUDA error" does not), nor does a
    later paragraph report a new failure ("Thank you for the fix! ... Anyway, a follow-up: now the update fails
    with ...")."""
    first, _, rest = own_words(body)[:2000].partition("\n\n")
    found = list(_THANKS.finditer(first))
    if denies(first) or not found or (_TRYING.search(first) is not None and _SOLVED.search(first) is None):
        return False
    return _FAILURE.search(first[found[-1].end() :]) is None and _FOLLOW_UP.search(rest) is None


def new_problem(body: str) -> bool:
    """Whether the asker's reply reports a failure: the first paragraph names one, or a later one a new failure
    ("a follow-up: now the update fails"), and it does not confirm."""
    first, _, rest = own_words(body)[:2000].partition("\n\n")
    failing = _FAILURE.search(first) is not None or _FOLLOW_UP.search(rest) is not None or denies(first)
    return failing and not confirms(body)


def denies(words: str) -> bool:
    """Whether a reply's words open by saying the answer missed ("应该不是 因为…", "不是这个问题。加了也一样。")."""
    return _DENIES.match(words.lstrip(" ,，.。:：!！")) is not None


def only_asks(words: str) -> bool:
    """Whether a comment's own words are one question asking for something ("怎么合并的？", "How do you launch
    it?"): it answers nothing, confirmed or not. A suggestion put as a question ("试试调大 save_steps 呢？") is not one."""
    said = sentences(words[:2000])
    return len(said) == 1 and words.rstrip(" ~").endswith(("?", "？")) and _QUESTION.search(said[0]) is not None


def asks(body: str) -> bool:
    """Whether a reply asks something: it ends in a question, or its words ask ("多少", "how do I ...")."""
    words = own_words(body)[:2000].rstrip(" .。!！~")
    return words.endswith(("?", "？", "吗", "呢", "嘛")) or _QUESTION.search(words) is not None


def solved_elsewhere(body: str, answer: str) -> bool:
    """Whether the asker's "solved" says the fix came from elsewhere than `answer`: by themselves ("solved it
    myself", "自己解决了"), or by another thread or pull request that `answer` does not name ("solved with #142")."""
    for found in _ELSEWHERE.finditer(body[:2000]):
        if not found.group().startswith(("#", "http")) or found.group() not in answer[:READ]:
            return True
    return False


def answers_self(body: str) -> bool:
    """Whether the asker's reply gives the answer himself ("我自己来回答一下，加载模型时指定bf16…", "I solved it by
    ..."): the thread's answer is then his, not the maintainers'."""
    return _OWN_ANSWER.search(own_words(body)[:2000]) is not None


def endorses(words: str) -> bool:
    """Whether a maintainer's comment says an earlier reply is right ("that is correct", "as @x said", "没错")."""
    return _ENDORSES.search(words[:READ]) is not None


def checks_status(words: str) -> bool:
    """Whether a comment asks if the problem is still there ("Is this still an issue?", "have you resolved it?")."""
    return _STATUS.search(words[:READ]) is not None


def labelled_duplicate(labels: tuple[str, ...]) -> bool:
    """Whether a label says the thread repeats another."""
    return any(label.lower() in DUPLICATE_LABELS for label in labels)


def labelled_solved(labels: tuple[str, ...]) -> bool:
    """Whether a label says the thread was answered ("solved"): a short fix then needs no asker's word."""
    return any(label.lower() in SOLVED_LABELS for label in labels)


def is_request(title: str, labels: tuple[str, ...], body: str = "") -> bool:
    """Whether a thread asks for a feature or a release rather than how to do something: its title's tag
    ("[Feature]", "[RFC]"), a release asked for ("Request for new release"), a label saying so, or its description
    asking for what is not there yet ("Are there any plans to support ...", "希望能支持")."""
    if any(label.lower() in REQUEST_LABELS for label in labels):
        return True
    return _REQUEST_TITLE.search(title[:300]) is not None or _REQUEST_BODY.search(body[:2000]) is not None
