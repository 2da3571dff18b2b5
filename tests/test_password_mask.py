"""A password written into a location is masked whole in every message, whatever it holds, and no
password is left in the connection string handed to DuckDB's ATTACH (the trust hunt's defects 2 and 3).
libpq itself (through psycopg's `conninfo_to_dict`) is the independent reading: what it takes as the
password is what must be masked and handed over as the secret, and what is left must hold none."""

from __future__ import annotations

import string

import pytest

from inductor_warehouse.store.location import (BadConnectionString, conninfo, conninfo_items, locate, redact,
                                               split_password)

HEAD = "dbname=iwh host=db user=iwh"


def assert_hidden(text: str, password: str) -> None:
    """No three characters of the password in a row are left in `text` (its own marker, `Zq7`, is one)."""
    windows = {password[i:i + 3] for i in range(len(password) - 2)}
    left = sorted(w for w in windows if w in text and w not in HEAD)
    assert not left, (left, text)


# the hunt's: a quote followed by . , : ; ) or a space used to end the mask, printing the rest
@pytest.mark.parametrize("password", ["ab'.cd-Zq7TAIL", 'p"ass,Zq7TAIL', "x';Zq7TAIL", "q'):Zq7TAIL", "Zq7q'"])
def test_a_password_holding_a_quote_is_masked_whole(password):
    where = f"ducklake:postgres:{HEAD} password={password}"
    assert locate(where).printable == f"ducklake:postgres:{HEAD} password=***"
    said = f'IO Error: Unable to connect to Postgres at "{HEAD} password={password} port=5432": failed'
    assert redact(said) == f'IO Error: Unable to connect to Postgres at "{HEAD} password=*** port=5432": failed'


def spelled_ways() -> list[tuple[str, str]]:
    """(a connection string, the password libpq reads from it): a quote then every printable
    character, and every printable character then a quote, unquoted where libpq reads that as one
    word, else single-quoted with \\ and ' escaped (docs/team.md)."""
    out = []
    for q in "'\"":
        for c in string.printable:
            for core in (f"Zq7{q}{c}Tq9X", f"Zq7{c}{q}Tq9X", f"Zq7{c}{q}"):
                if any(s in core for s in " \t\n\r\x0b\x0c\\"):
                    out.append((f"password='{core.replace(chr(92), chr(92) * 2).replace(chr(39), chr(92) + chr(39))}'", core))
                else:
                    out.append((f"password={core}", core))
    return out


def test_every_character_around_a_quote_is_masked_and_split_as_libpq_reads_it():
    pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict

    ways = spelled_ways()
    assert len(ways) == 2 * 3 * len(string.printable)
    for pair, password in ways:
        text = f"{HEAD} {pair} sslmode=disable"
        assert conninfo_to_dict(text)["password"] == password, pair  # the test's spelling, as libpq reads it
        assert redact(text) == f"{HEAD} password=*** sslmode=disable", pair
        assert_hidden(redact(f"cannot open the lake ducklake:postgres:{text}: failed"), password)
        rest, secret = split_password(text)
        assert secret == password and rest == f"{HEAD} sslmode=disable", pair
        assert conninfo_to_dict(rest) == {k: v for k, v in conninfo_to_dict(text).items() if k != "password"}


@pytest.mark.parametrize("text", [
    f"{HEAD} password=decoy password=Zq7-REAL",
    f"{HEAD} password = 'decoy one' host=db2 password='Zq7-REAL'",
    "postgresql://iwh:decoy@db/iwh?password=Zq7-REAL",
    "postgresql://iwh:decoy@db/iwh?sslmode=disable&password=Zq7-REAL&password=Zq7-REAL",
])
def test_every_password_key_leaves_the_connection_string_and_libpq_s_last_is_the_secret(text):
    pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict

    rest, secret = split_password(text)
    assert secret == conninfo_to_dict(text)["password"] == "Zq7-REAL"  # libpq takes the last
    assert "password" not in rest and "decoy" not in rest and "Zq7" not in rest, rest
    assert conninfo_to_dict(rest) == {k: v for k, v in conninfo_to_dict(conninfo(text)).items() if k != "password"}
    assert_hidden(redact(text), "Zq7-REAL")
    assert "decoy" not in redact(text)


def test_a_connection_string_libpq_would_refuse_is_refused_without_its_values():
    for bad, why in ((f"{HEAD} password='Zq7 no end", "no closing quote"),
                     (f"{HEAD} password=Zq7 secret", 'without "="')):
        with pytest.raises(BadConnectionString, match=why) as refused:
            split_password(bad)
        assert "Zq7" not in str(refused.value) and "secret" not in str(refused.value)
    # an unclosed quote is masked to the end of the text
    assert redact(f"{HEAD} password='Zq7 no end") == f"{HEAD} password=***"


def test_conninfo_items_read_escapes_as_libpq_does():
    pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict

    for text in (r"user=a\ b password=x\'y host = 'h\\ost' dbname='d b'", "password= host=x", "host='1'port=2"):
        assert {k: v for k, v, _ in conninfo_items(text)} == conninfo_to_dict(text), text
