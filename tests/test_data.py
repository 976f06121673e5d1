import pytest
import torch

from seqlab import data


@pytest.mark.parametrize("kind", ["copy", "reverse", "sort"])
def test_sequence_task_targets(kind):
    x, y = data.sequence_task(50, 7, kind=kind, vocab=5, split="train", seed=1)
    assert x.shape == y.shape == (50, 7) and x.dtype == torch.long
    assert int(x.min()) >= 0 and int(x.max()) < 5
    expected = {"copy": x, "reverse": x.flip(1), "sort": x.sort(1).values}[kind]
    assert torch.equal(y, expected)


def test_generators_are_deterministic():
    a = data.sequence_task(20, 6, seed=3)
    b = data.sequence_task(20, 6, seed=3)
    c = data.sequence_task(20, 6, seed=4)
    assert torch.equal(a.x, b.x) and not torch.equal(a.x, c.x)


@pytest.mark.parametrize(
    "make",
    [
        lambda split, seed: data.sequence_task(400, 6, vocab=10, split=split, seed=seed),
        lambda split, seed: data.adding_task(300, 10, split=split, seed=seed),
        lambda split, seed: data.copy_memory_task(300, lag=4, k=3, split=split, seed=seed),
        lambda split, seed: data.copy_memory_task(300, lag=6, k=1, noise=True, split=split, seed=seed),
    ],
)
def test_splits_never_overlap_even_across_seeds(make):
    seen = {}
    for split in data.SPLITS:
        for seed in (0, 1):
            x = make(split, seed).x
            rows = {row.numpy().tobytes() for row in x}
            seen.setdefault(split, set()).update(rows)
    assert not seen["train"] & seen["validation"]
    assert not seen["train"] & seen["test"]
    assert not seen["validation"] & seen["test"]


def test_adding_task_structure():
    x, y = data.adding_task(100, 12, split="test", seed=0)
    assert x.shape == (100, 12, 2) and y.shape == (100,)
    markers = x[..., 1]
    assert torch.all(markers.sum(1) == 2)
    assert torch.all(markers[:, :6].sum(1) == 1) and torch.all(markers[:, 6:].sum(1) == 1)
    assert torch.allclose((x[..., 0] * markers).sum(1), y)


def test_copy_memory_structure():
    k, lag, n_symbols = 3, 5, 4
    x, y = data.copy_memory_task(40, lag=lag, k=k, n_symbols=n_symbols, split="validation", seed=2)
    assert x.shape == y.shape == (40, 2 * k + lag)
    assert torch.equal(y[:, -k:], x[:, :k])  # recalled exactly k + lag steps later
    assert torch.all(y[:, :-k] == data.COPY_MEMORY_BLANK)
    assert torch.all(x[:, k + lag] == n_symbols + 1)  # the delimiter
    assert int(x[:, :k].min()) >= 1 and int(x[:, :k].max()) <= n_symbols


def test_copy_memory_split_does_not_depend_on_lag():
    short = data.copy_memory_task(30, lag=2, k=3, split="test", seed=0)
    long = data.copy_memory_task(30, lag=9, k=3, split="test", seed=0)
    assert torch.equal(short.x[:, :3], long.x[:, :3])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: data.sequence_task(0, 5), "positive"),
        (lambda: data.sequence_task(5, 5, split="dev"), "split"),
        (lambda: data.sequence_task(5, 5, kind="shuffle"), "kind"),
        (lambda: data.adding_task(5, 1), "length"),
        (lambda: data.copy_memory_task(5, lag=-1), "lag"),
    ],
)
def test_bad_arguments_are_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_copy_memory_with_noise():
    k, lag = 2, 6
    x, y = data.copy_memory_task(50, lag=lag, k=k, n_symbols=5, noise=True, split="test", seed=1)
    assert torch.equal(y[:, -k:], x[:, :k])
    noise = x[:, k : k + lag]
    assert int(noise.min()) >= 1 and int(noise.max()) <= 5 and len(set(noise.flatten().tolist())) > 1
    assert torch.all(x[:, k + lag] == 6) and torch.all(x[:, k + lag + 1 :] == 0)


def test_number_words_split_is_every_number_of_the_split_once():
    test = data.number_words_split("test", max_value=999)
    drawn = set(data.number_words_task(3000, split="test", max_value=999))
    assert set(test) == drawn and len(test) == len(set(test))  # the draws find no other number
    train = {s for s, _ in data.number_words_split("train", max_value=999)}
    assert not train & {s for s, _ in test}
    assert len(data.number_words_split("test")) >= 1000  # the chapters' held-out set
    with pytest.raises(ValueError, match="split must be one of"):
        data.number_words_split("dev")


def test_number_words_are_spelled_as_num2words_spells_them():
    num2words = pytest.importorskip("num2words").num2words
    for lang in ("en", "de"):
        wrong = [v for v in range(10000) if data._spell(v, lang) != num2words(v, lang=lang)]
        assert not wrong, f"{lang}: {[(v, data._spell(v, lang), num2words(v, lang=lang)) for v in wrong[:3]]}"


@pytest.mark.parametrize("max_value", [9, 10_000, 99.0, True])
def test_number_words_refuse_a_max_value_outside_four_digits(max_value):
    with pytest.raises(ValueError, match=r"max_value must be an int in 10\.\.9999"):
        data.number_words_task(10, max_value=max_value)
    with pytest.raises(ValueError, match=r"max_value must be an int in 10\.\.9999"):
        data.number_words_split("test", max_value=max_value)
