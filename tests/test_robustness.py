"""The robustness report's arithmetic (the grid itself is `make robustness`, not a test)."""

from tools.reports import robustness


def _run(chapter, seed, kernel, value, bar=0.99, op=">=", error=None):
    held = value >= bar if op == ">=" else value <= bar
    claim = {"name": "em", "value": value, "bar": bar, "op": op, "held": held, "n": 1012}
    return {"chapter": chapter, "seed": seed, "kernel": kernel, "seconds": 10.0,
            "claims": [claim], "error": error}  # fmt: skip


def test_the_report_gives_min_median_max_and_the_worst_margin():
    runs = [
        _run("luong", s, k, v)
        for (s, k), v in zip([(0, "avx2"), (1, "avx2"), (0, "avx512")], [0.995, 0.999, 0.993])
    ]
    table, ok = robustness.report(runs)
    assert ok
    assert "| luong | em | >= 0.99 | 1012 | 3 | 0.993 | 0.995 | 0.999 | +0.003 |" in table


def test_a_missed_claim_or_a_failed_run_fails_the_report():
    table, ok = robustness.report([_run("luong", 0, "avx2", 0.98)])
    assert not ok and "| -0.01 |" in table
    table, ok = robustness.report([_run("luong", 0, "avx2", 0.995, error="AssertionError: x")])
    assert not ok and "luong (seed 0, avx2) failed: AssertionError: x" in table
    table, ok = robustness.report([_run("lstm", 0, "default", 0.2, bar=0.1, op="<=")])
    assert not ok and "| <= 0.1 |" in table and "| -0.1 |" in table


def test_the_kernels_offered_start_with_the_plainest():
    offered = robustness.kernels()
    assert offered[0] == "default" and set(offered) <= {"default", "avx2", "avx512"}


def test_a_chapters_grid_keeps_every_run_with_its_claims_and_error():
    runs = [_run("luong", 1, "avx2", 0.995), _run("luong", 0, "default", 0.993), _run("lstm", 0, "avx2", 0.9)]
    record = robustness.grid_record(runs, "luong")
    assert record["seeds"] == [0, 1] and record["kernels"] == ["default", "avx2"]
    assert [(r["seed"], r["kernel"]) for r in record["runs"]] == [(0, "default"), (1, "avx2")]
    claim = {"name": "em", "value": 0.993, "bar": 0.99, "op": ">=", "n": 1012}
    assert record["runs"][0]["claims"] == [claim] and record["runs"][0]["error"] is None
    failed = robustness.grid_record(runs + [_run("luong", 2, "avx2", 0.99, error="x")], "luong")
    assert failed["runs"][-1]["error"] == "x" and failed["seeds"] == [0, 1, 2]
    assert robustness.grid_record(runs, "bahdanau") is None


def test_the_stored_spread_reads_every_seed_and_kernel_of_the_newest_content(tmp_path):
    import json
    import os

    from tools.reports import spread

    def log(name, values, mtime):
        path = tmp_path / name
        path.write_text(
            "".join(json.dumps({"name": "gap", "value": v, "bar": 1.0, "op": "<="}) + "\n" for v in values)
        )
        os.utime(path, (mtime, mtime))

    log("block-seed0-default-old.claims", [9.0], 1)  # an older version of the chapter: left out
    log("block-seed0-default-new.claims", [0.3], 2)
    log("block-seed1-avx2-new.claims", [0.1], 3)
    log("block-seed2-avx2-new.claims", [0.2], 4)
    log("lstm-seed0-avx2-new.claims", [5.0], 5)  # another chapter
    stored = spread.collect("block", tmp_path)
    assert stored["seeds"] == [0, 1, 2] and stored["kernels"] == ["avx2", "default"]
    (row,) = stored["rows"]
    assert row == {"name": "gap", "runs": 3, "min": 0.1, "median": 0.2, "max": 0.3, "values": [0.3, 0.1, 0.2]}
