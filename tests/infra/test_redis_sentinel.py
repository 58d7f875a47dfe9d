"""infra/redis_sentinel.py: a `sentinel://` REDIS_URL in the broker's (kombu's) form names the
Sentinels, and the master's database and credentials."""

import pytest

from infra.redis_sentinel import SentinelTarget, parse


def test_it_reads_every_sentinel_of_a_url_in_the_brokers_form():
    url = "sentinel://:s3cret@10.0.0.1:26379;sentinel://10.0.0.2:26380;sentinel://10.0.0.3/2"
    assert parse(url) == SentinelTarget(
        [("10.0.0.1", 26379), ("10.0.0.2", 26380), ("10.0.0.3", 26379)], db=2, password="s3cret"
    )


def test_it_reads_comma_separated_sentinels_and_a_user():
    target = parse("sentinel://app:pw@h1:1,h2:2,[::1]:3/0")
    assert target.sentinels == [("h1", 1), ("h2", 2), ("::1", 3)]
    assert target.master_options() == {"db": 0, "username": "app", "password": "pw"}


@pytest.mark.parametrize("url", ["sentinel://", "sentinel://h1:1;redis://h2:2"])
def test_it_refuses_a_url_that_names_no_sentinel_or_mixes_schemes(url):
    with pytest.raises(ValueError):
        parse(url)
