"""Tokens: Chinese words from jieba, identifiers whole and in parts."""

from kb.text import JIEBA_RUN, detect_lang, tokenize


def test_flag_is_kept_whole_and_in_parts():
    assert tokenize("--max-tokens-per-gpu") == ["max_tokens_per_gpu", "max", "tokens", "per", "gpu"]


def test_dashes_and_underscores_give_the_same_whole_token():
    assert tokenize("--max-tokens-per-gpu")[0] == tokenize("max_tokens_per_gpu")[0]


def test_code_expression_keeps_segments():
    assert tokenize("self.node2pg[node_rank]") == [
        "self.node2pg[node_rank]",
        "self",
        "node2pg",
        "node_rank",
        "node",
        "pg",
        "rank",
    ]


def test_environment_variable_and_snake_case():
    assert tokenize("RAY_CGRAPH_get_timeout") == ["ray_cgraph_get_timeout", "ray", "cgraph", "timeout"]
    assert tokenize("cget_col_row_stats") == ["cget_col_row_stats", "cget", "col", "row", "stats"]


def test_error_text_splits_camel_case():
    assert tokenize("KeyError: 1") == ["keyerror", "key", "error"]
    assert "channel" in tokenize("ray.exceptions.RayChannelTimeoutError")


def test_chinese_is_segmented_into_words_and_stopwords_dropped():
    assert tokenize("如何开启显存优化") == ["开启", "显存", "优化"]


def test_full_width_text_is_normalised():
    assert tokenize("ＯＯＭ（显存）") == ["oom", "显存"]


def test_english_stopwords_dropped():
    assert tokenize("how do I resume training?") == ["resume", "training"]


def test_detect_lang():
    assert detect_lang("训推一体任务一直卡住") == "zh"
    assert detect_lang("VocabParallelEmbedding 加载 state_dict 报 size mismatch") == "zh"
    assert detect_lang("debug ROLL with a breakpoint") == "en"


def test_a_run_of_chinese_longer_than_any_clause_is_read_in_cuts() -> None:
    run = "".join(chr(0x4E00 + (i * 7919) % 20902) for i in range(3 * JIEBA_RUN))
    cuts = [run[i : i + JIEBA_RUN] for i in range(0, len(run), JIEBA_RUN)]
    assert tokenize(run) == [t for cut in cuts for t in tokenize(cut)]
