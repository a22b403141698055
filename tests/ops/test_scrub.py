"""`reme-mcp scrub` as a person runs it: secrets planted the way an old note would hold them (written
straight to the file, as before a rule existed), found by today's rules, redacted only in files
reme-mcp wrote, and gone from the index too."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ops.forget_helpers import DAY, Setup, hashes, holding

GITHUB = "ghp_" + "R7tK2mQ9xV4bN8cL1pZ6wY3sD5fH0jG2aE9u"  # a GitHub token's shape
AWS = "AKIA" + "QX7M2RZK4TB9WN3P"  # an AWS access key id's shape


def plant(s: Setup, paths: dict[str, str]) -> dict[str, str]:
    """Secrets in a note remember wrote, in a dialog ingest wrote, and in the person's own files."""
    ours = s.ws / paths["kept"]
    ours.write_text(ours.read_text(encoding="utf-8") + f"The CI token is {GITHUB} for now.\n", encoding="utf-8")
    dialog = s.ws / paths["dialog"]
    lines = dialog.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["content"][0]["text"] += f" Use key {AWS} there."
    lines[2] = json.dumps(record, ensure_ascii=False)
    dialog.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mine = s.ws / "digest" / "wiki" / "access.md"
    mine.parent.mkdir(parents=True)
    mine.write_text(f"---\nname: access\ndescription: my notes\n---\nOld key {AWS}\n", encoding="utf-8")
    person_note = s.ws / "daily" / DAY / "by-hand.md"  # a daily note without remember's markers
    person_note.write_text(f"---\nname: by-hand\n---\nmy token {GITHUB}\n", encoding="utf-8")
    s.ok("search", "anything")  # the index takes the planted text, as a server's sync would
    return {
        "ours": paths["kept"],
        "dialog": paths["dialog"],
        "mine": "digest/wiki/access.md",
        "by_hand": f"daily/{DAY}/by-hand.md",
    }


def findings(out: str) -> set[tuple[str, str]]:
    report = json.loads(out)
    return {(f["path"], "redactable" if f["redactable"] else "yours") for f in report["findings"]}


def test_scrub_reports_then_redacts_only_what_reme_mcp_wrote(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    where = plant(s, s.build())
    assert holding(s.index, GITHUB) and holding(s.index, AWS)  # the test can fail: the index holds them now
    before = hashes(s.ws, s.index)

    for args in (("--dry-run",), ()):  # without --yes and a terminal: the report alone
        done = s.reme("scrub", *args)
        assert done.returncode == 1  # findings remain
        assert GITHUB not in done.stdout + done.stderr and AWS not in done.stdout + done.stderr
        assert f"{where['ours']}:" in done.stdout and "a GitHub token (reme-mcp's file: redactable)" in done.stdout
        assert f"{where['mine']}:5: an AWS access key id (your file: edit it by hand)" in done.stdout
        assert ("add --yes" in done.stderr) is (args == ())
        assert hashes(s.ws, s.index) == before

    report = s.reme("scrub", "--dry-run", "--json")
    assert findings(report.stdout) == {
        (where["ours"], "redactable"),
        (where["dialog"], "redactable"),
        (where["mine"], "yours"),
        (where["by_hand"], "yours"),
    }
    dialog_line = {f["path"]: f["line"] for f in json.loads(report.stdout)["findings"]}[where["dialog"]]
    assert dialog_line == 3

    mine_before = (s.ws / where["mine"]).read_bytes(), (s.ws / where["by_hand"]).read_bytes()
    done = s.reme("scrub", "--yes")
    assert done.returncode == 1 and "Redacted 2 files" in done.stdout
    ours = (s.ws / where["ours"]).read_text(encoding="utf-8")
    assert GITHUB not in ours and "The CI token is [redacted: a GitHub token] for now." in ours
    assert "Standups moved" in ours  # the rest of the note as it was
    lines = (s.ws / where["dialog"]).read_text(encoding="utf-8").splitlines()
    assert AWS not in lines[2] and "[redacted: an AWS access key id]" in json.loads(lines[2])["content"][0]["text"]
    assert all(json.loads(line) for line in lines)  # still one JSON message a line
    assert ((s.ws / where["mine"]).read_bytes(), (s.ws / where["by_hand"]).read_bytes()) == mine_before
    # Nothing of the redacted values left derived from reme-mcp's files: the index holds them only
    # from the person's files, which still say them.
    found = json.loads(s.ok("search", GITHUB, "--json"))["results"]
    assert [r["path"] for r in found] == [where["by_hand"]]
    found = json.loads(s.ok("search", AWS, "--json"))["results"]
    assert [r["path"] for r in found] == [where["mine"]]

    again = s.reme("scrub", "--yes", "--json")
    assert again.returncode == 1 and findings(again.stdout) == {(where["mine"], "yours"), (where["by_hand"], "yours")}


def test_a_clean_workspace_scrubs_to_nothing(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.build()
    before = hashes(s.ws)
    done = s.reme("scrub", "--yes")
    assert done.returncode == 0 and done.stdout.strip() == "No secrets found."
    assert hashes(s.ws) == before


def test_redacted_values_leave_the_index_on_disk(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    where = plant(s, s.build())
    (s.ws / where["mine"]).unlink()  # only reme-mcp's files hold secrets now
    (s.ws / where["by_hand"]).unlink()
    s.ok("reindex")
    assert holding(s.index, GITHUB) and holding(s.index, AWS)  # the test can fail
    done = s.reme("scrub", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert holding(s.index, GITHUB) == [] and holding(s.index, AWS) == []
    assert holding(s.ws, GITHUB) == [] and holding(s.ws, AWS) == []
