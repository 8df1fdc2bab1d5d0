"""Output directories: a command refills what it wrote before and never empties anything else."""

from __future__ import annotations

import pytest

from hyperpod_dpd.cli import main
from hyperpod_dpd.shared.output_dirs import claim, clear
from settings import ConfigError
from tests.conftest import ROOT

OWNED = ("report.json", "pages")


def test_a_new_directory_is_made(tmp_path):
    out = claim(tmp_path / "a" / "b", OWNED, "a report")
    assert out.is_dir() and not any(out.iterdir())  # the write probe is gone


def test_a_directory_it_wrote_before_is_refilled_without_what_is_stale(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "stale.md").write_text("an object since removed")
    (tmp_path / "report.json").write_text("{}")
    clear(claim(tmp_path, OWNED, "a report"), OWNED)
    assert not any(tmp_path.iterdir())


def test_a_directory_holding_anything_else_is_refused_and_kept(tmp_path):
    (tmp_path / "report.json").write_text("{}")
    for name in ("thesis.tex", ".ssh", "a", "b", "c"):
        (tmp_path / name).write_text("the user's")
    with pytest.raises(ConfigError) as refused:
        claim(tmp_path, OWNED, "a report")
    text = str(refused.value)
    assert "--out" in text and str(tmp_path) in text
    assert ".ssh, a, b, c and 1 more" in text and "give a new directory" in text
    assert (tmp_path / "thesis.tex").read_text() == "the user's"
    assert (tmp_path / "report.json").exists()


def test_clear_removes_a_link_and_not_what_it_points_at(tmp_path):
    target = tmp_path / "theirs"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    out = tmp_path / "out"
    out.mkdir()
    (out / "pages").symlink_to(target)
    clear(out, OWNED)
    assert not (out / "pages").exists() and (target / "keep.txt").exists()


def test_clear_keeps_what_it_is_told_to(tmp_path):
    (tmp_path / "pages").mkdir()
    clear(tmp_path, OWNED, keep=("pages",))
    assert (tmp_path / "pages").is_dir()


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--stack", "dev", "--project-dir", str(ROOT), "--out", "{out}"],
        ["policy-pack", "--no-venv", "--out", "{out}"],
    ],
    ids=["plan", "policy-pack"],
)
def test_an_out_with_the_users_files_is_refused_and_nothing_is_removed(argv, tmp_path, capsys):
    """`--out ~` once emptied the home directory (plan removed it whole, the pack emptied it)."""
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    (home / "work" / "notes.md").write_text("months of work")
    (home / ".bashrc").write_text("export A=1")
    code = main([a.format(out=home) for a in argv])
    output = capsys.readouterr().err
    assert code == 2, output
    assert f"--out: got '{home}'; allowed: a new or empty directory" in output
    assert f"it holds .bashrc, work, which `hyperpod-dpd {argv[0]}` does not write" in output
    assert f"nothing in {home} was touched" in output
    assert (home / "work" / "notes.md").read_text() == "months of work"
    assert (home / ".bashrc").read_text() == "export A=1"


def test_the_pack_is_rebuilt_in_place_keeping_its_venv(tmp_path, capsys):
    out = tmp_path / "pack"
    assert main(["policy-pack", "--no-venv", "--out", str(out)]) == 0
    (out / "venv").mkdir()
    (out / "venv" / "marker").write_text("slow to build")
    (out / "policies" / "a_rule_since_deleted.py").write_text("")
    assert main(["policy-pack", "--no-venv", "--out", str(out)]) == 0
    assert (out / "venv" / "marker").exists()
    assert not (out / "policies" / "a_rule_since_deleted.py").exists()
    assert (out / "PulumiPolicy.yaml").is_file()
