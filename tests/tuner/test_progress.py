"""Progress of long work (tuner._common.progress): a line every tenth where the output is not a
terminal, as pip does, so a batch job's log shows the audit moving; nothing when off."""

from __future__ import annotations

from tuner._common.progress import shown


def test_without_a_terminal_a_line_every_tenth(capsys):
    with shown(40, what="audit fits", unit="fit", enabled=True) as progress:
        for done in range(41):
            progress(done, 40)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10, lines
    assert lines[0].startswith("audit fits: 4 of 40 fits (10%), ")
    assert lines[-1].startswith("audit fits: 40 of 40 fits (100%), ")


def test_switched_off_says_nothing(capsys):
    with shown(40, what="audit fits", unit="fit", enabled=False) as progress:
        for done in range(41):
            progress(done, 40)
    assert capsys.readouterr().out == ""
