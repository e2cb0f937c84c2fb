"""The refusal both SDK routes of `record` report: a noted error response, kept whole."""

from types import SimpleNamespace

from lesson_lib.capture.refused import Refused, refusal


def _tee(status: int, pieces: list[bytes]) -> SimpleNamespace:
    kept = list(pieces)

    def take() -> list[bytes]:
        out = list(kept)
        kept.clear()
        return out
    return SimpleNamespace(status=status, headers={"content-type": "application/json"},
                           take=take)


def test_an_error_status_is_a_refusal_with_the_whole_body_and_headers():
    tee = _tee(429, [b'{"error":', b' "slow down"}'])
    refused = refusal(tee)
    assert isinstance(refused, Refused)
    assert refused.status_code == 429 and str(refused) == "HTTP 429"
    assert refused.response.content == b'{"error": "slow down"}'
    assert refused.response.headers == {"content-type": "application/json"}
    assert tee.take() == []


def test_no_response_or_a_success_is_no_refusal_and_keeps_the_body():
    for status in (0, 200, 299):
        tee = _tee(status, [b"x"])
        assert refusal(tee) is None
        assert tee.take() == [b"x"]
