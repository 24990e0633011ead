"""The secret scanner's public helpers (``bbox_lark/secrets/scanner.py``), pinned down where mutation
testing found nothing holding them: the masked form, what is a placeholder, what looks
random, what reads as a name, the prefilter, and each way of replacing a secret (masking,
starring, redacting, a replacement of the caller's) (docs/testing.md, "Mutation testing").

Keys are joined from pieces at run time: no line of this file holds one whole."""

from __future__ import annotations

import re

import pytest

from bbox_lark.secrets.patterns import _after, _generic
from bbox_lark.secrets.scanner import (
    _CASED,
    _CASED_HINTS,
    _FOLDED,
    _FOLDED_HINTS,
    PATTERNS,
    SecretMatch,
    SecretPattern,
    _hint_table,
    _probe,
    count_kinds,
    entropy,
    find_secrets,
    hide_secrets,
    is_identifier,
    is_placeholder,
    looks_random,
    marker,
    mask,
    mask_secrets,
    might_hold_secrets,
    redact_secrets,
    replace_secrets,
)

D, U = "-", "_"
GH = "gh" + "p" + U + "FAKEfake0123456789notARealTokenABC12"
ANT = "sk" + D + "ant" + D + "api03" + D + "FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"
AWS = "AK" + "IA" + "FAKE0123456789AB"
RANDOM = "Fk9q2LmZ7vXw4RtY8pQs"
BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789\n"
    "  -----END RSA PRIVATE KEY-----"
)


# -- mask and marker -------------------------------------------------------------------------


def test_mask_shows_the_tail_from_twelve_hidden_characters() -> None:
    assert mask("abcdefghijkl") == "…kl"
    assert mask("abcdefghijk") == "…"
    assert mask("sk-abcdefghijkl", "sk-") == "sk-…kl"
    assert mask("sk-abcdefghijk", "sk-") == "sk-…"


def test_mask_shows_as_many_tail_characters_as_asked() -> None:
    assert mask("abcdefghijklmnop", "", 3) == "…nop"
    assert mask("abcdefghijklmnop", "ab", 0) == "ab…"
    assert mask("abcdefghijklmnop", "ab", 1) == "ab…p"


def test_marker_names_the_kind() -> None:
    assert marker("github_token") == "[redacted:github_token]"


# -- placeholders, randomness, names ---------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "",
        "ab[redacted:x]cd",
        "Fk9q2L...mZ7v",
        "Fk9q2L…",
        "$Fk9q2LmZ7v",
        "<Fk9q2LmZ7v",
        "{Fk9q2LmZ7v",
        "%Fk9q2LmZ7v",
        "*Fk9q2LmZ7v",
        "Fk9q2LmZ7v}",
        "Fk9q2LmZ7v>",
        "PASSWORD",
        "ChangeMe",
        "None",
        "xxxx",
        "abc",
        "aaaaaaaaaa-bcd",  # the longest piece is one letter repeated
        "Fk9q-aaaaaaaaaa",
    ],
)
def test_a_placeholder_stands_for_a_secret(value: str) -> None:
    assert is_placeholder(value)


@pytest.mark.parametrize("value", ["abcd", "zz-abcdefg", "abc-wxyz", "Fk9q2LmZ7v", "a_b-c_defg"])
def test_a_value_with_four_different_characters_is_not_a_placeholder(value: str) -> None:
    assert not is_placeholder(value)


def test_entropy_in_bits_per_character() -> None:
    assert entropy("abcd") == 2.0
    assert entropy("aabb") == 1.0
    assert entropy("aaab") == pytest.approx(0.8112781244591328)
    assert entropy("Ab3dEf5hIjKlIjKl") == 3.5


def test_looks_random_from_sixteen_characters() -> None:
    assert looks_random("Fk9q2LmZ7vXw4RtY")
    assert not looks_random("Fk9q2LmZ7vXw4Rt")


def test_looks_random_from_an_entropy_of_three_and_a_half_bits() -> None:
    assert looks_random("Ab3dEf5hIjKlIjKl")  # exactly 3.5
    assert not looks_random("Ab3dEf5hIjKlIjKlIjKl")  # 3.37


@pytest.mark.parametrize(
    "value",
    [
        "0x" + "0123456789abcdef0123",
        "0123456789ABCDEF0123",
        "550e8400-e29b-41d4-a716-446655440000",
        "/Fk9q2LmZ7vXw4RtY8pQs",
        "./Fk9q2LmZ7vXw4RtY8pQs",
        "~Fk9q2LmZ7vXw4RtY8pQs",
        "httpFk9q2LmZ7vXw4RtY8pQs",
        "sha256Fk9q2LmZ7vXw4RtY8pQs",
        "sha1Fk9q2LmZ7vXw4RtY8pQs",
        "Fk9q/2LmZ/7vXw/4RtY",  # three slashes: a path
        "FkqLmZvXwRtYpQsAbCdE",  # no digit
        "1234567890+12345678/",  # no letter
        "abc_defgh_ijk2_lmn",  # lower-case words
        "MyDatabasePassword2",
    ],
)
def test_what_does_not_look_random(value: str) -> None:
    assert not looks_random(value)


@pytest.mark.parametrize("value", ["Fk9q2L/mZ7vXw/4RtY8pQs", "ab1cdefghijkl_mnopq", RANDOM])
def test_what_looks_random(value: str) -> None:
    assert looks_random(value)


@pytest.mark.parametrize(
    "value",
    [
        "name=db-credentials-5f7d9c8b6-x2x9z",
        "secret_store.backup",
        "MyDatabasePassword",
        "HTTPServer",
        "SecretKeyRef",
        "api/v2/users",
        "the:cat=sat",
    ],
)
def test_what_reads_as_a_name(value: str) -> None:
    assert is_identifier(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "---",
        "credentials",  # one word: no CamelCase
        "FkqLmZvXw",  # humps of one letter
        "Fk9q2LmZ7vXw4RtY8pQs",
        "db-credentials-5f7d9c8b6x2x9z",  # a random part of 14 characters
        "ab-cd-Fk9q2LmZ",  # words of two letters only
        "abcd-Fk9q2LmZ-x2x9zq",  # less than half of it words
        "Abcdefgh1234",  # four digits after the word
        "Caf\u00e9Latte",  # not ASCII
        "Ab-Cd",
    ],
)
def test_what_does_not_read_as_a_name(value: str) -> None:
    assert not is_identifier(value)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("secret-store123", True),  # up to three digits after a word
        ("secret-store1234", False),
        ("AbCdefg", True),  # two humps: seven letters at least
        ("AbCdef", False),
        ("credentials-store-a1b2c3d4e5", True),  # a suffix of ten characters at most
        ("credentials-store-a1b2c3d4e5f", False),
        ("secret-a1b2c3", True),  # words: half of it at least
        ("abcd-a1b2c3", False),
        ("ab-DbX", False),  # a hump of one letter is no word, even last
    ],
)
def test_the_limits_of_a_name(value: str, name: bool) -> None:
    assert is_identifier(value) is name


def test_lower_case_words_are_a_name_up_to_eleven_characters_each() -> None:
    assert not looks_random("a1b2c3d4e5f-g7h8i9j0k1m")
    assert looks_random("a1b2c3d4e5f6-g7h8i9j0k1m")


# -- the scan --------------------------------------------------------------------------------


def test_a_match_keeps_its_offsets_kind_severity_and_masked_form() -> None:
    text = f"a {GH} b {AWS} c"
    assert find_secrets(text) == [
        SecretMatch("github_token", "error", 2, 2 + len(GH), "ghp_…12"),
        SecretMatch("aws_access_key", "error", 5 + len(GH), 5 + len(GH) + len(AWS), "AKIA…AB"),
    ]


def test_a_generic_secret_is_a_warning_without_its_trailing_punctuation() -> None:
    text = f"password={RANDOM}.,;:! next"
    assert find_secrets(text) == [SecretMatch("generic_secret", "warning", 9, 9 + len(RANDOM), "…Qs")]


def test_a_private_key_shows_its_begin_line_and_no_tail() -> None:
    assert find_secrets("x " + BLOCK) == [
        SecretMatch("private_key", "error", 2, 2 + len(BLOCK), "-----BEGIN RSA PRIVATE KEY-----…")
    ]


def test_the_second_shape_of_a_row_shows_its_prefix_too() -> None:
    pat = "github" + U + "pat" + U + "A" * 22 + U + "b" * 30 + "c1d2e3f4g5h6i7j8k9l0m1n2o3p4q"
    hook = "https://hooks.slack.com/services/T" + "ABCDEF123/B" + "ABCDEF123/aB3dE5gH7jK9mN1pQ3sT5vW7"
    assert [m.masked for m in find_secrets(f"{pat} {hook}")] == [
        "github_pat_…4q",
        "https://hooks.slack.com/services/…W7",
    ]


def test_a_url_password_shows_nothing() -> None:
    text = "postgres://app:Fake0Passw0rd9x@db/x"
    assert [(m.kind, text[m.start : m.end], m.masked) for m in find_secrets(text)] == [
        ("url_password", "Fake0Passw0rd9x", "…")
    ]


def test_an_allowed_value_inside_a_longer_match_is_not_reported() -> None:
    assert find_secrets(f"token: {RANDOM}@host", allowed_secrets={RANDOM}) == []
    assert [m.kind for m in find_secrets(f"x {GH} {AWS}", allowed_secrets={AWS})] == ["github_token"]


def test_overlapping_shapes_keep_the_provider_and_the_first_start() -> None:
    # The key is also a generic token value: the provider row wins.
    text = f"token={GH}"
    assert [(m.kind, m.start) for m in find_secrets(text)] == [("github_token", 6)]


GH2 = "gh" + "p" + U + "OTHERfake0123456789notARealTokenAB99"


def spans(text: str, **options: object) -> list[tuple[str, str]]:
    return [(m.kind, text[m.start : m.end]) for m in find_secrets(text, **options)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"x{GH} {GH2}", [("github_token", GH2)]),  # after a letter, then after a space
        (f"ghp_{'x' * 36} {GH}", [("github_token", GH)]),  # a placeholder, then a key
        (f"password={'a' * 20} password={RANDOM}", [("generic_secret", RANDOM)]),  # not random, then random
        (
            "password=Fk9q2LmZ7vXw4RtY8pQX!",
            [("generic_secret", "Fk9q2LmZ7vXw4RtY8pQX")],
        ),  # only punctuation cut
        (f"api_key={GH}-extra", [("github_token", GH)]),  # the provider wins over a longer generic
        ("-----BEGIN RSA PRIVATE KEY-----", [("private_key", "-----BEGIN RSA PRIVATE KEY-----")]),
        ("x ak" + "ia" + "fake0123456789ab", []),  # a provider's shape is case-sensitive
        ("\u0130 API_KEY=" + RANDOM, [("generic_secret", RANDOM)]),  # lower-casing changes the length
        # a key inside a longer one of an earlier row, then another: the outer one, and the other
        (
            "gh" + "p_AIza" + "FAKEfake0123456789notARealKey012345 Bearer " + RANDOM,
            [
                ("github_token", "gh" + "p_AIza" + "FAKEfake0123456789notARealKey012345"),
                ("generic_secret", RANDOM),
            ],
        ),
        (f"token={GH} Authorization: Bearer {RANDOM}", [("github_token", GH), ("generic_secret", RANDOM)]),
        # decoded longer than as written: the longer
        (GH + "\\u0041BC", [("github_token", GH + "\\u0041BC")]),
        # wrapped from the start of a continuation line, after a line ending in a letter
        (f"u: abc\n  {GH[:20]}\n  {GH[20:]} y", [("github_token", f"{GH[:20]}\n  {GH[20:]}")]),
        # a key within a line, then one wrapped over the next
        (
            f"u: {GH2} x {GH[:20]}\n  {GH[20:]} y",
            [("github_token", GH2), ("github_token", f"{GH[:20]}\n  {GH[20:]}")],
        ),
    ],
)
def test_each_match_of_a_row_is_judged_alone(text: str, expected: list[tuple[str, str]]) -> None:
    assert spans(text) == expected


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("max_tokens=" + RANDOM, []),  # the name only holds the hint
        ("tokens_out=" + RANDOM, []),
        ("tokens_in=9 token=" + RANDOM, ["generic_secret"]),  # the hint is left beside the name
        ("max_tokens=1 secret=" + RANDOM, ["generic_secret"]),  # another hint is left
    ],
)
def test_the_names_that_only_hold_a_hint_do_not_count_as_it(text: str, kinds: list[str]) -> None:
    assert [m.kind for m in find_secrets(text)] == kinds


def test_two_keys_side_by_side_are_both_found() -> None:
    # A key block ends in `-----`, after which a key may start; a key may end right before one.
    assert spans(BLOCK + GH) == [("private_key", BLOCK), ("github_token", GH)]
    assert spans(GH + BLOCK) == [("github_token", GH), ("private_key", BLOCK)]


def test_an_allowed_key_leaves_the_next_one_of_its_row() -> None:
    assert spans(f"{GH} {GH2}", allowed_secrets={GH}) == [("github_token", GH2)]


def test_a_key_right_after_a_letter_is_no_key() -> None:
    assert find_secrets("x" + GH) == []
    assert find_secrets("X" + AWS) == []
    assert [m.start for m in find_secrets("_" + GH)] == [1]


def test_an_escaped_key_is_replaced_whole() -> None:
    written = GH.replace("_", "\\u005f")
    text = f'"k": "{written}"'
    (found,) = find_secrets(text)
    assert (found.kind, text[found.start : found.end], found.masked) == ("github_token", written, "ghp_…12")


def test_a_key_wrapped_over_continuation_lines_spans_both() -> None:
    text = f"t:cat → [ok]\n  x {GH[:20]}\n  {GH[20:]} y\n"
    (found,) = find_secrets(text)
    assert text[found.start : found.end] == f"{GH[:20]}\n  {GH[20:]}"
    assert found.kind == "github_token"


def test_a_generic_secret_never_reaches_over_a_line_break() -> None:
    assert find_secrets(f"t:cat → [ok]\n  password=\n  {RANDOM}\n") == []


def test_the_prefilter_sees_a_hint_hidden_by_an_escape_or_a_wrap() -> None:
    assert not might_hold_secrets("plain words, no hint\n  at all")
    assert not might_hold_secrets("plain words\nno continuation")
    assert might_hold_secrets("sk\\u002dant")
    assert might_hold_secrets("x\n  g\n  hp_x")
    assert might_hold_secrets("TOKEN=1")
    assert might_hold_secrets("tokens_in=1 token=2")
    assert not might_hold_secrets("tokens_in=1 max_tokens=2")


# -- replacing -------------------------------------------------------------------------------


def test_redact_secrets_replaces_each_and_spares_those_kept() -> None:
    text = f"a {GH} b {AWS} c"
    redacted, found = redact_secrets(text)
    assert redacted == "a [redacted:github_token] b [redacted:aws_access_key] c"
    assert [m.kind for m in found] == ["github_token", "aws_access_key"]
    redacted, found = redact_secrets(text, keep=lambda m: m.kind == "github_token")
    assert redacted == f"a {GH} b [redacted:aws_access_key] c"
    assert [m.kind for m in found] == ["aws_access_key"]
    assert redact_secrets(text, keep=lambda m: True) == (text, [])
    assert redact_secrets(text, allowed={GH, AWS}) == (text, [])


def test_replace_secrets_takes_the_callers_replacement_or_the_marker() -> None:
    text = f"a {GH} b {AWS} c"
    found = find_secrets(text)
    assert replace_secrets(text, found, lambda m: f"<{m.kind}>") == "a <github_token> b <aws_access_key> c"
    assert (
        replace_secrets(text, found, lambda m: "" if m.kind == "github_token" else "X")
        == "a [redacted:github_token] b X c"
    )


def test_a_wrapped_key_keeps_its_line_break_a_key_block_does_not() -> None:
    text = f"t:cat → [ok]\n  x {GH[:20]}\n  {GH[20:]} y\n"
    assert redact_secrets(text)[0] == "t:cat → [ok]\n  x [redacted:github_token]\n   y\n"
    assert redact_secrets(f"k {BLOCK} z")[0] == "k [redacted:private_key] z"
    text += "  more\n  and more\n"  # the line breaks after the key are not its own
    assert redact_secrets(text)[0] == "t:cat → [ok]\n  x [redacted:github_token]\n   y\n  more\n  and more\n"


def test_mask_secrets_puts_each_masked_form_in_place() -> None:
    text = f"a {GH} b {ANT} c"
    assert mask_secrets(text) == "a ghp_…12 b sk-ant-…AA c"
    assert mask_secrets("no secret here") == "no secret here"
    assert mask_secrets(f"token={'x' * 20}") == f"token={'x' * 20}"  # a hint, no secret


def test_mask_secrets_leaves_a_key_blocks_begin_line_alone() -> None:
    text = f"-----BEGIN RSA PRIVATE KEY-----\nthen {GH}"
    assert mask_secrets(text) == "-----BEGIN RSA PRIVATE KEY-----\nthen ghp_…12"


def test_mask_secrets_cuts_a_fragment_to_its_prefix() -> None:
    cut = GH[:20]  # too short for a whole token
    assert mask_secrets(f"quoted {cut} here") == f"quoted {cut} here"
    assert mask_secrets(f"quoted {cut} here", fragments=True) == "quoted ghp_… here"
    assert mask_secrets(f"a {GH} and {cut}", fragments=True) == "a ghp_…12 and ghp_…"
    written = cut.replace("_", "\\u005f")
    assert mask_secrets(f"q {written} z", fragments=True) == "q ghp_… z"
    assert mask_secrets("xghp_0123456789abcdef", fragments=True) == "xghp_0123456789abcdef"
    assert mask_secrets("sk-ant-0123456789abcdef", fragments=True) == "sk-ant-…"
    assert mask_secrets("AKIA0123456789AB sk-0123456789abcd", fragments=True) == "AKIA… sk-…"


def test_a_fragment_is_cut_as_written_and_as_decoded() -> None:
    # Only the text as written has it (decoded, a letter comes right before the prefix).
    assert mask_secrets("\\u{41}ghp_0123456789abcdef", fragments=True) == "\\u{41}ghp_…"
    # Both have it from the same start, decoded longer: the longer is cut, and what follows.
    text = "ghp_0123456789abcdef\\u0041BCD and sk-0123456789abcdef"
    assert mask_secrets(text, fragments=True) == "ghp_… and sk-…"


def test_hide_secrets_stars_the_secret_keeping_length_and_lines() -> None:
    text = f"a {GH} b"
    hidden = hide_secrets(text)
    assert hidden == "a ghp_" + "*" * (len(GH) - 6) + "12 b"
    assert hide_secrets("nothing") == "nothing"
    url = "postgres://app:Fake0Passw0rd9x@db/x"
    assert hide_secrets(url) == "postgres://app:" + "*" * 15 + "@db/x"
    block = "-----BEGIN RSA PRIVATE KEY-----\n  MIIEFAKEkeyFORtestsONLY\n  -----END RSA PRIVATE KEY-----"
    assert hide_secrets(block + " z") == (
        "-----BEGIN RSA PRIVATE KEY-----\n  " + "*" * 23 + "\n  ******** *** ******* ******** z"
    )


def test_hide_secrets_leaves_a_key_blocks_begin_line_alone() -> None:
    assert hide_secrets("-----BEGIN RSA PRIVATE KEY-----") == "-----BEGIN RSA PRIVATE KEY-----"
    assert hide_secrets("x -----BEGIN RSA PRIVATE KEY-----\ny") == "x -----BEGIN RSA PRIVATE KEY-----\ny"


def test_hide_secrets_stars_a_short_secret_whole() -> None:
    # A url password shorter than nothing shown: every character starred.
    text = "https://u:Fk9q@example.com"
    assert hide_secrets(text) == "https://u:****@example.com"


def test_count_kinds_counts_and_sorts() -> None:
    found = find_secrets(f"{AWS} {GH} {AWS}")
    assert count_kinds(found) == {"aws_access_key": 2, "github_token": 1}
    assert list(count_kinds(found)) == ["aws_access_key", "github_token"]
    assert count_kinds([]) == {}


# -- the table's builders, which run while the module is imported ---------------------------
# mutmut's mutants only take effect in calls made after the import, so each builder is also
# called here, and what it builds is held to the same behaviour as the table's rows.


def _generic_row(source: str, hint: str) -> SecretPattern:
    """A generic row of the table, or the same row built again now."""
    if source == "table":
        return next(row for row in PATTERNS if row.kind == "generic_secret" and row.hints == (hint,))
    name = {"secret": "secret", "token": "token", "passw": "passw(?:or)?d"}[hint]
    return _generic(name, hint, "d", "e", ("tokens_in",) if hint == "token" else ())


@pytest.mark.parametrize("hint", ["secret", "token", "passw"])
@pytest.mark.parametrize("source", ["table", "built"])
def test_a_generic_row_is_a_random_value_after_a_name(source: str, hint: str) -> None:
    row = _generic_row(source, hint)
    assert (row.kind, row.severity, row.fold, row.test, row.tail) == (
        "generic_secret",
        "warning",
        True,
        "random",
        2,
    )
    assert row.hints == (hint,)
    name = {"secret": "client_secret", "token": "x_token", "passw": "db_password"}[hint]
    pattern = re.compile(row.pattern)
    value = RANDOM.lower()
    for assign in ("=", ":", ":=", "=>", " = ", '"="', "'\t:\t'"):
        match = pattern.search(f"{name}{assign}{value} z")
        assert match is not None and match["secret"] == value, assign
    assert pattern.search(f"{name}.suffix_{'x' * 31}={value}")["secret"] == value  # type: ignore[index]
    assert pattern.search(f"{name}{'x' * 42}={value}") is None  # a name part past 40 characters
    assert pattern.search(f"{name}={value[:15]}") is None  # 15 characters
    assert pattern.search(f"{name}={'a1' * 256}x")["secret"] == "a1" * 256  # type: ignore[index]
    assert pattern.search(f"{name} {value}") is None  # no assignment
    assert pattern.search(f"{name}={value}".upper()) is None  # run on the lower-cased text


def test_a_generic_row_keeps_the_names_that_are_not_it() -> None:
    assert _generic("token", "token", "d", "e", ("tokens_in",)).unless == ("tokens_in",)
    assert _generic("secret", "secret", "d", "e").unless == ()
    row = _generic("secret", "secret", "what it finds", "CLIENT_SECRET=x")
    assert (row.description, row.example) == ("what it finds", "CLIENT_SECRET=x")


@pytest.mark.parametrize("name", ["apikey", "api_key", "api-key", "access_key", "privatekey", "auth-key"])
def test_a_key_named_for_access_is_a_generic_secret(name: str) -> None:
    assert [m.kind for m in find_secrets(f"{name}={RANDOM}")] == ["generic_secret"]
    assert re.compile("key" + _after("apikey", "api_key", "api-key")).search("api-key") is not None


@pytest.mark.parametrize("name", ["monkey", "hotkey", "keyboard", "key_api"])
def test_a_key_named_otherwise_is_not(name: str) -> None:
    assert find_secrets(f"{name}={RANDOM}") == []


def test_after_is_a_look_behind_for_any_of_its_names() -> None:
    pattern = re.compile("key" + _after("api_key", "a.key"))
    assert [bool(pattern.search(text)) for text in ("api_key", "a.key", "abkey", "xkey", "key")] == [
        True,
        True,
        False,  # the dot is escaped
        False,
        False,
    ]
    assert pattern.search("the api_key here").span() == (8, 11)  # type: ignore[union-attr]
    assert _after("ab") == "(?:(?<=ab))"


def test_each_hint_table_lists_a_hint_once_with_the_rows_it_runs() -> None:
    for fold, table in (
        (False, _hint_table(False)),
        (True, _hint_table(True)),
        (False, _CASED),
        (True, _FOLDED),
    ):
        hints = [hint for row in PATTERNS if row.fold == fold for hint in row.hints]
        assert [hint for hint, _ in table] == list(dict.fromkeys(hints))
        for hint, rows in table:
            assert rows == tuple(
                i for i, row in enumerate(PATTERNS) if row.fold == fold and hint in row.hints
            )
    assert dict(_hint_table(False))["sk-"] == (1, 2)  # anthropic and openai
    assert dict(_hint_table(True))["secret"] == (4, 12)  # aws secret key and the generic row


def test_a_probe_starts_at_the_hints_rarest_character() -> None:
    assert _probe("token") == "k(?<=tok)(?=en)"
    assert _probe("eyJ") == "J(?<=eyJ)"
    assert _probe("xox") == "x(?=ox)"
    assert _probe("ZZ") == "Z(?=Z)"  # a tie: the first
    assert _probe("é") == "é"
    assert _probe("aé") == "é(?<=aé)"  # a character outside the table is the rarest


@pytest.mark.parametrize("guarded", [False, True])
def test_a_probe_finds_its_hint_anywhere_and_nothing_else(guarded: bool) -> None:
    for hint in (*_CASED_HINTS, *_FOLDED_HINTS, "ab", "a.b"):
        probe = re.compile(_probe(hint, guarded=guarded))
        for text in (hint, f"x {hint}", f"{hint} x", f"{hint}{hint}"):
            found = probe.search(text)
            assert found is not None, (hint, text)
            assert hint in text[max(0, found.start() - len(hint)) : found.end() + len(hint)]
        for text in (hint[:-1], hint[1:], hint[:-1] + "\n" + hint[-1], ""):
            assert probe.search(text) is None, (hint, text)
    assert re.compile(_probe("a.b")).search("axb") is None


def test_a_guarded_probe_skips_the_names_that_only_hold_its_hint() -> None:
    probe = re.compile(_probe("token", guarded=True))
    for text in ("tokens_in", "tokens_out", "tokens_cached", "max_tokens", "x max_tokens=1 tokens_in=2"):
        assert probe.search(text) is None, text
    for text in (
        "token",
        "tokens",
        "tokens_i",
        "max_token",
        "tokens_ou",
        "max_tokensxtokens_cache",
        "a_tokens",
    ):
        assert probe.search(text) is not None, text
    assert re.compile(_probe("token")).search("tokens_in") is not None  # unguarded
    assert _probe("secret", guarded=True) == _probe("secret")  # no name holds it
