"""The background word frequencies shipped with the package, and the share of a question's telling words that no
note of the vault holds."""

from __future__ import annotations

import gzip

import pytest

from companion.recall.background import (
    RARE_ZIPF,
    SCRIPTS,
    UNKNOWN_RARITY,
    Background,
    combine,
    parse_table,
    rare_unknown_share,
    read_table,
    script_of,
    shipped,
)
from companion.recall.fusion import FEATURES, Evidence, Question, features


def test_every_language_of_the_tables_ships_and_reads() -> None:
    for languages in SCRIPTS.values():
        for language in languages:
            table = read_table(language)
            assert table is not None and len(table) > 1000, language


@pytest.mark.parametrize(
    ("common", "rare"),
    [
        ("best", "yolk"),  # English
        ("nicht", "steuererklärung"),  # German
        ("para", "declaración"),  # Spanish
        ("pour", "boulangerie"),  # French
        ("perché", "parcheggio"),  # Italian
        ("это", "прививка"),  # Russian
        ("数据", "疫苗"),  # Chinese, as pairs of characters
    ],
)
def test_a_common_word_is_commoner_than_a_telling_one_in_each_language(common: str, rare: str) -> None:
    background = shipped()
    common_zipf, rare_zipf = background.zipf(common), background.zipf(rare)
    assert common_zipf is not None and rare_zipf is not None
    assert common_zipf > 5.0 > rare_zipf
    assert background.rarity(rare) > background.rarity(common)  # type: ignore[operator]


def test_a_word_no_table_keeps_is_rare_and_a_script_without_tables_has_no_figure() -> None:
    background = shipped()
    assert background.zipf("qzxwvplk") == RARE_ZIPF
    assert script_of("ภาษาไทย") is None and background.zipf("ภาษาไทย") is None  # Thai: no table
    assert background.zipf("2024") is None and background.rarity("2024") is None
    # A character pair across a word's edge (a name and its particle) is missing from the pair tables, which are
    # counted within words, without being rare: it has no figure rather than the rarest one.
    assert background.zipf("京で") is None and background.zipf("있는") is None
    assert background.zipf("数据") is not None


def test_a_missing_language_leaves_its_script_s_other_languages() -> None:
    tables = {"en": {"house": 5.5}, "de": {"haus": 5.6}}
    without_german = combine([("en", tables["en"]), ("de", None)])
    assert without_german.zipf("house") == 5.5
    assert without_german.zipf("haus") == RARE_ZIPF  # no German table: taken as rare, never an error
    nothing = combine([("en", None), ("ru", None)])
    assert nothing.zipf("house") is None and nothing.zipf("дом") is None
    assert read_table("xx") is None
    # Without any figure every word weighs alike: the plain share of the words no note holds.
    assert rare_unknown_share(["house", "garden", "roof"], ["house"], nothing) == pytest.approx(2 / 3)


def test_a_table_is_its_zipf_values_in_tenths_and_their_words() -> None:
    text = gzip.decompress(gzip.compress(b"77 the\n46 pizza naples\n")).decode()
    assert parse_table(text) == {"the": 7.7, "pizza": 4.6, "naples": 4.6}


def test_a_common_word_a_vault_holds_leaves_the_telling_ones_it_lacks_their_weight() -> None:
    background = Background({"latin": {"best": 5.8, "pizza": 4.6, "naples": 4.1}})
    share = rare_unknown_share(["best", "pizza", "naples"], ["best"], background)
    assert share == pytest.approx((3.4 + 3.9) / (2.2 + 3.4 + 3.9))
    assert share > 2 / 3  # more than the plain share: "best" says little of what the question is after
    assert rare_unknown_share(["best", "pizza"], ["best", "pizza"], background) == 0.0
    assert rare_unknown_share([], [], background) == 0.0
    thai = rare_unknown_share(["ภาษา"], [], background)  # no figure: a middling weight, still unknown
    assert thai == 1.0 and UNKNOWN_RARITY > 0


def test_the_rare_unknown_share_is_a_feature_of_the_question_the_same_for_every_candidate() -> None:
    asked = Question(foreign=False, best_cosine=0.4, best_bm25=3.0, low_bm25=1.0, dense_span=0.3, rare_unknown=0.8)
    at = FEATURES.index("rare_unknown")
    near = Evidence(0.4, 3.0, 0.5, False, False, False, 0.0)
    far = Evidence(0.1, None, 0.0, False, False, False, 0.0)
    assert features(near, asked)[at] == features(far, asked)[at] == 0.8
