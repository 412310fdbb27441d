"""The lexical side: coverage weighted by idf, glossary equivalents, near spellings."""

import numpy as np

from kb.glossary import Glossary, Term
from kb.lexical import LexicalIndex, QueryTerms
from kb.spelling import Spelling, edit_distance
from kb.text import tokenize

ENTRIES = [
    ("如何续训", "设置 --load 为 --save 的目录"),
    ("显存不足 OOM", "调小 max_tokens_per_gpu"),
    ("模型转换", "使用 convert.py 转换模型"),
]


def index() -> LexicalIndex:
    return LexicalIndex([tokenize(q) for q, _ in ENTRIES], [tokenize(a) for _, a in ENTRIES])


def test_coverage_is_the_idf_weighted_share_of_the_query():
    lexical = index()
    coverage = lexical.coverage(QueryTerms(((("max_tokens_per_gpu", 1.0),),)))
    assert np.allclose(coverage, [0.0, 1.0, 0.0])
    # A word no entry has still counts in the query's weight, so nothing covers it all.
    coverage = lexical.coverage(QueryTerms(((("max_tokens_per_gpu", 1.0),), (("banana", 1.0),))))
    assert 0.3 < coverage[1] < 0.7


def test_a_single_chinese_character_no_entry_has_weighs_nothing_a_word_no_entry_has_weighs_most():
    """jieba leaves single characters of phrases it has no word for ("让", "报"): like a single Latin letter, they
    say nothing of the question's subject; a whole word the corpus lacks ("抢占") still counts against every entry."""
    lexical = index()
    alone = lexical.coverage(QueryTerms(((("续训", 1.0),),)))
    with_char = lexical.coverage(QueryTerms(((("续训", 1.0),), (("让", 1.0),))))
    with_word = lexical.coverage(QueryTerms(((("续训", 1.0),), (("抢占", 1.0),))))
    assert alone[0] == with_char[0] == 1.0
    assert with_word[0] < 0.5
    held = lexical.coverage(QueryTerms(((("模型", 1.0),), (("为", 1.0),))))  # a single character an entry has counts
    assert 0.0 < held[0] < 1.0 and 0.0 < held[2] < 1.0


def test_question_field_counts_separately():
    lexical = index()
    question = lexical.coverage(QueryTerms(((("续训", 1.0),),)), lexical.question)
    assert np.allclose(question, [1.0, 0.0, 0.0])


GLOSSARY = Glossary((Term(("续训", "断点续训"), ("resume training", "resume")), Term(("显存",), ("gpu memory",))))


def test_english_query_words_gain_their_chinese_equivalents():
    terms = GLOSSARY.query_terms("how to resume training")
    assert terms.groups == (
        (("resume", 1.0), ("续训", 0.6), ("断点续训", 0.6)),
        (("training", 1.0), ("续训", 0.6), ("断点续训", 0.6)),
    )


def test_gloss_appends_the_other_language():
    assert GLOSSARY.gloss("显存 不够") == "显存 不够\n(gpu memory)"
    assert GLOSSARY.gloss("resume training after a crash") == "resume training after a crash\n(续训)"
    assert GLOSSARY.gloss("nothing here") == "nothing here"


def test_near_spellings_one_edit_away():
    spelling = Spelling(["xformer", "flash_attn", "falsh_attn", "checkpoint"])
    assert spelling.near("xformers") == ["xformer"]
    assert spelling.near("chekpoint") == ["checkpoint"]
    assert spelling.near("flash_attn") == ["falsh_attn"]
    assert spelling.near("oom") == []  # too short to guess
    assert edit_distance("flash", "falsh") == 1
